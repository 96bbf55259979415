#!/usr/bin/env bash
# One build, two sets of JVM options for `pistore serve`, side by side: two serves (A and B) of this
# checkout over the tcp transport, each with a file volume of its own in the same directory, driven in
# turn by `pistore bench` (A then B each round) after a 128 KiB sequential fill of each. Prints per run
# the bench's result line and error counts, and the serve's CPU ticks (10 ms) over the run.
#
#   benchmarks/scripts/serve-options.sh [ROUNDS] [SECONDS]     (from the repository root)
# OPTS_A, OPTS_B: the serves' JVM options (default: A with -Dpistore.volume.mappedReads=false, B without:
# positional reads against reads out of mappings). RW (default randread), BS (4k), QD (32): the bench's
# workload. FMT (4096+8), SIZE (1GiB): the volumes. WORK_DIR: where they go (default a new directory in
# /dev/shm; a disk directory shows the disk's case).
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds="${1:-3}"
secs="${2:-8}"
opts_a="${OPTS_A--Dpistore.volume.mappedReads=false}"
opts_b="${OPTS_B:-}"
work="${WORK_DIR:-$(mktemp -d /dev/shm/serve-options.XXXXXX)}"
mkdir -p "$work"
mvn -B -q -o -DskipTests -pl app,transport-tcp -am package > /dev/null
cp="app/target/pistore-app-0.1.0-SNAPSHOT.jar:app/target/lib/*:transport-tcp/target/pistore-transport-tcp-0.1.0-SNAPSHOT.jar"
pistore() { java -cp "$cp" io.pistore.app.cli.Main "$@"; }
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2> /dev/null || true; done
    for p in "${pids[@]}"; do wait "$p" 2> /dev/null || true; done
    rm -rf "$work"
}
trap cleanup EXIT
port() { [ "$1" = A ] && echo 4471 || echo 4472; }
for side in A B; do
    mkdir -p -m 700 "$work/$side"
    pistore volume create --data "$work/$side" v --size "${SIZE:-1GiB}" --format "${FMT:-4096+8}" > /dev/null
    opts=$([ $side = A ] && echo "$opts_a" || echo "$opts_b")
    # shellcheck disable=SC2086
    java $opts -cp "$cp" io.pistore.app.cli.Main serve --data "$work/$side" --transport tcp \
        --listen 127.0.0.1:"$(port $side)" > "$work/$side.log" 2>&1 &
    pids+=($!)
done
for side in A B; do
    for i in $(seq 100); do (exec 3<> /dev/tcp/127.0.0.1/"$(port $side)") 2> /dev/null && break; sleep 0.1; done
done
bench() { pistore bench --transport tcp --no-prefill --target 127.0.0.1:"$(port "$1")" --volume v "${@:2}"; }
for side in A B; do bench $side --rw write --bs 128k --qd 16 --seconds 8 > /dev/null; done
for r in $(seq "$rounds"); do
    for side in A B; do
        pid=${pids[$([ $side = A ] && echo 0 || echo 1)]}
        c0=$(awk '{print $14+$15}' "/proc/$pid/stat")
        text=$(bench $side --rw "${RW:-randread}" --bs "${BS:-4k}" --qd "${QD:-32}" --seconds "$secs" 2>&1)
        c1=$(awk '{print $14+$15}' "/proc/$pid/stat")
        echo "round $r $side: $(grep -E '^ +iops=' <<< "$text" | head -1 | xargs) $(grep -oE 'pi_errors=[0-9]+|data_mismatches=[0-9]+' <<< "$text" | xargs) serve ticks $((c1 - c0))"
    done
done
