#!/usr/bin/env bash
# bench/burst.sh: a rolling restart's leader-change burst. metagen
# writes the 1M-partition snapshot of bench/metadata.sh and two segments of 1M
# partition leader changes after it: the headline in the order of a rolling restart
# (-order rolling: broker by broker, its controlled shutdown moves the partitions it
# leads and the preferred leader election moves them back, as Kafka's controller
# writes them; 1M changes are brokers 1-6 of 12), and for comparison partition after
# partition (sequential: batches of 100 changes of one topic; 5M changes, each
# partition moved five times, -sequential-changes, so that its burst lasts long enough
# to measure on this machine). For RUNS rounds, in
# fresh processes, the orders alternating within each round, it times kraftwatch
# replaying each segment at load (observer.Load of snapshot + segment, minus the
# snapshot alone) and live (an Observer on the snapshot, the segment linked in once
# it is ready), and Kafka's kafka-metadata-shell on the same bytes (snapshot and
# segment joined into one file; the burst timed inside its JVM from its metadata
# loader's log). It prints each order's figures with their ratios and exits 1 if a
# target of either order is missed: >= 5x Kafka's shell at load and live in every
# round, <= 64 B allocated per change, peak RSS <= 1.5x the image's heap
# (live: under a Go memory limit of 1.5x the image's heap, -memory-limit, as kraftwatch
# runs under a container's limit; its CPU is printed against the run without).
# At load it also prints what the peak RSS is made of, and beside it the kraftwatch
# binary's own peak RSS on a one-partition snapshot (metadata.sh builds it).
#
#   bench/burst.sh                                  # 1M changes, RUNS=3
#   RUNS=1 bench/burst.sh -topics 1000 -changes 100000 -shell=false   # quick, kraftwatch only
#   bench/burst.sh -order rolling                   # the rolling restart alone
#
# Needs Go, Java 17+ and Maven (the Kafka jars are fetched once into .cache/kafka).
set -euo pipefail
# The same preparation as bench/metadata.sh; -changes selects metabench's burst mode.
exec "$(dirname "$0")/metadata.sh" -changes 1000000 "$@"
