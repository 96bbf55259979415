#!/usr/bin/env bash
# Two builds of pistore side by side: `pistore bench` (embedded target, one process) with each build in
# turn, alternating which goes first in each repetition (ABBA), over the same cases. Prints one line per
# run and, at the end, per case the median IOPS and CPU per request of each build and their ratio (B/A).
#
#   benchmarks/scripts/two-builds.sh DIR_A DIR_B [REPS] [SECONDS]     (from the repository root)
# DIR_A, DIR_B: repository roots holding a package build (app/target/*.jar and app/target/lib,
# transport-*/target/*.jar), e.g. a git worktree of an older commit built with
# `mvn -B -q -DskipTests -pl app,transport-tcp -am package`.
# CASES: "transport:pi:rw ..." (default "tcp:insert:randwrite tcp:insert:randread tcp:pass:randwrite
# tcp:pass:randread local:insert:randwrite local:insert:randread"); BENCH_OPTS: more bench options
# (default "--bs 4k --qd 32 --ramp 2 --size 64MiB"). Output also in OUT (default target/two-builds.txt).
set -euo pipefail
cd "$(dirname "$0")/../.."
a="${1:?DIR_A}"
b="${2:?DIR_B}"
reps="${3:-5}"
secs="${4:-3}"
out="${OUT:-target/two-builds.txt}"
mkdir -p "$(dirname "$out")"
: > "$out"
# shellcheck source=lib-builds.sh
. benchmarks/scripts/lib-builds.sh
cp_a="$(classpath "$a")"
cp_b="$(classpath "$b")"
run() { # NAME CLASSPATH TRANSPORT PI RW
    local text
    # shellcheck disable=SC2086
    text="$(java ${JAVA_OPTS:-} --add-exports java.base/sun.nio.ch=ALL-UNNAMED -cp "$2" io.pistore.app.cli.Main bench \
        --transport "$3" --pi "$4" --rw "$5" --seconds "$secs" ${BENCH_OPTS:---bs 4k --qd 32 --ramp 2 --size 64MiB} 2>&1)"
    local iops cpu
    iops="$(sed -n 's/^  iops=\([0-9]*\) .*/\1/p' <<< "$text" | tail -n 1)"
    cpu="$(sed -n 's/^  cpu: .*, \([0-9.]*\) us per request.*/\1/p' <<< "$text" | tail -n 1)"
    if [ -z "$iops" ] || [ -z "$cpu" ]; then
        echo "$text" >&2
        echo "no figures from build $1 ($3 $4 $5)" >&2
        exit 1
    fi
    printf '%s %s:%s:%s iops=%s cpu_us=%s\n' "$1" "$3" "$4" "$5" "$iops" "$cpu" | tee -a "$out"
}
for r in $(seq "$reps"); do
    for c in ${CASES:-tcp:insert:randwrite tcp:insert:randread tcp:pass:randwrite tcp:pass:randread local:insert:randwrite local:insert:randread}; do
        IFS=: read -r t p w <<< "$c"
        if [ $((r % 2)) -eq 1 ]; then
            run A "$cp_a" "$t" "$p" "$w"
            run B "$cp_b" "$t" "$p" "$w"
        else
            run B "$cp_b" "$t" "$p" "$w"
            run A "$cp_a" "$t" "$p" "$w"
        fi
    done
done
python3 - "$out" << 'EOF' | tee -a "$out"
import re, statistics, sys
runs = {}
for line in open(sys.argv[1]):
    m = re.match(r'(A|B) (\S+) iops=(\d+) cpu_us=([\d.]+)', line)
    if m:
        runs.setdefault(m[2], {}).setdefault(m[1], []).append((int(m[3]), float(m[4])))
print('%-24s %12s %12s %6s %10s %10s %6s' % ('case', 'iops A', 'iops B', 'B/A', 'cpu_us A', 'cpu_us B', 'B/A'))
for case, by in runs.items():
    ia = statistics.median(x[0] for x in by['A']); ib = statistics.median(x[0] for x in by['B'])
    ca = statistics.median(x[1] for x in by['A']); cb = statistics.median(x[1] for x in by['B'])
    print('%-24s %12d %12d %6.2f %10.2f %10.2f %6.2f' % (case, ia, ib, ib / ia, ca, cb, cb / ca))
EOF
