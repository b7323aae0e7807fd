// Command metagen writes a synthetic KRaft metadata log: a snapshot of a cluster of
// the given size under OUT/__cluster_metadata-0/, laid out as Kafka lays out its own
// (see package bench/metagen), and with -changes N a log segment of N partition leader
// changes after it.
//
//	go run ./tools/metagen -topics 10000 -partitions 100 -rf 3 -brokers 12 -racks 4 -out DIR
//
// The snapshot can be read by Kafka's tools:
//
//	kafka-metadata-shell.sh --snapshot DIR/__cluster_metadata-0/*.checkpoint tree /image/topics/byName
//	kafka-dump-log.sh --cluster-metadata-decoder --files DIR/__cluster_metadata-0/*.checkpoint
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/kraftwatch/kraftwatch/bench/metagen"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "metagen:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("metagen", flag.ContinueOnError)
	version := os.Getenv("KAFKA_VERSION")
	if version == "" {
		version = "4.3.1"
	}
	fs.StringVar(&version, "kafka-version", version, "Kafka release whose metadata.version and features to write (4.1.x, 4.3.x, 4.4.x; env KAFKA_VERSION)")
	out := fs.String("out", "", "metadata log dir to write OUT/__cluster_metadata-0 into (required)")
	topics := fs.Int("topics", 10_000, "topics")
	partitions := fs.Int("partitions", 100, "partitions per topic")
	rf := fs.Int("rf", 3, "replication factor")
	brokers := fs.Int("brokers", 12, "brokers (node ids 1..N)")
	racks := fs.Int("racks", 4, "racks (0: no broker.rack)")
	controllers := fs.Int("controllers", 3, "controllers (node ids 1001..)")
	mv := fs.Int("metadata-version", 0, "metadata.version feature level (0: the release's)")
	seed := fs.Uint64("seed", 1, "seed of the topic, incarnation and directory ids")
	epoch := fs.Int("epoch", 7, "snapshot epoch")
	endOffset := fs.Int64("end-offset", 0, "snapshot end offset (0: the number of records in it)")
	maxBatch := fs.Int("max-batch-bytes", metagen.MaxBatchBytes, "largest batch in bytes")
	changes := fs.Int("changes", 0, "also write a segment after the snapshot with this many partition leader changes")
	order := fs.String("order", "sequential", "the order of the leader changes: sequential (partition after partition) or rolling (a rolling restart, broker by broker)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *out == "" || fs.NArg() > 0 {
		fs.Usage()
		return fmt.Errorf("-out is required and no arguments are taken")
	}
	cfg, err := metagen.ForKafka(version)
	if err != nil {
		return err
	}
	cfg.Topics, cfg.Partitions, cfg.ReplicationFactor = *topics, *partitions, *rf
	cfg.Brokers, cfg.Racks, cfg.Controllers = *brokers, *racks, *controllers
	if *controllers == 0 {
		cfg.KRaftVersion = 0
	}
	if *mv != 0 {
		cfg.MetadataVersion = int16(*mv)
	}
	cfg.Seed, cfg.Epoch, cfg.EndOffset, cfg.MaxBatchBytes = *seed, int32(*epoch), *endOffset, *maxBatch
	if cfg.Order, err = metagen.ParseOrder(*order); err != nil {
		return err
	}
	files, err := metagen.WriteDir(filepath.Join(*out, "__cluster_metadata-0"), cfg, *changes)
	if err != nil {
		return err
	}
	fmt.Printf("%s\n  %s\n", files.Snapshot, describe(files.SnapshotStats))
	if files.Segment != "" {
		fmt.Printf("%s\n  %s\n", files.Segment, describe(files.SegmentStats))
	}
	return nil
}

func describe(s metagen.Stats) string {
	var types []string
	for t, n := range s.ByType {
		types = append(types, fmt.Sprintf("%s=%d", t, n))
	}
	sort.Strings(types)
	return fmt.Sprintf("%d bytes, %d batches (largest %d bytes), offsets %d-%d, %d control records, %d metadata records: %s",
		s.Bytes, s.Batches, s.MaxBatch, s.FirstOffset, s.LastOffset, s.ControlRecords, s.Records, strings.Join(types, " "))
}
