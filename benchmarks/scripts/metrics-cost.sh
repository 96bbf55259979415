#!/usr/bin/env bash
# What `--metrics` costs the request path: `pistore bench --transport T --rw randread` (embedded
# target, memory volume, PI insert, 4 KiB, qd 32) without and with `--metrics 0` (the endpoint
# listening, not scraped), in separate processes, alternating off/on, on/off per round so drift on a
# shared machine falls on both. Prints, per transport, IOPS and CPU µs per request of each round,
# the on/off ratios per round and their medians (for CPU: off/on, so above 1 is cheaper with metrics).
#
# Each run ramps for RAMP seconds (default 10) before it measures: the JIT compiles the request path
# during the first seconds of a run, and a shorter ramp measures the compiler as much as the request
# path (docs/BENCHMARKS.md, "Metrics cost"). On a loaded machine give it more (RAMP=20).
#
#   [RAMP=S] benchmarks/scripts/metrics-cost.sh [ROUNDS] [SECONDS] ["local tcp"] [EXTRA BENCH OPTIONS...]
#   (from anywhere; default 6 8 "local tcp")
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
rounds="${1:-6}"
secs="${2:-8}"
transports="${3:-local tcp}"
ramp="${RAMP:-10}"
shift $(( $# > 3 ? 3 : $# ))
extra=("$@")
"$root/pistore" --version > /dev/null
run() { # TRANSPORT off|on -> "iops cpu_us_per_op"
  local m=()
  [ "$2" = on ] && m=(--metrics 0)
  "$root/pistore" bench --transport "$1" --rw randread --size 256MiB --seconds "$secs" --ramp "$ramp" --json \
      "${m[@]}" "${extra[@]}" 2>/dev/null \
    | python3 -c 'import json,sys; r = json.loads(sys.stdin.read()); print("%.0f %.3f" % (r["iops"], r["cpu"]["us_per_op"]))'
}
for t in $transports; do
  off=(); on=()
  for ((i = 0; i < rounds; i++)); do
    if ((i % 2 == 0)); then
      off+=("$(run "$t" off)"); on+=("$(run "$t" on)")
    else
      on+=("$(run "$t" on)"); off+=("$(run "$t" off)")
    fi
  done
  python3 - "$t" "${off[*]}" "${on[*]}" <<'PY'
import statistics, sys
t, a, b = sys.argv[1], sys.argv[2].split(), sys.argv[3].split()
oi, oc = [float(x) for x in a[0::2]], [float(x) for x in a[1::2]]
ni, nc = [float(x) for x in b[0::2]], [float(x) for x in b[1::2]]
ri = [y / x for x, y in zip(oi, ni)]
rc = [x / y for x, y in zip(oc, nc)]
k = lambda v: ", ".join("%.0f" % (x / 1000) for x in v)
r = lambda v: ", ".join("%.2f" % x for x in v)
print("%s: IOPS off (k) %s | on %s | on/off %s | median %.3f" % (t, k(oi), k(ni), r(ri), statistics.median(ri)))
print("%s: CPU us/request off %s | on %s | off/on %s | median %.3f (medians %.3f / %.3f)" % (t,
      r(oc), r(nc), r(rc), statistics.median(rc), statistics.median(oc), statistics.median(nc)))
PY
done
