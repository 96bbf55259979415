#!/usr/bin/env bash
# Which threads of a `pistore bench` process use the CPU while it measures: runs the bench
# (`--transport local --rw randread --size 256MiB`, PI insert, qd 32; with `on`, `--metrics 0` as
# metrics-cost.sh does), waits for its first measured second, samples every thread of the process
# with `perf record -e cpu-clock` for SAMPLE seconds, and prints the bench's JSON figures and each
# thread's share of the samples. A compiler thread with a large share means the run measured the
# JIT as much as the request path: ramp longer. Needs perf (linux-perf) and
# /proc/sys/kernel/perf_event_paranoid at 2 or less (or root).
#
#   benchmarks/scripts/cpu-by-thread.sh off|on [RAMP] [SECONDS] [SAMPLE]   (default 2 10 8)
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
mode="${1:?off or on}"
ramp="${2:-2}"
secs="${3:-10}"
sample="${4:-8}"
m=()
[ "$mode" = on ] && m=(--metrics 0)
"$root/pistore" --version > /dev/null
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
"$root/pistore" bench --transport local --rw randread --size 256MiB --seconds "$secs" --ramp "$ramp" --json \
    "${m[@]}" > "$work/out" 2> "$work/err" &
launcher=$!
# the first measured second's progress line ("[local   3s] iops=...", no "ramp")
until grep -q 's\] iops' "$work/err" 2> /dev/null; do
    kill -0 "$launcher" 2> /dev/null || { cat "$work/err" >&2; exit 1; }
    sleep 0.1
done
# the launcher execs java: its pid is the JVM's
# stopped by SIGINT (it writes its data then); timeout gives it a process group of its own
timeout -s INT "$sample" perf record -e cpu-clock -F 1000 -p "$launcher" -o "$work/perf.data" > /dev/null 2>&1 || true
wait "$launcher"
python3 -c 'import json,sys; r = json.loads(sys.stdin.read()); print("'"$mode"' ramp '"$ramp"' s: iops %.0f, CPU %.2f us per request" % (r["iops"], r["cpu"]["us_per_op"]))' < "$work/out"
perf report -i "$work/perf.data" --sort comm --stdio 2> /dev/null | grep '%' | head -12
