package metadata

import (
	"reflect"
	"testing"
)

func TestTextRoundTrip(t *testing.T) {
	for _, typ := range allTypes() {
		for v := int16(0); v <= typ.MaxVersion(); v++ {
			rec := samples(typ, v)
			line := FormatText(rec, nil)
			got, err := ParseText(line, nil)
			if err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			if !reflect.DeepEqual(got, rec) {
				t.Fatalf("%s\n got %+v\nwant %+v", line, got, rec)
			}
		}
	}
}

func TestTextForms(t *testing.T) {
	tests := []struct {
		in   string
		want Record
	}{
		{"PartitionChangeRecord TopicID=ASNFZ4mrze8AESIzRFVmdw PartitionID=2 isr=1,2 Leader=-1",
			&PartitionChangeRecord{PartitionID: 2, TopicID: topicU, ISR: []int32{1, 2}, Leader: -1, LeaderRecoveryState: -1}},
		{"PartitionChangeRecord ISR=[] Replicas=[3, 4]",
			&PartitionChangeRecord{ISR: []int32{}, Replicas: []int32{3, 4}, Leader: -2, LeaderRecoveryState: -1}},
		{`RegisterBrokerRecord BrokerID=1 Rack="rack a" EndPoints=[{Name=PLAINTEXT Host=h Port=9092}]`,
			&RegisterBrokerRecord{BrokerID: 1, Rack: ptr("rack a"), EndPoints: []BrokerEndpoint{{Name: "PLAINTEXT", Host: "h", Port: 9092}}}},
		{"ConfigRecord ResourceType=2 ResourceName=t Name=x Value=null", &ConfigRecord{ResourceType: 2, ResourceName: "t", Name: "x"}},
		{"NO_OP_RECORD", &NoOpRecord{}},
	}
	for _, tt := range tests {
		got, err := ParseText(tt.in, nil)
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Fatalf("%s: %+v, %v", tt.in, got, err)
		}
	}
	for _, bad := range []string{"Bogus", "TopicRecord Nope=1", "TopicRecord Name", "PartitionRecord Replicas=[1,2", "TopicRecord TopicID=zz"} {
		if _, err := ParseText(bad, nil); err == nil {
			t.Fatalf("%q parsed", bad)
		}
	}
}
