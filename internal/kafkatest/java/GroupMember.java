// GroupMember joins a group as one member and consumes until its stdin closes, then
// leaves the group cleanly. It prints one line per assignment change:
//   assigned <topic>-<partition>,...
// Usage: GroupMember BOOTSTRAP GROUP consumer|classic|share topics:A,B|regex:PATTERN
// With "consumer", topics are SubscribedTopicNames and a regex is a broker-side
// SubscriptionPattern (KIP-848, RE2/J); with "classic", a regex is a client-side Pattern.
import java.time.Duration;
import java.util.*;
import java.util.regex.Pattern;
import org.apache.kafka.clients.consumer.*;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

public class GroupMember {
    static volatile boolean running = true;

    public static void main(String[] args) throws Exception {
        String bootstrap = args[0], group = args[1], kind = args[2], sub = args[3];
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("group.id", group);
        p.put("client.id", group + "-member");
        p.put("key.deserializer", ByteArrayDeserializer.class.getName());
        p.put("value.deserializer", ByteArrayDeserializer.class.getName());
        Thread stdin = new Thread(() -> {
            try {
                while (System.in.read() >= 0) { }
            } catch (Exception e) { }
            running = false;
        });
        stdin.setDaemon(true);
        stdin.start();
        List<String> topics = sub.startsWith("topics:") ? Arrays.asList(sub.substring(7).split(",")) : null;
        String regex = sub.startsWith("regex:") ? sub.substring(6) : null;
        if (kind.equals("share")) {
            try (KafkaShareConsumer<byte[], byte[]> c = new KafkaShareConsumer<>(p)) {
                c.subscribe(topics);
                System.out.println("subscribed " + topics);
                System.out.flush();
                while (running) c.poll(Duration.ofMillis(200));
            }
            return;
        }
        p.put("group.protocol", kind);
        p.put("auto.offset.reset", "earliest");
        try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(p)) {
            ConsumerRebalanceListener l = new ConsumerRebalanceListener() {
                public void onPartitionsRevoked(Collection<TopicPartition> ps) { }
                public void onPartitionsAssigned(Collection<TopicPartition> ps) {
                    List<String> names = new ArrayList<>();
                    for (TopicPartition tp : c.assignment()) names.add(tp.toString());
                    Collections.sort(names);
                    System.out.println("assigned " + String.join(",", names));
                    System.out.flush();
                }
            };
            if (topics != null) c.subscribe(topics, l);
            else if (kind.equals("consumer")) c.subscribe(new SubscriptionPattern(regex), l);
            else c.subscribe(Pattern.compile(regex), l);
            long lastCommit = 0;
            while (running) {
                c.poll(Duration.ofMillis(200));
                if (System.currentTimeMillis() - lastCommit > 2000) {
                    c.commitAsync();
                    lastCommit = System.currentTimeMillis();
                }
            }
        }
    }
}
