#!/usr/bin/env bash
# 4 KiB qd 1 latency over tcp (embedded target, one JVM, PI insert) under several I/O-thread waiting
# settings, ROUNDS times interleaved, beside the bare loopback ping-pong floor. Each row also shows
# the process CPU time per second of run (what polling costs). Usage:
#   benchmarks/scripts/tcp-latency.sh [ROUNDS] [SECONDS] ["SPIN/POLL ..."]
#   benchmarks/scripts/tcp-latency.sh 3 4 "0/0 50/200 250/500"
# SPIN/POLL are the options tcp.spinMicros / tcp.pollMicros (0/0 = always block in select()).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
rounds="${1:-3}"
seconds="${2:-4}"
settings="${3:-0/0 50/200 250/500}"
out="$(mktemp -d)"
"$root/pistore" --version > /dev/null
mvn -B -q -o -f "$root/pom.xml" -DskipTests -pl benchmarks -am package > /dev/null
for r in $(seq 1 "$rounds"); do
  for s in $settings; do
    spin="${s%/*}"; poll="${s#*/}"
    /usr/bin/time -f "%U %S" -o "$out/time" \
      "$root/pistore" bench --transport tcp --transport-option "tcp.spinMicros=$spin" \
      --transport-option "tcp.pollMicros=$poll" --rw randread --bs 4k --qd 1 --pi insert --seconds "$seconds" --ramp 2 \
      --size 64MiB --json 2>/dev/null | tr -d '\n' >> "$out/$spin-$poll.jsonl"
    echo " $(cat "$out/time")" >> "$out/$spin-$poll.jsonl"
  done
  java -cp "$root/benchmarks/target/pistore-benchmarks-0.1.0-SNAPSHOT.jar:$root/benchmarks/target/lib/*" \
    io.pistore.benchmarks.tcp.LoopbackPingPong 4096 "$seconds" >> "$out/pingpong.txt"
done
python3 - "$out" "$seconds" <<'PY'
import json, os, statistics, sys
d, secs = sys.argv[1], float(sys.argv[2])
print(f"{'spin/poll us':>12} {'iops':>8} {'p50_us':>7} {'p99_us':>8} {'cpu_s/s':>7}  (median of runs; cpu = whole JVM incl. start-up and ramp)")
for f in sorted(x for x in os.listdir(d) if x.endswith('.jsonl')):
    rows = []
    for l in open(os.path.join(d, f)):
        j, t = l.rsplit('}', 1)
        u, s = map(float, t.split())
        r = json.loads(j + '}'); r['cpu'] = (u + s) / (secs + 2)
        rows.append(r)
    med = lambda g: statistics.median(g(r) for r in rows)
    print(f"{f[:-6].replace('-', '/'):>12} {med(lambda r: r['iops']):8.0f} {med(lambda r: r['lat_us']['p50']):7.1f} "
          f"{med(lambda r: r['lat_us']['p99']):8.1f} {med(lambda r: r['cpu']):7.2f}  (n={len(rows)})")
print(open(os.path.join(d, 'pingpong.txt')).read().strip())
PY
