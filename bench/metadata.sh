#!/usr/bin/env bash
# bench/metadata.sh: kraftwatch against Kafka's own kafka-metadata-shell on the same
# 1M-partition KRaft snapshot (10,000 topics x 100 partitions, RF 3 over 12 brokers
# in 4 racks), in one run. It writes the snapshot with bench/metagen, then for each of
# RUNS rounds times, in fresh processes: kraftwatch's load (observer.Load: read,
# check, decode, full image) and its heap per partition; the floor (read + CRC +
# decode of the same file, no image); kafka-metadata-shell on a one-partition
# snapshot (JVM start-up) and on the large one. It prints both tools' figures, the
# ratios and the targets, on the fastest run of each side (>= 15x the shell's image shown, >= 8x its
# loader caught up, CPU within 2x of the floor, <= 120 B heap per partition), and
# exits 1 if a target is missed.
#
#   bench/metadata.sh                      # KAFKA_VERSION (default 4.3.1), 3 rounds
#   RUNS=5 SHELL_XMX=8g bench/metadata.sh -topics 2000   # extra flags go to metabench
#
# Needs Go, Java 17+ and Maven (the Kafka jars are fetched once into .cache/kafka).
# The release must have a published kafka-metadata-shell (4.4.0 has none).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
GO=${GO:-go}
export KAFKA_VERSION=${KAFKA_VERSION:-4.3.1}
RUNS=${RUNS:-3}
SHELL_XMX=${SHELL_XMX:-8g}

internal/kafkatest/fetch-kafka.sh "$KAFKA_VERSION"
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
# Built first, so that no measurement includes compiling.
"$GO" build -o "$bin/metabench" ./tools/metabench
"$GO" build -o "$bin/kraftwatch" .
"$bin/metabench" -kafka-version "$KAFKA_VERSION" -runs "$RUNS" -xmx "$SHELL_XMX" -kraftwatch "$bin/kraftwatch" "$@"
