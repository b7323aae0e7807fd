// KafkaHashDiff computes Kafka's topic and group metadata hashes for clusters read
// from standard input, for hashcache's differential test (differential_test.go).
//
// Each cluster becomes a real org.apache.kafka.image.MetadataImage, built by
// replaying RegisterBrokerRecord, TopicRecord and PartitionRecord through a
// MetadataDelta. Every hash is computed twice: by Kafka's own
// org.apache.kafka.coordinator.group.Utils (found by reflection, since its signature
// changed between 4.1 and 4.2), and directly with hash4j following the layout that
// Utils uses, so a failure tells whether the layout or the image plumbing differs.
//
// Input, one record per line, fields separated by single spaces, strings as "x" and
// the hex of their UTF-8 bytes ("-" for none):
//   C                                start a new cluster
//   B <id> <fenced 0|1> <rack|->     register a broker
//   T <msb> <lsb> <name>             create a topic (ids as signed decimal longs)
//   P <id,id,...|->                  next partition of the last topic: its replicas
//   G <name,name,...|->              a group subscribing to these names
//   E                                end of the cluster: print its hashes
// Output, per topic in input order:  T <name> <utils hash> <hash4j hash>
//         per group in input order:  G <utils hash> <hash4j hash>
// Hashes are signed decimal longs.

import com.dynatrace.hash4j.hashing.HashStream64;
import com.dynatrace.hash4j.hashing.Hashing;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.reflect.Constructor;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.metadata.PartitionRecord;
import org.apache.kafka.common.metadata.RegisterBrokerRecord;
import org.apache.kafka.common.metadata.TopicRecord;
import org.apache.kafka.image.MetadataDelta;
import org.apache.kafka.image.MetadataImage;
import org.apache.kafka.image.MetadataProvenance;
import org.apache.kafka.image.TopicImage;
import org.apache.kafka.metadata.BrokerRegistration;
import org.apache.kafka.metadata.PartitionRegistration;

public class KafkaHashDiff {
    static Method topicHash;
    static Method groupHash;
    static Constructor<?> imageAdapter; // null when Utils takes a MetadataImage

    public static void main(String[] args) throws Exception {
        Class<?> utils = Class.forName("org.apache.kafka.coordinator.group.Utils");
        for (Method m : utils.getMethods()) {
            if (m.getName().equals("computeTopicHash") && m.getParameterCount() == 2) {
                topicHash = m;
            } else if (m.getName().equals("computeGroupHash") && m.getParameterCount() == 1) {
                groupHash = m;
            }
        }
        if (topicHash == null || groupHash == null) {
            throw new IllegalStateException("Utils has no computeTopicHash/computeGroupHash");
        }
        Class<?> imageType = topicHash.getParameterTypes()[1];
        if (!imageType.isAssignableFrom(MetadataImage.class)) {
            imageAdapter = Class.forName(
                "org.apache.kafka.coordinator.common.runtime.KRaftCoordinatorMetadataImage")
                .getConstructor(MetadataImage.class);
        }

        PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        MetadataDelta delta = null;
        List<String> topics = new ArrayList<>();
        List<List<String>> groups = new ArrayList<>();
        Uuid lastTopic = null;
        int nextPartition = 0;
        long epoch = 1;
        for (String line; (line = in.readLine()) != null; ) {
            String[] f = line.split(" ");
            switch (f[0]) {
                case "C":
                    delta = new MetadataDelta.Builder().setImage(MetadataImage.EMPTY).build();
                    topics.clear();
                    groups.clear();
                    break;
                case "B":
                    delta.replay(new RegisterBrokerRecord()
                        .setBrokerId(Integer.parseInt(f[1]))
                        .setIncarnationId(Uuid.randomUuid())
                        .setBrokerEpoch(epoch++)
                        .setFenced(f[2].equals("1"))
                        .setRack(f[3].equals("-") ? null : str(f[3])));
                    break;
                case "T":
                    lastTopic = new Uuid(Long.parseLong(f[1]), Long.parseLong(f[2]));
                    nextPartition = 0;
                    topics.add(str(f[3]));
                    delta.replay(new TopicRecord().setName(str(f[3])).setTopicId(lastTopic));
                    break;
                case "P": {
                    List<Integer> replicas = ints(f[1]);
                    delta.replay(new PartitionRecord()
                        .setPartitionId(nextPartition++)
                        .setTopicId(lastTopic)
                        .setReplicas(replicas)
                        .setIsr(replicas.isEmpty() ? List.of() : List.of(replicas.get(0)))
                        .setLeader(replicas.isEmpty() ? -1 : replicas.get(0))
                        .setLeaderEpoch(7)
                        .setPartitionEpoch(3));
                    break;
                }
                case "G":
                    groups.add(f[1].equals("-") ? List.of() : strs(f[1]));
                    break;
                case "E":
                    finish(delta.apply(MetadataProvenance.EMPTY), topics, groups, out);
                    break;
                default:
                    throw new IllegalArgumentException("bad line: " + line);
            }
        }
        out.flush();
    }

