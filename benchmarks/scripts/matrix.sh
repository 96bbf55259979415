#!/usr/bin/env bash
# Runs the tcp bench matrix (local vs tcp, PI insert vs off; 4 KiB random read/write at qd 1
# and 32; 128 KiB sequential read/write at qd 16) REPS times, interleaved, and prints the median of
# each cell. Host and target in one JVM (embedded 64 MiB memory volume, small enough that every
# chunk of it is allocated during the ramp). Results: JSON lines in $OUT.
#
#   benchmarks/scripts/matrix.sh [REPS] [SECONDS]      (from the repository root)
#   BENCH_ARGS="--transport-option tcp.spinMicros=0 --transport-option tcp.pollMicros=0" ...   to compare settings
set -euo pipefail
cd "$(dirname "$0")/../.."
reps="${1:-3}"
secs="${2:-3}"
out="${OUT:-target/tcp-matrix.jsonl}"
mvn -B -q -o -DskipTests -pl app,transport-tcp -am package > /dev/null
cp="app/target/pistore-app-0.1.0-SNAPSHOT.jar:app/target/lib/*:transport-tcp/target/pistore-transport-tcp-0.1.0-SNAPSHOT.jar"
mkdir -p "$(dirname "$out")"
: > "$out"
cases=("randread 4k 1" "randread 4k 32" "randwrite 4k 1" "randwrite 4k 32" "read 128k 16" "write 128k 16")
for r in $(seq "$reps"); do
  for c in "${cases[@]}"; do
    set -- $c
    for t in local tcp; do
      for pi in insert off; do
        # shellcheck disable=SC2086
        java ${JAVA_OPTS:-} -cp "$cp" io.pistore.app.cli.Main bench ${BENCH_ARGS:-} --transport "$t" --rw "$1" \
          --bs "$2" --qd "$3" --pi "$pi" --size 64MiB --seconds "$secs" --ramp 2 --json 2> /dev/null >> "$out"
      done
    done
  done
done
python3 - "$out" <<'PY'
import json, sys, statistics, collections
cells = collections.defaultdict(list)
for line in open(sys.argv[1]):
    r = json.loads(line)
    cells[(r["rw"], r["bs"], r["qd"], r["transport"], r["pi"])].append(r)
print("%-9s %6s %3s %-6s %-6s %9s %9s %8s %8s  (median of %s)" % ("rw", "bs", "qd", "trans", "pi", "iops", "MiB/s", "p50_us", "p99_us", "n"))
for k in sorted(cells, key=lambda k: (k[0], k[1], k[2], k[3], k[4])):
    v = cells[k]
    med = lambda f: statistics.median(f(x) for x in v)
    print("%-9s %6d %3d %-6s %-6s %9.0f %9.1f %8.1f %8.1f  (%d)" % (k[0], k[1], k[2], k[3], k[4],
          med(lambda x: x["iops"]), med(lambda x: x["mib_per_s"]), med(lambda x: x["lat_us"]["p50"]),
          med(lambda x: x["lat_us"]["p99"]), len(v)))
PY
