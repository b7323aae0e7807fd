package observer

import (
	"errors"
	"log/slog"

	"github.com/kraftwatch/kraftwatch/image"
	"github.com/kraftwatch/kraftwatch/internal/metadata"
)

// Provenance says where in the metadata log an update ends: the offset of its last
// record, the leader epoch of the batch holding it, and that batch's append time.
type Provenance = image.Provenance

// Entry is one metadata record with its log offset.
type Entry struct {
	Offset  int64
	Version int16
	Record  metadata.Record
}

// A Unit is what the observer hands on at once: what Kafka's MetadataBatchLoader
// publishes as one image when it reads the log one batch at a time (as
// kafka-metadata-shell does). A unit ends at the end of a record batch, unless a
// metadata transaction is open there, and just before a BeginTransactionRecord that is
// not the first record of its batch. So a unit holds the records of one batch, or of
// a part of one cut at a Begin, or a whole committed transaction (BeginTransactionRecord
// to EndTransactionRecord, which may span batches) with the records after its End in
// the End's batch. The markers themselves are never in Entries. Unlike Kafka's
// loader, the records of an aborted transaction are never in a unit, whatever follows
// the Abort (docs/metadata-log.md#transactions).
type Unit struct {
	// Entries are the records in offset order. Records of unknown type or version, and
	// records that do not decode, are not here (they are logged and counted). The
	// Observer reuses their memory: in an Update they are valid until the Handler
	// returns; copy what you keep.
	Entries []Entry
	// Provenance is the position of the unit's last record: the last offset of the
	// batch, or the offset before a Begin that ends the unit.
	Provenance Provenance
	// Transaction marks a unit that holds a whole committed metadata transaction.
	Transaction bool
	// Aborted marks a unit in which an AbortTransactionRecord ended a transaction: the
	// transaction's records are dropped; Entries holds only the records after the
	// Abort in its batch.
	Aborted bool
	// Control marks a control batch (LeaderChange, KRaftVersion, Voters): no metadata
	// records, but the log moved on.
	Control bool
	// Coalesced marks the Unit of a catch-up's Update: Update.Units consecutive units
	// without a transaction marker, replayed into one image as they were read (their
	// records are not kept: Entries is empty), ending at Provenance.
	Coalesced bool
}

// decoder decodes metadata record values, skipping (with a log line and a count) the
// ones it cannot use.
type decoder struct {
	log *slog.Logger
	m   *Metrics
	// seen holds the kinds logged: {apiKey, version} of unknown records, {-1-apiKey,
	// version} of records with unknown tagged fields.
	seen map[[2]int]bool
	dec  metadata.Decoder
	// batch, when set, decodes the records that are not reused: they are valid until
	// its Reset (the follower's units, handed on before it resets it).
	batch *metadata.BatchDecoder
}

// decode decodes one record value at offset. With reuse, the record is only valid until
// the next call (snapshot loading); otherwise it is newly allocated, or valid until
// d.batch is reset. ok is false for a record that must be skipped.
func (d *decoder) decode(value []byte, offset int64, file string, reuse bool) (metadata.Record, int16, bool) {
	var rec metadata.Record
	var v int16
	var err error
	unknownTags := 0
	if reuse {
		rec, v, err = d.dec.Decode(value)
		unknownTags = d.dec.UnknownTags()
	} else if d.batch != nil {
		rec, v, err = d.batch.Decode(value)
		unknownTags = d.batch.UnknownTags()
	} else {
		rec, v, unknownTags, err = metadata.DecodeCounting(value)
	}
	return d.result(rec, v, err, unknownTags, offset, file)
}

// result is what decode gives for a record decoded elsewhere (the prefetcher's
// predecoded records): the record, or with err set a skip, logged and counted. A
// record with unknown tagged fields (unknownTags, a newer Kafka's) is used without
// them; they are counted and logged once per record type and version.
func (d *decoder) result(rec metadata.Record, v int16, err error, unknownTags int, offset int64, file string) (metadata.Record, int16, bool) {
	if err == nil {
		if unknownTags > 0 {
			d.m.UnknownTaggedFields.Add(int64(unknownTags))
			if key := [2]int{-1 - int(rec.Type()), int(v)}; !d.seen[key] {
				if d.seen == nil {
					d.seen = map[[2]int]bool{}
				}
				d.seen[key] = true
				d.log.Warn("skipping unknown tagged fields of metadata records (logged once per type and version)",
					"record_type", rec.Type().String(), "version", v, "fields", unknownTags, "offset", offset, "file", file)
			}
		}
		return rec, v, true
	}
	var de *metadata.DecodeError
	if errors.As(err, &de) && de.Unknown() {
		d.m.UnknownRecords.Add(1)
		key := [2]int{de.APIKey, de.Version}
		if d.seen == nil {
			d.seen = map[[2]int]bool{}
		}
		if !d.seen[key] {
			d.seen[key] = true
			d.log.Warn("skipping metadata records of unknown type or version (logged once per type and version)",
				"api_key", de.APIKey, "version", de.Version, "offset", offset, "file", file, "error", err)
		}
		return nil, 0, false
	}
	d.m.CorruptRecords.Add(1)
	d.log.Error("skipping a metadata record that does not decode", "offset", offset, "file", file, "error", err)
	return nil, 0, false
}
