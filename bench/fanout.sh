#!/usr/bin/env bash
# bench/fanout.sh: one change read by 10,000 groups, published into a local JetStream.
# It starts a nats-server process (the version go.mod requires,
# JetStream on file storage in a temporary directory) and runs, against it:
#
#   BenchmarkFanout10k   engine + publisher in one process, as kraftwatch runs them:
#                        10k groups read a topic, a partition is added (one metadata
#                        update, the batch as the observer hands it on), until the
#                        last of the 10k events reaches a JetStream consumer of the
#                        stream. Target <= 500 ms.
#   BenchmarkPublish10k  the publisher alone, 10k events of new groups (new-groups),
#                        without LoadLastPublished (lazy) and the next transition of
#                        known groups (next-transition): events/s stored in kraftwatch's
#                        stream (acked; the events stream's copy, made by sourcing,
#                        follows on its own) and allocations per event of the whole
#                        process (the server is another process). Targets: new-groups
#                        and next-transition >= 50,000 events/s and <= 20 allocations
#                        per event.
#   BenchmarkJetStreamRaw10k  the anchor, in the same run against the same server: the
#                        same bytes published with nothing but nats.go's async publish,
#                        1024 in flight: raw (no headers, a plain stream), headers
#                        (kraftwatch's four headers), republish (with kraftwatch's stream's
#                        subject transform and republish), sourced (the events stream
#                        sourcing it, no republish) and shape (both: what kraftwatch's
#                        streams make the server do for each event). The ratios say how
#                        far kraftwatch is from a client that does nothing else, and how
#                        much of the server's cost the two-stream design costs; atomic
#                        (republish's streams and headers as nats-server's atomic
#                        batches of 100: one PubAck per batch) what batch publish costs,
#                        two (republish with the groups split over two streams) what
#                        one stream's one goroutine in nats-server limits.
#
# Then, unless PROFILE_SECONDS=0, where nats-server's CPU goes: the server runs with its
# profiling port, and a CPU profile of PROFILE_SECONDS (10) is taken while
# BenchmarkPublish10k runs (new-groups and next-transition in events-none, new-groups in
# events-stream) and while the anchor's raw runs, each again and again until its profile
# ends. Each part of the server's work is printed as its share of the profile and in us
# per event (the share times the server CPU per event those runs measured), with the
# ceiling of one stream: nats-server stores, answers and republishes every message of a
# stream in one goroutine (stream.internalLoop), so a stream takes at most
# 1 s / (that goroutine's CPU per event) events/s, however many cores the machine has.
#
# BenchmarkFanout10k and BenchmarkPublish10k run in both modes of the streams, in the
# same run: events-none (KRAFTWATCH_EVENTS_STREAM=none, kraftwatch's stream alone: the
# mode docs/events.md recommends for throughput, on which the targets are checked and the exit
# status depends) and events-stream (the default, the events stream sourcing it: its
# figures are printed beside, each saying whether it meets the target).
#
# Both also report the CPU time per event of the benchmark's process and of the
# server, which move much less with the machine's load than wall time does: their sum
# bounds the events/s the machine's cores can give at best.
#
# It prints each figure with its target and exits 1 when one is missed in events-none. The machine's
# load matters (the server, the publisher and everything else share its cores): the
# load average is printed before and after.
#
#   bench/fanout.sh                 # BENCHTIME=5x COUNT=3 PROFILE_SECONDS=10
#
# Needs Go. The end to end figure with real Kafka (append time -> the last event at a
# subscriber) is bench/sidecar.sh's BenchmarkSidecar10kGroups.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
GO=${GO:-go}
BENCHTIME=${BENCHTIME:-5x}
COUNT=${COUNT:-3}
PROFILE_SECONDS=${PROFILE_SECONDS:-10}
work=$(mktemp -d)
server=
cleanup() {
  if [ -n "$server" ]; then kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

"$GO" build -o "$work/nats-server" github.com/nats-io/nats-server/v2
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
pport=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$work/nats-server" -a 127.0.0.1 -p "$port" -js -sd "$work/store" --profile "$pport" >"$work/nats-server.log" 2>&1 &
server=$!
for _ in $(seq 100); do
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then break; fi
  sleep 0.1
done
export KRAFTWATCH_BENCH_NATS_URL="nats://127.0.0.1:$port" KRAFTWATCH_BENCH_NATS_PID=$server

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
"$GO" test -run '^$' -bench '^BenchmarkFanout10k$/' -benchtime "$BENCHTIME" -count "$COUNT" ./engine/ | tee "$work/out"
"$GO" test -run '^$' -bench '^(BenchmarkPublish10k|BenchmarkJetStreamRaw10k)$/' -benchtime "$BENCHTIME" -count "$COUNT" ./publish/ | tee -a "$work/out"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"

# Medians over the COUNT runs of each figure.
awk -v cores="$(nproc)" '
  /^Benchmark/ {
    name = $1; sub(/-[0-9]+$/, "", name)
    for (i = 3; i < NF; i += 2) { n[name, $(i+1)]++; v[name, $(i+1), n[name, $(i+1)]] = $i }
  }
  function median(name, unit,   k, a, i, j, t) {
    k = n[name, unit]
    if (k == 0) { print "no figure " unit " of " name; bad = 1; return 0 }
    for (i = 1; i <= k; i++) a[i] = v[name, unit, i]
    for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
    return (k % 2) ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2
  }
  # check: the target on the throughput mode (events-none: KRAFTWATCH_EVENTS_STREAM=none),
  # which sets the exit status, with the figure of the default (events-stream) beside it.
  function check(label, none, def, op, want, unit,   ok, dok) {
    ok = (op == "<=") ? none <= want : none >= want
    dok = (op == "<=") ? def <= want : def >= want
    if (!ok) status = 1
    printf "  [%s] %-42s %9.1f %-8s (target %s %s) | default %9.1f: %s\n", ok ? "ok  " : "MISS", label, none, unit, op, want, def, dok ? "meets it" : "misses it"
  }
  function cpu(who, none, def) {
    printf "  %-49s %6.1f us %s + %.1f us nats-server | default %.1f + %.1f us\n", "  CPU per event", median(none, "cpu-us/event"), who, median(none, "server-cpu-us/event"), median(def, "cpu-us/event"), median(def, "server-cpu-us/event")
  }
  END {
    status = 0
    print "  KRAFTWATCH_EVENTS_STREAM=none (kraftwatch'"'"'s stream alone; the targets are checked here) | default (the events stream sourcing it)"
    f = "BenchmarkFanout10k"
    check("one change, 10k groups -> last consumed", median(f "/events-none", "ms-to-last"), median(f "/events-stream", "ms-to-last"), "<=", 500, "ms")
    printf "  %-49s %9.0f events/s | default %.0f\n", "  events/s, decision to last event consumed", median(f "/events-none", "events/s"), median(f "/events-stream", "events/s")
    cpu("kraftwatch", f "/events-none", f "/events-stream")
    split("new-groups next-transition lazy", modes, " ")
    for (i = 1; i <= 3; i++) {
      b = "BenchmarkPublish10k/events-none/" modes[i]; d = "BenchmarkPublish10k/events-stream/" modes[i]
      if (modes[i] == "lazy") {
        printf "  %-49s %9.0f events/s, %.1f allocs/event | default %.0f, %.1f (no target: a read per group)\n", "  publish " modes[i], median(b, "events/s"), median(b, "allocs/event"), median(d, "events/s"), median(d, "allocs/event")
        continue
      }
      check("publish " modes[i] " events/s (acked)", median(b, "events/s"), median(d, "events/s"), ">=", 50000, "events/s")
      check("publish " modes[i] " allocations/event", median(b, "allocs/event"), median(d, "allocs/event"), "<=", 20, "allocs")
      cpu("publisher", b, d)
    }
    print "  anchor: the same bytes, nats.go async publish and nothing else (BenchmarkJetStreamRaw10k)"
    split("raw headers republish sourced shape atomic two", am, " ")
    for (i = 1; i <= 7; i++) {
      a = "BenchmarkJetStreamRaw10k/" am[i]
      printf "    %-47s %9.0f events/s, %.1f us client + %.1f us nats-server per event\n", am[i], median(a, "events/s"), median(a, "cpu-us/event"), median(a, "server-cpu-us/event")
    }
    ng = median("BenchmarkPublish10k/events-none/new-groups", "events/s")
    dg = median("BenchmarkPublish10k/events-stream/new-groups", "events/s")
    printf "  %-49s %9.2f (kraftwatch events-none new-groups / anchor republish: the same server work)\n", "  ratio", ng / median("BenchmarkJetStreamRaw10k/republish", "events/s")
    printf "  %-49s %9.2f (kraftwatch default new-groups / anchor shape: the same server work)\n", "  ratio", dg / median("BenchmarkJetStreamRaw10k/shape", "events/s")
    printf "  %-49s %9.2f (kraftwatch events-none new-groups / default new-groups)\n", "  ratio", ng / dg
    printf "  %-49s %9.2f (kraftwatch events-none new-groups / anchor raw)\n", "  ratio", ng / median("BenchmarkJetStreamRaw10k/raw", "events/s")
    printf "  %-49s %9.2f (anchor two / anchor republish, events/s: two streams against one, the same server CPU per event)\n", "  ratio", median("BenchmarkJetStreamRaw10k/two", "events/s") / median("BenchmarkJetStreamRaw10k/republish", "events/s")
    printf "  %-49s %9.2f (server CPU per event, anchor shape / anchor republish: what the events stream costs)\n", "  ratio", median("BenchmarkJetStreamRaw10k/shape", "server-cpu-us/event") / median("BenchmarkJetStreamRaw10k/republish", "server-cpu-us/event")
    for (i = 1; i <= 2; i++) {
      m = (i == 1) ? "events-none" : "events-stream"
      b = "BenchmarkPublish10k/" m "/new-groups"
      printf "  %-49s %9.0f events/s (%d cores / (kraftwatch + server CPU per event), new-groups)\n", "  bound by CPU, " m, cores * 1e6 / (median(b, "cpu-us/event") + median(b, "server-cpu-us/event")), cores
    }
    exit status || bad
  }' "$work/out" && status=0 || status=$?

