#!/usr/bin/env bash
# bench/hashes.sh: every topic hash of a 1M-partition cluster (10,000 topics x 100
# partitions, RF 3, 12 brokers in 4 racks) against the raw hash over the very bytes the
# scheme hashes (issue 14, goal 4), in one run: BenchmarkAllTopics (hashcachetest
# topics), BenchmarkAllTopicsImage (the same cluster as an image.Image, what kraftwatch
# hashes) and BenchmarkRawHash (XXH3 for the kafka scheme, Murmur3 for murmur3). Prints
# each ratio of CPU time per run of the process (which other processes on the machine
# inflate less than wall time; wall time beside it) and exits 1 when one is above 2x.
#
#   bench/hashes.sh                      # BENCHTIME=10x
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
GO=${GO:-go}
BENCHTIME=${BENCHTIME:-10x}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
"$GO" test -run '^$' -bench '^Benchmark(AllTopics|AllTopicsImage|RawHash)$' -benchtime "$BENCHTIME" -benchmem ./hashcache/ | tee "$out"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
awk '
  /^Benchmark/ {
    split($1, n, "/"); sub(/-[0-9]+$/, "", n[2]); k = n[1] "/" n[2]; ns[k] = $3
    for (i = 3; i < NF; i++) if ($(i+1) == "cpu-ns/op") cpu[k] = $i
  }
  END {
    status = 0
    split("kafka murmur3", schemes, " ")
    for (i in schemes) {
      s = schemes[i]; raw = cpu["BenchmarkRawHash/" s]; rawWall = ns["BenchmarkRawHash/" s]
      if (raw == "") { print "no BenchmarkRawHash/" s; exit 2 }
      split("BenchmarkAllTopics BenchmarkAllTopicsImage", bs, " ")
      for (j in bs) {
        b = bs[j]; v = cpu[b "/" s]; r = v / raw
        ok = (r <= 2) ? "ok  " : "MISS"; if (r > 2) status = 1
        printf "  [%s] %-24s %-8s %7.1f ms CPU vs raw %7.1f ms: %.2fx (target <= 2x); wall %.1f vs %.1f ms: %.2fx\n", ok, b, s, v / 1e6, raw / 1e6, r, ns[b "/" s] / 1e6, rawWall / 1e6, ns[b "/" s] / rawWall
      }
    }
    exit status
  }' "$out"
