// EnumProbe prints the group coordinator's own numbering of what groups decodes: the
// __consumer_offsets record types (id and value versions) and the member states of
// consumer/share (modern) and streams members. Run against a release's jar:
//
//	java -cp ".cache/kafka/<v>/libs/*" groups/testdata/java/EnumProbe.java \
//	    > groups/testdata/kafka-<v>/enums.txt
//
// groups' TestKafkaEnums compares groups' constants with the output.
public class EnumProbe {
    public static void main(String[] args) {
        for (var t : org.apache.kafka.coordinator.group.generated.CoordinatorRecordType.values()) {
            System.out.println("record " + t.name() + " " + t.id() + " " + t.lowestSupportedVersion() + " " + t.highestSupportedVersion());
        }
        for (var s : org.apache.kafka.coordinator.group.modern.MemberState.values()) {
            System.out.println("member_state modern " + s.name() + " " + s.value());
        }
        for (var s : org.apache.kafka.coordinator.group.streams.MemberState.values()) {
            System.out.println("member_state streams " + s.name() + " " + s.value());
        }
    }
}