[ "$PROFILE_SECONDS" = 0 ] && exit "$status"
# Where nats-server's CPU goes: profile the server while one benchmark runs over and over.
"$GO" test -c -o "$work/publish.test" ./publish/
profile() { # name, benchmark pattern, benchtime
  curl -sf -o "$work/$1.prof" "http://127.0.0.1:$pport/debug/pprof/profile?seconds=$PROFILE_SECONDS" &
  local c=$!
  : >"$work/$1.out"
  while kill -0 "$c" 2>/dev/null; do
    (cd publish && "$work/publish.test" -test.run '^$' -test.bench "$2" -test.benchtime "$3") >>"$work/$1.out"
  done
  wait "$c" || echo "  no profile of $1: curl of the server's profiling port failed"
}
# share NAME FOCUS [IGNORE]: the percentage of profile NAME's samples with a frame matching FOCUS
share() {
  "$GO" tool pprof -top -nodecount=1000000 -nodefraction=0 -edgefraction=0 -focus="$2" ${3:+-ignore="$3"} "$work/$1.prof" 2>/dev/null |
    sed -n 's/^Showing nodes accounting for [^,]*, \([0-9.]*\)% of .*/\1/p'
}
echo "load average before the profiles: $(cut -d' ' -f1-3 /proc/loadavg)"
names=(none next default raw)
profile none '^BenchmarkPublish10k$/^events-none$/^new-groups$' 5x
# 10x: next-transition's untimed first round (new groups) is 1/11 of the profile
profile next '^BenchmarkPublish10k$/^events-none$/^next-transition$' 10x
profile default '^BenchmarkPublish10k$/^events-stream$/^new-groups$' 5x
profile raw '^BenchmarkJetStreamRaw10k$/^raw$' 5x
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
declare -A per # server CPU per event of each profile's runs (their mean)
for n in "${names[@]}"; do
  per[$n]=$(awk '/^Benchmark/ { for (i = 3; i < NF; i += 2) if ($(i+1) == "server-cpu-us/event") { s += $i; k++ } } END { if (k) printf "%.2f", s / k }' "$work/$n.out")
