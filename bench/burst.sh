#!/usr/bin/env bash
# bench/burst.sh: a rolling restart's leader-change burst (issue 14, goal 1). metagen
# writes the 1M-partition snapshot of bench/metadata.sh and a segment of 1M partition
# leader changes after it (batches of 100); for RUNS rounds, in fresh processes, it
# times kraftwatch replaying the segment at load (observer.Load of snapshot + segment,
# minus the snapshot alone) and live (an Observer on the snapshot, the segment linked
# in once it is ready), and Kafka's kafka-metadata-shell on the same bytes (snapshot
# and segment joined into one file, minus the snapshot alone). It prints each figure
# with its ratio and exits 1 if a target is missed: >= 5x Kafka's shell at load and
# live, <= 64 B allocated per change, peak RSS <= 1.5x the image's heap.
#
#   bench/burst.sh                                  # 1M changes, RUNS=3
#   RUNS=1 bench/burst.sh -topics 1000 -changes 100000 -shell=false   # quick, kraftwatch only
#
# Needs Go, Java 17+ and Maven (the Kafka jars are fetched once into .cache/kafka).
set -euo pipefail
# The same preparation as bench/metadata.sh; -changes selects metabench's burst mode.
exec "$(dirname "$0")/metadata.sh" -changes 1000000 "$@"
