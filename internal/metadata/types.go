package metadata

import "fmt"

// RecordType is a metadata record's apiKey (Kafka's MetadataRecordType).
type RecordType int16

// The metadata record types. Keys 6 (AccessControlRecord, before 3.5), 13 (never
// assigned) and 16 (RemoveFeatureLevelRecord, 3.0-3.2) are not readable by Kafka 4.x
// and are unknown here too.
const (
	TypeUnknown                   RecordType = -1
	TypeRegisterBroker            RecordType = 0
	TypeUnregisterBroker          RecordType = 1
	TypeTopic                     RecordType = 2
	TypePartition                 RecordType = 3
	TypeConfig                    RecordType = 4
	TypePartitionChange           RecordType = 5
	TypeFenceBroker               RecordType = 7
	TypeUnfenceBroker             RecordType = 8
	TypeRemoveTopic               RecordType = 9
	TypeDelegationToken           RecordType = 10
	TypeUserScramCredential       RecordType = 11
	TypeFeatureLevel              RecordType = 12
	TypeClientQuota               RecordType = 14
	TypeProducerIDs               RecordType = 15
	TypeBrokerRegistrationChange  RecordType = 17
	TypeAccessControlEntry        RecordType = 18
	TypeRemoveAccessControlEntry  RecordType = 19
	TypeNoOp                      RecordType = 20
	TypeZkMigrationState          RecordType = 21
	TypeRemoveUserScramCredential RecordType = 22
	TypeBeginTransaction          RecordType = 23
	TypeEndTransaction            RecordType = 24
	TypeAbortTransaction          RecordType = 25
	TypeRemoveDelegationToken     RecordType = 26
	TypeRegisterController        RecordType = 27
	TypeClearElr                  RecordType = 28
	TypeUnregisterController      RecordType = 29
	maxType                                  = TypeUnregisterController
)

type typeInfo struct {
	name       string // Kafka's JSON name
	enum       string // Kafka's enum constant, as kafka-dump-log prints it
	maxVersion int16
}

var types = [...]typeInfo{
	TypeRegisterBroker:            {"RegisterBrokerRecord", "REGISTER_BROKER_RECORD", 4},
	TypeUnregisterBroker:          {"UnregisterBrokerRecord", "UNREGISTER_BROKER_RECORD", 0},
	TypeTopic:                     {"TopicRecord", "TOPIC_RECORD", 0},
	TypePartition:                 {"PartitionRecord", "PARTITION_RECORD", 2},
	TypeConfig:                    {"ConfigRecord", "CONFIG_RECORD", 0},
	TypePartitionChange:           {"PartitionChangeRecord", "PARTITION_CHANGE_RECORD", 2},
	6:                             {},
	TypeFenceBroker:               {"FenceBrokerRecord", "FENCE_BROKER_RECORD", 0},
	TypeUnfenceBroker:             {"UnfenceBrokerRecord", "UNFENCE_BROKER_RECORD", 0},
	TypeRemoveTopic:               {"RemoveTopicRecord", "REMOVE_TOPIC_RECORD", 0},
	TypeDelegationToken:           {"DelegationTokenRecord", "DELEGATION_TOKEN_RECORD", 0},
	TypeUserScramCredential:       {"UserScramCredentialRecord", "USER_SCRAM_CREDENTIAL_RECORD", 0},
	TypeFeatureLevel:              {"FeatureLevelRecord", "FEATURE_LEVEL_RECORD", 0},
	13:                            {},
	TypeClientQuota:               {"ClientQuotaRecord", "CLIENT_QUOTA_RECORD", 0},
	TypeProducerIDs:               {"ProducerIdsRecord", "PRODUCER_IDS_RECORD", 0},
	16:                            {},
	TypeBrokerRegistrationChange:  {"BrokerRegistrationChangeRecord", "BROKER_REGISTRATION_CHANGE_RECORD", 3},
	TypeAccessControlEntry:        {"AccessControlEntryRecord", "ACCESS_CONTROL_ENTRY_RECORD", 0},
	TypeRemoveAccessControlEntry:  {"RemoveAccessControlEntryRecord", "REMOVE_ACCESS_CONTROL_ENTRY_RECORD", 0},
	TypeNoOp:                      {"NoOpRecord", "NO_OP_RECORD", 0},
	TypeZkMigrationState:          {"ZkMigrationStateRecord", "ZK_MIGRATION_STATE_RECORD", 0},
	TypeRemoveUserScramCredential: {"RemoveUserScramCredentialRecord", "REMOVE_USER_SCRAM_CREDENTIAL_RECORD", 0},
	TypeBeginTransaction:          {"BeginTransactionRecord", "BEGIN_TRANSACTION_RECORD", 0},
	TypeEndTransaction:            {"EndTransactionRecord", "END_TRANSACTION_RECORD", 0},
	TypeAbortTransaction:          {"AbortTransactionRecord", "ABORT_TRANSACTION_RECORD", 0},
	TypeRemoveDelegationToken:     {"RemoveDelegationTokenRecord", "REMOVE_DELEGATION_TOKEN_RECORD", 0},
	TypeRegisterController:        {"RegisterControllerRecord", "REGISTER_CONTROLLER_RECORD", 0},
	TypeClearElr:                  {"ClearElrRecord", "CLEAR_ELR_RECORD", 0},
	TypeUnregisterController:      {"UnregisterControllerRecord", "UNREGISTER_CONTROLLER_RECORD", 0},
}

// Known reports whether t is a record type this package decodes.
func (t RecordType) Known() bool {
	return t >= 0 && t <= maxType && types[t].name != ""
}

// String returns Kafka's name for the record type ("PartitionChangeRecord"), or
// "Unknown(N)".
func (t RecordType) String() string {
	if !t.Known() {
		return fmt.Sprintf("Unknown(%d)", int16(t))
	}
	return types[t].name
}

// EnumName returns the name kafka-dump-log prints ("PARTITION_CHANGE_RECORD"), or
// "UNKNOWN".
func (t RecordType) EnumName() string {
	if !t.Known() {
		return "UNKNOWN"
	}
	return types[t].enum
}

// MaxVersion is the newest version of t this package reads (Kafka 4.4's
// validVersions), or -1 for an unknown type.
func (t RecordType) MaxVersion() int16 {
	if !t.Known() {
		return -1
	}
	return types[t].maxVersion
}

// ParseRecordType returns the type whose String or EnumName is s.
func ParseRecordType(s string) (RecordType, bool) {
	for i, ti := range types {
		if ti.name != "" && (ti.name == s || ti.enum == s) {
			return RecordType(i), true
		}
	}
	return TypeUnknown, false
}
