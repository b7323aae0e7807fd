// StreamsApp is a Kafka Streams application that joins a KIP-1071 streams group
// (group.protocol=streams) and runs until its stdin closes, then closes and leaves.
// Usage: StreamsApp BOOTSTRAP APPLICATION_ID TOPIC,TOPIC,... PATTERN STATE_DIR REPLICATION_FACTOR
// [GROUP_INSTANCE_ID] (the internal topics' replication.factor, -1 is the broker's
// default; a group.instance.id makes the member static).
//
// Topology: sub-topology 0 reads the named source topics (and, where the release allows
// it, the topics matching PATTERN) and writes them re-keyed by value to the repartition
// topic <id>-rekey-repartition (a fixed 2 partitions, so source topics may grow);
// sub-topology 1 reads it and counts per key into the in-memory store "counts", backed
// by the changelog <id>-counts-changelog.
//
// It prints, one per line:
//   pattern supported | pattern unsupported: <message>   (KafkaStreams' own check)
//   state <KafkaStreams.State>                            (every state change)
//   error <exception>                                     (a stream thread died; replaced)
import java.time.Duration;
import java.util.*;
import java.util.regex.Pattern;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.*;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler;
import org.apache.kafka.streams.kstream.*;
import org.apache.kafka.streams.state.Stores;

public class StreamsApp {
    public static void main(String[] args) throws Exception {
        String bootstrap = args[0], id = args[1], pattern = args[3], stateDir = args[4];
        List<String> topics = Arrays.asList(args[2].split(","));
        Properties p = new Properties();
        p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(StreamsConfig.APPLICATION_ID_CONFIG, id);
        p.put(StreamsConfig.GROUP_PROTOCOL_CONFIG, "streams");
        p.put(StreamsConfig.STATE_DIR_CONFIG, stateDir);
        p.put(StreamsConfig.REPLICATION_FACTOR_CONFIG, Integer.parseInt(args[5]));
        p.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, 1);
        p.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, 1000);
        p.put(StreamsConfig.DEFAULT_KEY_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
        p.put(StreamsConfig.DEFAULT_VALUE_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
        if (args.length > 6) p.put("group.instance.id", args[6]);

        // Kafka Streams refuses some topologies with the streams protocol in its
        // constructor; ask it whether a pattern source is one of them.
        boolean withPattern;
        try (KafkaStreams probe = new KafkaStreams(patternTopology(pattern), p)) {
            withPattern = true;
            System.out.println("pattern supported");
        } catch (UnsupportedOperationException e) {
            withPattern = false;
            System.out.println("pattern unsupported: " + e.getMessage());
        }
        System.out.flush();

        StreamsBuilder b = new StreamsBuilder();
        KStream<String, String> in = b.stream(topics);
        if (withPattern) in = in.merge(b.stream(Pattern.compile(pattern)));
        in.selectKey((k, v) -> v)
            .repartition(Repartitioned.<String, String>as("rekey").withNumberOfPartitions(2))
            .groupByKey()
            .count(Materialized.as(Stores.inMemoryKeyValueStore("counts")));
        KafkaStreams streams = new KafkaStreams(b.build(), p);
        streams.setStateListener((now, before) -> {
            System.out.println("state " + now);
            System.out.flush();
        });
        streams.setUncaughtExceptionHandler(e -> {
            System.out.println("error " + e);
            System.out.flush();
            return StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse.REPLACE_THREAD;
        });
        streams.start();
        while (System.in.read() >= 0) { }
        streams.close(Duration.ofSeconds(10));
        System.out.println("closed");
        System.out.flush();
    }

    static Topology patternTopology(String pattern) {
        StreamsBuilder b = new StreamsBuilder();
        b.stream(Pattern.compile(pattern)).foreach((k, v) -> { });
        return b.build();
    }
}
