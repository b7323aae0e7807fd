// GroupMember joins a group as one member (or COUNT members, one consumer thread each)
// and consumes until its stdin closes, then leaves the group cleanly. It prints one
// line per assignment change:
//   assigned <topic>-<partition>,...
// (with COUNT > 1, "member <i> assigned ..."). A stdin line "subscribe topics:A,B"
// makes every member subscribe to those topics instead.
// Usage: GroupMember BOOTSTRAP GROUP consumer|classic|share topics:A,B|regex:PATTERN [COUNT]
// With "consumer", topics are SubscribedTopicNames and a regex is a broker-side
// SubscriptionPattern (KIP-848, RE2/J); with "classic", a regex is a client-side Pattern.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.time.Duration;
import java.util.*;
import java.util.regex.Pattern;
import org.apache.kafka.clients.consumer.*;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

public class GroupMember {
    static volatile boolean running = true;
    // resubscribe holds the topics of the last "subscribe" line; each member applies it
    // when its generation lags.
    static volatile List<String> resubscribe = null;
    static volatile int subscribeGen = 0;

    public static void main(String[] args) throws Exception {
        String bootstrap = args[0], group = args[1], kind = args[2], sub = args[3];
        int count = args.length > 4 ? Integer.parseInt(args[4]) : 1;
        Thread stdin = new Thread(() -> {
            try {
                BufferedReader r = new BufferedReader(new InputStreamReader(System.in));
                for (String line; (line = r.readLine()) != null; ) {
                    if (line.startsWith("subscribe topics:")) {
                        resubscribe = Arrays.asList(line.substring(17).split(","));
                        subscribeGen++;
                    }
                }
            } catch (Exception e) { }
            running = false;
        });
        stdin.setDaemon(true);
        stdin.start();
        List<String> topics = sub.startsWith("topics:") ? Arrays.asList(sub.substring(7).split(",")) : null;
        String regex = sub.startsWith("regex:") ? sub.substring(6) : null;
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            final String prefix = count > 1 ? "member " + i + " " : "";
            final String clientId = count > 1 ? group + "-member-" + i : group + "-member";
            Thread t = new Thread(() -> {
                try {
                    run(bootstrap, group, kind, clientId, prefix, topics, regex);
                } catch (Exception e) {
                    System.out.println(prefix + "failed " + e);
                    System.out.flush();
                }
            });
            t.start();
            threads.add(t);
        }
        for (Thread t : threads) t.join();
    }

    static synchronized void say(String line) {
        System.out.println(line);
        System.out.flush();
    }

    static void run(String bootstrap, String group, String kind, String clientId, String prefix,
                    List<String> topics, String regex) throws Exception {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("group.id", group);
        p.put("client.id", clientId);
        p.put("key.deserializer", ByteArrayDeserializer.class.getName());
        p.put("value.deserializer", ByteArrayDeserializer.class.getName());
        if (kind.equals("share")) {
            try (KafkaShareConsumer<byte[], byte[]> c = new KafkaShareConsumer<>(p)) {
                c.subscribe(topics);
                say(prefix + "subscribed " + topics);
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
                    say(prefix + "assigned " + String.join(",", names));
                }
            };
            if (topics != null) c.subscribe(topics, l);
            else if (kind.equals("consumer")) c.subscribe(new SubscriptionPattern(regex), l);
            else c.subscribe(Pattern.compile(regex), l);
            long lastCommit = 0;
            int gen = 0;
            while (running) {
                if (gen != subscribeGen) {
                    gen = subscribeGen;
                    c.subscribe(resubscribe, l);
                    say(prefix + "subscribing " + resubscribe);
                }
                c.poll(Duration.ofMillis(200));
                if (System.currentTimeMillis() - lastCommit > 2000) {
                    c.commitAsync();
                    lastCommit = System.currentTimeMillis();
                }
            }
        }
    }
}
