#!/usr/bin/env bash
# bench/offsets.sh: kraftwatch's start-up replay of __consumer_offsets against a real
# one-node Kafka (KAFKA_VERSION, default 4.3.1, from .cache/kafka), bench/offsets:
# 1M offset commits of 10,000 member-less groups plus 3 KIP-848 groups of Kafka's
# Java client, in 6 __consumer_offsets partitions. Each round restarts the broker and
# reads its group coordinator's load of the same partitions from server.log (the
# anchor), then runs each kraftwatch: wall and CPU from "reading group records" to
# "group records caught up", records/s, CPU per record, peak RSS. Targets (on this
# tree's kraftwatch): >= 3 M records/s, >= 5× the coordinator, <= 400 ns CPU/record.
# Then live rounds (-live-count 3): a firehose of OffsetCommit requests (-writers 16,
# -live 20s) without kraftwatch (bin=none, the anchor) and with each kraftwatch
# reading, in rotating order: the broker's commit ceiling (commits/s) and its CPU per
# commit, kraftwatch's CPU per record read (/proc) and its lag at the end; and the
# rebalance-needed latency of a partition add (CreatePartitions request -> its
# "rebalance needed" line for a KIP-848 group on the topic), -samples 5 quiet and 5
# during the firehose. Targets: ceiling with / without >= 0.9 (best of each),
# <= 1 µs CPU/record, firehose median latency within 20 ms of quiet.
#
#   bench/offsets.sh                     # COUNT=6 replay rounds, 3 live rounds
#   BEFORE=main bench/offsets.sh         # also that commit's kraftwatch, alternately; benchstat -col /bin
#   COUNT=1 bench/offsets.sh -records 200000   # extra flags go to bench/offsets
#   COUNT=0 bench/offsets.sh -live-count 5 -live 10s   # live rounds only
#
# Needs Go, Java 17+ and Maven; benchstat (golang.org/x/perf/cmd/benchstat) when
# installed. The load average is printed before and after.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
GO=${GO:-go}
export KAFKA_VERSION=${KAFKA_VERSION:-4.3.1}
COUNT=${COUNT:-6}

internal/kafkatest/fetch-kafka.sh "$KAFKA_VERSION"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$GO" build -o "$tmp/offsets" ./bench/offsets
"$GO" build -o "$tmp/kraftwatch" .
bins=()
if [ -n "${BEFORE:-}" ]; then
	git worktree add --detach "$tmp/before" "$BEFORE" >/dev/null
	(cd "$tmp/before" && "$GO" build -o "$tmp/kraftwatch-before" .)
	git worktree remove --force "$tmp/before"
	bins+=(-bin "before=$tmp/kraftwatch-before")
fi
bins+=(-bin "kraftwatch=$tmp/kraftwatch")

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
set +e
"$tmp/offsets" -count "$COUNT" "${bins[@]}" "$@" | tee "$tmp/out.txt"
status=${PIPESTATUS[0]}
set -e
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
if command -v benchstat >/dev/null; then
	benchstat -col /bin "$tmp/out.txt"
fi
exit "$status"
