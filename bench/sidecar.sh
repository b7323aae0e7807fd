#!/usr/bin/env bash
# bench/sidecar.sh: kraftwatch as a process against a real one-node Kafka (KAFKA_VERSION,
# default 4.3.1, from .cache/kafka) and a real nats-server process:
#
#   BenchmarkSidecarLatency    100 real changes (partitions added to a topic one group
#                              reads, one at a time): latency from the metadata batch's
#                              append time to the event at a NATS subscriber, p50/p90/
#                              p99/max, split at an in-process observer's first read of
#                              the batch and at kraftwatch's decision. Target p99 <= 100 ms.
#   BenchmarkSidecar10kGroups  10,000 real classic groups on one topic (kafka-go
#                              JoinGroup/SyncGroup, one member each), one partition
#                              added: append time -> last of the 10k events at the
#                              subscriber. Target <= 2 s. KRAFTWATCH_BENCH_GROUPS=N
#                              changes the number of groups.
#
#   bench/sidecar.sh                 # RUNS=3 rounds of each, one Kafka for all
#   RUNS=1 bench/sidecar.sh -bench SidecarLatency
#
# Needs Go, Java 17+ and Maven. Extra arguments go to `go test`. The machine's load
# matters (everything shares its cores): the load average is printed before and after.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
GO=${GO:-go}
export KAFKA_VERSION=${KAFKA_VERSION:-4.3.1}
RUNS=${RUNS:-3}

internal/kafkatest/fetch-kafka.sh "$KAFKA_VERSION"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
"$GO" test -tags e2e -run '^$' -bench 'Sidecar' -benchtime 1x -count "$RUNS" -timeout 60m ./e2e/ "$@"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