done
echo "  where nats-server's CPU goes: share of a CPU profile of the server (${PROFILE_SECONDS} s each) and us per event"
echo "  (the parts overlap: a frame of one can be in the stack of another)"
printf '  %-66s %16s %16s %16s %16s\n' "" "none new-groups" "none next-trans." "default new-gr." "anchor raw"
printf '  %-66s' "server CPU per event (the profiled runs' mean)"
for n in "${names[@]}"; do printf ' %13s us' "${per[$n]:-?}"; done
echo
part() { # label, focus, ignore
  printf '  %-66s' "$1"
  for n in "${names[@]}"; do
    local v
    v=$(share "$n" "$2" "${3:-}")
    awk -v v="${v:-0}" -v per="${per[$n]:-0}" 'BEGIN { printf " %5.1f%% %5.1f us", v, v * per / 100 }'
  done
  echo
}
part "the stream's goroutine (stream.internalLoop), all of it" 'stream\).internalLoop$'
part "  store (fileStore.StoreMsg)" 'fileStore\).StoreMsg$'
part "    of which the write of each message to its block (pwrite)" 'flushPendingMsgsLocked$'
part "  the subject's last message (expected seq; republish's last seq)" 'fileStore\).LoadLastMsg$'
part "  Nats-Msg-Id dedupe (lookup, record, expiry)" 'checkMsgId$|storeMsgIdLocked$|getMsgId$|purgeMsgIds$'
part "  subject transform (internal -> public subject)" 'subjectTransform\).Match$'
part "  republish: formatting its Nats-Stream, -Sequence, ... headers" 'fmt.Appendf$|time.Time.Format$'
part "  delivering the answers and the republished copies" 'stream\).internalLoop$' 'processJetStreamMsg'
part "per-subject state (subject trees, all callers)" 'server/stree\.'
part "header lookups (sliceHeader, all callers)" 'server.sliceHeader$'
part "sourcing into the events stream (its consumer, the copies)" 'SourceMsg|\(\*consumer\)\.'
part "reading the publishes (client readLoop: parse, route to stream)" 'client\).readLoop$'
part "Go GC (background mark workers)" 'gcBgMarkWorker$'
for n in none next raw; do
  awk -v n="$n" -v v="$(share "$n" 'stream\).internalLoop$')" -v per="${per[$n]:-0}" 'BEGIN {
    us = v * per / 100
    if (us > 0) printf "  ceiling of one stream (%s): 1 s / %.1f us of its goroutine per event = %.0f events/s on a core of its own\n", n, us, 1e6 / us
  }'
done
exit "$status"
