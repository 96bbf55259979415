#!/usr/bin/env bash
# Two builds of pistore side by side through the iSCSI frontend: one `serve --iscsi` of each build on
# its own volume (same format), both running, driven in turn by iscsi_bench.c (libiscsi), A then B in
# each round. Prints per run the requests, IOPS, MiB/s, errors and the serve process's CPU per request.
#
#   benchmarks/scripts/iscsi-two-builds.sh DIR_A DIR_B [ROUNDS] [SECONDS]     (from the repository root)
# DIR_A, DIR_B: repository roots holding a package build (as for two-builds.sh).
# FMT: the volumes' format (default 512+8); RW read|write, MODE seq|rand, BS bytes, QD (default a
# 128 KiB sequential write at qd 8), PROTECT the RDPROTECT/WRPROTECT field (default 0), over the first
# 256 MiB of a 1 GiB volume, FILL seconds of 128 KiB writes first (default 0; reads want it), after one unmeasured
# run of each. Needs gcc and libiscsi-dev. Output also in OUT (default target/iscsi-two-builds.txt).
# SERVE_OPTS: JVM options of both serves. PROTECT_B: build B's protect field (default PROTECT):
# `PROTECT=0 PROTECT_B=1 ... . . 4 5` sets PI from the initiator against protect 0 on one build.
set -euo pipefail
cd "$(dirname "$0")/../.."
a="${1:?DIR_A}"
b="${2:?DIR_B}"
rounds="${3:-3}"
secs="${4:-8}"
out="${OUT:-target/iscsi-two-builds.txt}"
mkdir -p "$(dirname "$out")"
: > "$out"
work="$(mktemp -d)"
gcc -O2 -Wall -o "$work/iscsi_bench" benchmarks/scripts/iscsi_bench.c -liscsi
# shellcheck source=lib-builds.sh
. benchmarks/scripts/lib-builds.sh
trap stop_at_exit EXIT
port=3296
for x in a b; do
    cp="$(classpath "${!x}")"
    mkdir -m 700 "$work/$x"
    java -cp "$cp" io.pistore.app.cli.Main volume create w --size 1GiB --format "${FMT:-512+8}" --data "$work/$x" > /dev/null
    # shellcheck disable=SC2086 # SERVE_OPTS is a list of options
    java ${SERVE_OPTS:-} -cp "$cp" io.pistore.app.cli.Main serve --data "$work/$x" --iscsi 127.0.0.1:$port \
        --listen 127.0.0.1:$((port + 1200)) > "$work/$x.log" 2>&1 &
    pids+=($!)
    port=$((port + 1))
done
for _ in $(seq 30); do
    grep -q "iSCSI on" "$work/a.log" && grep -q "iSCSI on" "$work/b.log" && break
    sleep 1
done
url() { echo "iscsi://127.0.0.1:$1/iqn.2026-12.io.pistore:w/0"; }
bench() { # PORT SECONDS [PROTECT]
    "$work/iscsi_bench" "$(url "$1")" "${RW:-write}" "${MODE:-seq}" "${BS:-131072}" "${QD:-8}" "$2" "${3:-${PROTECT:-0}}" 268435456
}
if [ "${FILL:-0}" -gt 0 ]; then
    for p in 3296 3297; do
        "$work/iscsi_bench" "$(url $p)" write seq 131072 8 "$FILL" 0 268435456 > /dev/null
    done
fi
bench 3296 3 > /dev/null
bench 3297 3 "${PROTECT_B:-${PROTECT:-0}}" > /dev/null
for r in $(seq "$rounds"); do
    i=0
    for x in a b; do
        pid=${pids[$i]}
        c0=$(awk '{print $14+$15}' "/proc/$pid/stat")
        protect="${PROTECT:-0}"
        [ "$x" = b ] && protect="${PROTECT_B:-$protect}"
        res=$(bench $((3296 + i)) "$secs" "$protect")
        c1=$(awk '{print $14+$15}' "/proc/$pid/stat")
        ops=$(echo "$res" | awk '{print $1}')
        echo "round $r build $x: requests iops mib_s errors = $res, cpu_us_per_req=$(( (c1 - c0) * 1000000 / $(getconf CLK_TCK) / (ops > 0 ? ops : 1) ))" | tee -a "$out"
        i=$((i + 1))
    done
done
