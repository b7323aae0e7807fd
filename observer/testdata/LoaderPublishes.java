// LoaderPublishes feeds metadata log segments to Kafka's own MetadataBatchLoader the way
// kafka-metadata-shell does: Kafka's SnapshotFileReader reads the file and commits one
// data batch at a time (control batches go to handleLeaderChange), and the listener
// does what MetadataLoader.handleCommit does (loadBatch for each batch of the commit,
// then maybeFlushBatches); it prints every image the loader publishes. Run by
// observer/transactions_test.go (TestTransactionUnitsAgainstKafkaLoader) in
// source-file mode:
//
//	java -cp '.cache/kafka/4.3.1/libs/*' observer/testdata/LoaderPublishes.java SEGMENT...
//
// Output, per segment: "log PATH", then "publish @OFFSET eEPOCH topics=a,b" per
// published image and "fault: MESSAGE: CAUSE" per fault the loader reported.
import java.lang.reflect.Constructor;
import java.util.TreeSet;

import org.apache.kafka.common.utils.LogContext;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.image.MetadataImage;
import org.apache.kafka.image.loader.MetadataBatchLoader;
import org.apache.kafka.metadata.util.SnapshotFileReader;
import org.apache.kafka.raft.BatchReader;
import org.apache.kafka.raft.LeaderAndEpoch;
import org.apache.kafka.raft.RaftClient;
import org.apache.kafka.server.common.ApiMessageAndVersion;
import org.apache.kafka.server.fault.FaultHandler;
import org.apache.kafka.snapshot.SnapshotReader;

public class LoaderPublishes {
    public static void main(String[] args) throws Exception {
        for (String path : args) {
            System.out.println("log " + path);
            MetadataBatchLoader.MetadataUpdater updater = (delta, image, manifest) -> {
                TreeSet<String> names = new TreeSet<>(image.topics().topicsByName().keySet());
                System.out.println("publish @" + image.provenance().lastContainedOffset() + " e"
                    + image.provenance().lastContainedEpoch() + " topics=" + String.join(",", names));
            };
            FaultHandler faults = (message, cause) -> {
                System.out.println("fault: " + message + ": " + (cause == null ? "" : cause.getMessage()));
                return new RuntimeException(message, cause);
            };
            MetadataBatchLoader loader = newLoader(faults, updater);
            loader.resetToImage(MetadataImage.EMPTY);
            RaftClient.Listener<ApiMessageAndVersion> listener = new RaftClient.Listener<>() {
                public void handleCommit(BatchReader<ApiMessageAndVersion> reader) {
                    try (reader) {
                        while (reader.hasNext()) {
                            loader.loadBatch(reader.next(), LeaderAndEpoch.UNKNOWN);
                        }
                        loader.maybeFlushBatches(LeaderAndEpoch.UNKNOWN, true);
                    }
                }

                public void handleLoadSnapshot(SnapshotReader<ApiMessageAndVersion> reader) {
                    throw new UnsupportedOperationException("a log segment holds no snapshot");
                }

                public void handleLoadBootstrap(SnapshotReader<ApiMessageAndVersion> reader) {
                    throw new UnsupportedOperationException("no bootstrap");
                }
            };
            SnapshotFileReader reader = new SnapshotFileReader(path, listener);
            reader.startup();
            // The reader sets its high watermark once it has handed on the last batch.
            while (reader.highWaterMark().isEmpty()) {
                Thread.sleep(5);
            }
            reader.close();
        }
    }

    // newLoader calls the constructor of the release at hand: 4.3 added a
    // SupportedConfigChecker argument.
    static MetadataBatchLoader newLoader(FaultHandler faults, MetadataBatchLoader.MetadataUpdater updater)
            throws Exception {
        for (Constructor<?> c : MetadataBatchLoader.class.getConstructors()) {
            Class<?>[] p = c.getParameterTypes();
            if (p.length == 4) {
                return (MetadataBatchLoader) c.newInstance(new LogContext(), Time.SYSTEM, faults, updater);
            }
            if (p.length == 5) {
                Object always = p[4].getField("TRUE").get(null);
                return (MetadataBatchLoader) c.newInstance(new LogContext(), Time.SYSTEM, faults, updater, always);
            }
        }
        throw new IllegalStateException("no known MetadataBatchLoader constructor");
    }
}
