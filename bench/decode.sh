#!/usr/bin/env bash
# bench/decode.sh: what a subscriber pays to decode and check one event (events.Decode),
# against encoding/json on the same bytes in the same run: Unmarshal into the same Go
# types without any check, and Valid (syntax only). CPU time of the process per event
# (getrusage; other processes on the machine inflate it less than wall time) and
# allocations. Targets: the golden rebalance-needed event in at most 10 us of CPU and 36
# allocations (a few dozen), and no slower than the unchecked Unmarshal. Exits 1 when one
# is missed.
#
#   bench/decode.sh                  # BENCHTIME=20000x COUNT=5 (medians)
#   BEFORE=8d10140 bench/decode.sh   # also BenchmarkDecode of that commit, run alternately
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
GO=${GO:-go}
BENCHTIME=${BENCHTIME:-20000x}
COUNT=${COUNT:-5}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$GO" test -c -o "$tmp/after.test" ./events/
if [ -n "${BEFORE:-}" ]; then
  mkdir "$tmp/before"
  git archive "$BEFORE" | tar -x -C "$tmp/before"
  (cd "$tmp/before" && "$GO" test -c -o "$tmp/before.test" ./events/)
fi
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
for i in $(seq "$COUNT"); do
  if [ -n "${BEFORE:-}" ]; then
    (cd "$tmp/before/events" && "$tmp/before.test" -test.run '^$' -test.bench '^BenchmarkDecode$' \
      -test.benchtime "$BENCHTIME" -test.benchmem) | sed -n 's/^BenchmarkDecode-[0-9]*/before/p' | tee -a "$tmp/out"
  fi
  (cd events && "$tmp/after.test" -test.run '^$' -test.bench '^BenchmarkDecode' -test.benchtime "$BENCHTIME" \
    -test.benchmem) | grep '^Benchmark' | tee -a "$tmp/out"
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
awk -v before="${BEFORE:-}" '
  { c = $1; sub(/-[0-9]+$/, "", c); sub(/^Benchmark/, "", c)
    for (i = 3; i < NF; i += 2) { k[c, $(i+1)]++; v[c, $(i+1), k[c, $(i+1)]] = $i } }
  function median(c, unit,   m, a, i, j, t) {
    m = k[c, unit]
    if (m == 0) { print "no " unit " for " c; exit 2 }
    for (i = 1; i <= m; i++) a[i] = v[c, unit, i]
    for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
    return (m % 2) ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
  }
  END {
    cpu = median("Decode", "cpu-ns/op"); wall = median("Decode", "ns/op"); allocs = median("Decode", "allocs/op")
    um = median("DecodeAnchor/json.Unmarshal", "cpu-ns/op"); valid = median("DecodeAnchor/json.Valid", "cpu-ns/op")
    rb = median("DecodeRebalanced", "cpu-ns/op"); rba = median("DecodeRebalanced", "allocs/op")
    okCPU = cpu <= 10000; okAllocs = allocs <= 36; okUm = cpu <= um
    printf "  [%s] rebalance-needed (golden): %.2f us CPU (wall %.2f us), target <= 10 us\n", okCPU ? "ok  " : "MISS", cpu / 1e3, wall / 1e3
    printf "  [%s]   %d allocations, target <= 36\n", okAllocs ? "ok  " : "MISS", allocs
    printf "  [%s]   %.2fx encoding/json Unmarshal into the same types, unchecked (%.2f us), target <= 1x\n", okUm ? "ok  " : "MISS", cpu / um, um / 1e3
    printf "         %.2fx encoding/json Valid on the same bytes (%.2f us)\n", cpu / valid, valid / 1e3
    printf "         rebalanced (golden): %.2f us CPU, %d allocations\n", rb / 1e3, rba
    if (before != "") {
      bw = median("before", "ns/op"); ba = median("before", "allocs/op")
      printf "         before (%s): %.2f us wall, %d allocations: %.1fx the wall time now\n", before, bw / 1e3, ba, bw / wall
    }
    exit !(okCPU && okAllocs && okUm)
  }' "$tmp/out"