    static void finish(MetadataImage image, List<String> topics, List<List<String>> groups, PrintStream out)
            throws Exception {
        Object arg = imageAdapter == null ? image : imageAdapter.newInstance(image);
        for (String name : topics) {
            long viaUtils = (long) topicHash.invoke(null, name, arg);
            out.println("T " + hex(name) + " " + viaUtils + " " + hash4jTopicHash(name, image));
        }
        for (List<String> names : groups) {
            Map<String, Long> viaUtils = new HashMap<>();
            Map<String, Long> direct = new HashMap<>();
            for (String name : names) {
                if (image.topics().getTopic(name) != null) {
                    viaUtils.put(name, (long) topicHash.invoke(null, name, arg));
                    direct.put(name, hash4jTopicHash(name, image));
                }
            }
            out.println("G " + groupHash.invoke(null, viaUtils) + " " + hash4jGroupHash(direct));
        }
    }

    // hash4jTopicHash follows the layout of Kafka's Utils.computeTopicHash.
    static long hash4jTopicHash(String name, MetadataImage image) {
        TopicImage topic = image.topics().getTopic(name);
        if (topic == null) {
            return 0;
        }
        HashStream64 h = Hashing.xxh3_64().hashStream();
        h.putByte((byte) 0);
        h.putLong(topic.id().getMostSignificantBits());
        h.putLong(topic.id().getLeastSignificantBits());
        h.putString(topic.name());
        int n = topic.partitions().size();
        h.putInt(n);
        for (int i = 0; i < n; i++) {
            h.putInt(i);
            List<String> racks = new ArrayList<>();
            PartitionRegistration p = topic.partitions().get(i);
            for (int replica : p.replicas) {
                BrokerRegistration b = image.cluster().broker(replica);
                if (b != null) {
                    b.rack().ifPresent(racks::add);
                }
            }
            Collections.sort(racks);
            for (String rack : racks) {
                h.putInt(rack.length());
                h.putString(rack);
            }
        }
        return h.getAsLong();
    }

    static long hash4jGroupHash(Map<String, Long> hashes) {
        if (hashes.isEmpty()) {
            return 0;
        }
        HashStream64 h = Hashing.xxh3_64().hashStream();
        for (long v : new TreeMap<>(hashes).values()) {
            h.putLong(v);
        }
        return h.getAsLong();
    }

    static String str(String hex) {
        return new String(HexFormat.of().parseHex(hex.substring(1)), StandardCharsets.UTF_8);
    }

    static String hex(String s) {
        return "x" + HexFormat.of().formatHex(s.getBytes(StandardCharsets.UTF_8));
    }

    static List<String> strs(String field) {
        List<String> l = new ArrayList<>();
        for (String s : field.split(",")) {
            l.add(str(s));
        }
        return l;
    }

    static List<Integer> ints(String field) {
        List<Integer> l = new ArrayList<>();
        if (!field.equals("-")) {
            for (String s : field.split(",")) {
                l.add(Integer.parseInt(s));
            }
        }
        return l;
    }
}
