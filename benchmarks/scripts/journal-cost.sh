#!/usr/bin/env bash
# What the journal of file volumes costs: `pistore bench --data DIR` (embedded target, local
# transport, PI insert) of this checkout against another build of pistore (BASE: the root of a
# checkout built with its own ./pistore, e.g. `git worktree add --detach ../base REV`), alternating
# which build runs first in each round. Rows, on each directory given (tmpfs, a disk):
#   4 KiB random write at qd 1 and qd 32 on a fresh 1 GiB volume,
#   128 KiB sequential write at qd 8 on a fresh 1 GiB volume,
#   4 KiB random read at qd 32 on a 256 MiB volume that a first, unmeasured run created, prefilled
#   and closed (so no checkpoint or writeback of the prefill runs under the measured reads),
#   the flush-heavy mix: FlushLatencyProbe (one thread, 16 random 4 KiB writes then a flush, on a
#   fresh 256 MiB volume; compiled here from this checkout's source against its jars, and run
#   against each build's jars).
# Prints per row the medians of IOPS, p99 µs and µs of CPU per request of each build, and the
# median of the per-round ratios (this checkout / BASE); for the flush row: writes/s, the flush's
# p99 µs and CPU µs per write (the ratio is of writes/s; the flush p99 ratio follows it).
#
#   benchmarks/scripts/journal-cost.sh [--flush-only] BASE DIR... [-- SECONDS ROUNDS]   (defaults 4 3)
#
# --flush-only runs the flush-heavy row alone.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
flush_only=false
[ "${1:-}" = --flush-only ] && { flush_only=true; shift; }
base="$(cd "$1" && pwd)"; shift
dirs=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do dirs+=("$1"); shift; done
[ "${1:-}" = -- ] && shift
secs="${1:-4}"
rounds="${2:-3}"
"$root/pistore" --version > /dev/null
"$base/pistore" --help > /dev/null
echo "machine: $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'))"
for d in "${dirs[@]}"; do echo "$d: $(df -T "$d" | awk 'NR == 2 { print $2 }')"; done
run() { # BUILD DIR RW BS QD SIZE FRESH -> "iops p99 us_per_op"
  local b="$1" dir="$2/pistore-journal-cost"
  if [ "$7" = fresh ]; then rm -rf "$dir"; mkdir -p "$dir"; fi
  "$b/pistore" bench --data "$dir" --rw "$3" --bs "$4" --qd "$5" --size "$6" --pi insert \
      --seconds "$secs" --ramp 1 --json 2>/dev/null \
    | python3 -c 'import json,sys; r = json.loads(sys.stdin.read())
print("%.0f %.0f %.2f" % (r["iops"], r["lat_us"]["p99"], r["cpu"]["us_per_op"]))'
}
probe="$(mktemp -d)"
trap 'rm -rf "$probe"' EXIT
javac -nowarn -d "$probe" -cp "$root/app/target/lib/*" "$root/benchmarks/src/main/java/io/pistore/benchmarks/FlushLatencyProbe.java"
flushrun() { # BUILD DIR -> "writes_per_s flush_p99 us_per_write"
  local dir="$2/pistore-journal-cost"
  rm -rf "$dir"; mkdir -p "$dir"
  java -cp "$probe:$1/app/target/lib/*" io.pistore.benchmarks.FlushLatencyProbe "$dir" "$secs" \
    2>/dev/null | python3 -c 'import re,sys; t = sys.stdin.read()
m = re.search(r"p99 ([0-9.]+) us, writes/s ([0-9.]+), cpu us/write ([0-9.]+)", t)
print("%s %s %s" % (m.group(2), m.group(1), m.group(3)))'
}
row() { # DIR RW BS QD SIZE -> one line
  local now=() old=() b
  for ((i = 0; i < rounds; i++)); do
    local order=("$root" "$base")
    ((i % 2 == 1)) && order=("$base" "$root")
    for b in "${order[@]}"; do
      if [ "$2" = flush ]; then
        r="$(flushrun "$b" "$1")"
      elif [ "$2" = randread ]; then
        run "$b" "$1" randwrite 4k 32 "$5" fresh > /dev/null # creates, prefills and closes the volume
        r="$(run "$b" "$1" "$2" "$3" "$4" "$5" keep)"
      else
        r="$(run "$b" "$1" "$2" "$3" "$4" "$5" fresh)"
      fi
      if [ "$b" = "$root" ]; then now+=("$r"); else old+=("$r"); fi
    done
  done
  rm -rf "$1/pistore-journal-cost"
  python3 - "$(df -T "$1" | awk 'NR == 2 { print $2 }') $2 $3 qd $4" "${now[*]}" "${old[*]}" <<'PY'
import statistics as st, sys
name, n, o = sys.argv[1], [float(x) for x in sys.argv[2].split()], [float(x) for x in sys.argv[3].split()]
ni, op_ = n[0::3], o[0::3]
ratios = [a / b for a, b in zip(ni, op_)]
print("%-26s %10.0f %10.0f %8.0f %8.0f %7.2f %7.2f %7.2f  (per round %s)" % (name, st.median(op_), st.median(ni),
      st.median(o[1::3]), st.median(n[1::3]), st.median(o[2::3]), st.median(n[2::3]), st.median(ratios),
      " ".join("%.2f" % r for r in ratios)))
if " flush " in name + " ":
    p99 = [a / b for a, b in zip(n[1::3], o[1::3])]
    print("%-26s flush p99 journal / two-file: %.2f  (per round %s)" % ("", st.median(p99),
          " ".join("%.2f" % r for r in p99)))
PY
}
printf '%-26s %10s %10s %8s %8s %7s %7s %7s\n' row base_iops iops base_p99 p99 base_us us ratio
for d in "${dirs[@]}"; do
  if ! $flush_only; then
    row "$d" randwrite 4k 1 1GiB
    row "$d" randwrite 4k 32 1GiB
    row "$d" write 128k 8 1GiB
    row "$d" randread 4k 32 256MiB
  fi
  row "$d" flush 4k 1 256MiB
done
