#!/usr/bin/env bash
# How the transports scale with queues on this machine: `pistore bench` (embedded target, memory
# volume, 4 KiB random reads with PI insert, qd 32 per queue) for local, tcp and rdma over 1, 2, 4, …
# queues up to the number of CPUs, then the tcp PI insert/off paired ratio at 1 queue and at the CPU
# count. Prints one row per run: IOPS, cores busy, µs of CPU per request.
#
#   benchmarks/scripts/scaling.sh [SECONDS] [TRANSPORTS]     (from anywhere; default 3 "local tcp rdma")
#   EXTRA="--transport-option tcp.ioThreads=4" benchmarks/scripts/scaling.sh    to pin settings
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
secs="${1:-3}"
transports="${2:-local tcp rdma}"
cpus="$(nproc)"
queues=()
for ((q = 1; q < cpus; q *= 2)); do queues+=("$q"); done
queues+=("$cpus")
"$root/pistore" --version > /dev/null
echo "machine: $cpus CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'))"
printf '%-6s %6s %10s %7s %8s\n' transport queues iops cores us/req
for t in $transports; do
  for q in "${queues[@]}"; do
    # shellcheck disable=SC2086
    "$root/pistore" bench --transport "$t" --queues "$q" --rw randread --bs 4k --qd 32 --pi insert \
        --seconds "$secs" --ramp 1 --size 256MiB --json ${EXTRA:-} 2>/dev/null \
      | python3 -c 'import json,sys
r = json.loads(sys.stdin.read())
print("%-6s %6d %10.0f %7.2f %8.2f" % (r["transport"], r["queues"], r["iops"], r["cpu"]["cores"], r["cpu"]["us_per_op"]))'
  done
done
for q in 1 "$cpus"; do
  # shellcheck disable=SC2086
  "$root/pistore" bench --transport tcp --queues "$q" --rw randread --bs 4k --qd 32 --pi insert,off --rounds 6 \
      --seconds 1 --ramp 0 --size 256MiB --json ${EXTRA:-} 2>/dev/null | tail -n 1 \
    | python3 -c 'import json,sys
r = json.loads(sys.stdin.read())["side_by_side"]["modes"][0]
print("tcp PI insert/off at %s queue(s): %.3f (median of 6 rounds, %.3f to %.3f)" % (sys.argv[1], r["ratio_median"], r["ratio_min"], r["ratio_max"]))' "$q"
done
