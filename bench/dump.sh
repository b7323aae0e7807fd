#!/usr/bin/env bash
# bench/dump.sh: peak RSS of `kraftwatch dump` (text and --json) against `kraftwatch
# hashes` on the same 1M-partition snapshot (dump streams its
# output). hashes holds the image and nothing much beside it, so it is the anchor:
# dump may not need more than 1.1x its peak RSS. Exits 1 when it does.
#
#   bench/dump.sh                        # 10,000 topics x 100 partitions
#   bench/dump.sh -topics 1000           # extra flags go to tools/metagen
#
# Needs Go and GNU time (/usr/bin/time).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
GO=${GO:-go}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$GO" build -o "$work/kraftwatch" .
"$GO" run ./tools/metagen -topics 10000 -partitions 100 -out "$work/log" "$@" >/dev/null
dir="$work/log/__cluster_metadata-0"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
rss() { # peak RSS in kB of the command, its output discarded
  /usr/bin/time -f %M -o "$work/rss" "$@" >/dev/null 2>"$work/err" || { cat "$work/err" >&2; return 1; }
  cat "$work/rss"
}
hashes=$(rss "$work/kraftwatch" hashes "$dir")
text=$(rss "$work/kraftwatch" dump "$dir")
json=$(rss "$work/kraftwatch" dump --json "$dir")
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
status=0
report() { # name kB
  local ratio
  ratio=$(awk -v a="$2" -v b="$hashes" 'BEGIN { printf "%.2f", a / b }')
  local ok="ok  "
  if awk -v r="$ratio" 'BEGIN { exit !(r > 1.1) }'; then ok="MISS"; status=1; fi
  printf '  [%s] %-22s peak RSS %6.1f MB = %sx hashes (%.1f MB), target <= 1.1x\n' "$ok" "$1" "$(awk -v k="$2" 'BEGIN{print k/1024}')" "$ratio" "$(awk -v k="$hashes" 'BEGIN{print k/1024}')"
}
report "kraftwatch dump" "$text"
report "kraftwatch dump --json" "$json"
exit $status
