#!/usr/bin/env bash
# Runs `pistore bench` over a matrix of transports, patterns, queue depths and PI modes, ROUNDS times
# interleaved (so a change in machine load hits every cell alike), and prints the median of each
# cell. Usage: benchmarks/scripts/bench-matrix.sh [ROUNDS] [SECONDS] [TRANSPORTS] [extra bench options...]
#   benchmarks/scripts/bench-matrix.sh 3 5 "local tcp"
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
rounds="${1:-3}"
seconds="${2:-5}"
transports="${3:-local}"
shift $(( $# > 3 ? 3 : $# ))
extra=("$@")
out="$(mktemp -d)"
"$root/pistore" --version > /dev/null
cells=()
for t in $transports; do
  for rw in randread randwrite; do for qd in 1 32; do for pi in insert off; do cells+=("$t $rw 4k $qd $pi"); done; done; done
  for rw in read write; do for pi in insert off; do cells+=("$t $rw 128k 8 $pi"); done; done
done
for r in $(seq 1 "$rounds"); do
  for c in "${cells[@]}"; do
    read -r t rw bs qd pi <<< "$c"
    "$root/pistore" bench --transport "$t" --rw "$rw" --bs "$bs" --qd "$qd" --pi "$pi" --seconds "$seconds" --ramp 2 \
        --size 1GiB --json ${extra[@]+"${extra[@]}"} 2>/dev/null >> "$out/$(echo "$c" | tr ' ' _).jsonl" || echo "failed: $c" >&2
  done
done
python3 - "$out" <<'PY'
import json, os, statistics, sys
d = sys.argv[1]
print(f"{'transport':9} {'rw':9} {'bs':>4} {'qd':>3} {'pi':6} {'iops':>9} {'MiB/s':>8} {'p50_us':>8} {'p99_us':>8} {'errors':>6}  (median of {{n}})".replace('{n}', 'runs'))
for f in sorted(os.listdir(d), key=lambda x: x):
    rows = [json.loads(l) for l in open(os.path.join(d, f)) if l.strip()]
    t, rw, bs, qd, pi = f[:-6].split('_')
    med = lambda k: statistics.median(r[k] for r in rows)
    p = lambda k: statistics.median(r['lat_us'][k] for r in rows)
    err = sum(r['pi_errors'] + r['io_errors'] + r['data_mismatches'] for r in rows)
    print(f"{t:9} {rw:9} {bs:>4} {qd:>3} {pi:6} {med('iops'):9.0f} {med('mib_per_s'):8.1f} {p('p50'):8.1f} {p('p99'):8.1f} {err:6d}  (n={len(rows)})")
PY
