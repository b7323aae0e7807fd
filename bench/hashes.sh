#!/usr/bin/env bash
# bench/hashes.sh: every topic hash of a 1M-partition cluster (10,000 topics x 100
# partitions, RF 3, 12 brokers in 4 racks) against the raw hash over the very bytes the
# scheme hashes (issue 14, goal 4), in one run of BenchmarkHashes (hashcache): each
# iteration times three passes one after the other, in rotating order, in CPU time of
# the benchmark's thread: "raw" (XXH3 for the kafka scheme, Murmur3 for murmur3, over
# the scheme's bytes), "topics" (hashcachetest topics) and "image" (the same cluster as
# an image.Image, what kraftwatch hashes). Prints, per scheme and pass, the minimum and
# median over the iterations, and the ratio scheme / raw of each iteration's passes
# (median; the ratio of the minima beside it), and exits 1 when a median ratio is above
# 2x.
#
#   bench/hashes.sh                      # BENCHTIME=20x iterations
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
GO=${GO:-go}
BENCHTIME=${BENCHTIME:-20x}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
"$GO" test -run '^$' -bench '^BenchmarkHashes$' -benchtime "$BENCHTIME" -benchmem ./hashcache/ | tee "$out"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
awk '
  /^BenchmarkHashes\// {
    split($1, n, "/"); s = n[2]; sub(/-[0-9]+$/, "", s); seen[s] = 1
    for (i = 3; i < NF; i++) v[s, $(i+1)] = $i
  }
  END {
    status = 0
    split("kafka murmur3", schemes, " ")
    for (k = 1; k <= 2; k++) {
      s = schemes[k]
      if (!seen[s]) { print "no BenchmarkHashes/" s; exit 2 }
      printf "%s: raw %.2f ms CPU (median %.2f, wall min %.2f)\n", s, v[s, "raw-cpu-ms-min"], v[s, "raw-cpu-ms-med"], v[s, "raw-wall-ms-min"]
      split("topics image", ps, " ")
      for (j = 1; j <= 2; j++) {
        p = ps[j]; r = v[s, p "/raw-cpu-med"]
        ok = (r <= 2) ? "ok  " : "MISS"; if (r > 2) status = 1
        printf "  [%s] %-6s %6.2f ms CPU (median %.2f, wall min %.2f): %.2fx raw (median of the iterations; minima %.2fx; target <= 2x)\n", ok, p, v[s, p "-cpu-ms-min"], v[s, p "-cpu-ms-med"], v[s, p "-wall-ms-min"], r, v[s, p "/raw-cpu-min"]
      }
    }
    exit status
  }' "$out"
