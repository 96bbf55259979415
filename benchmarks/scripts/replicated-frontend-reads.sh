#!/usr/bin/env bash
# 4 KiB random reads at qd 32 of a replicated volume through a frontend of the leader itself: three
# `serve` peers of BUILD (the root of a built checkout) on loopback, each with `--nbd` or `--iscsi`,
# a 256 MiB 4096+8 volume in $TMPDIR (tmpfs: TMPDIR=/dev/shm), written whole first; then fio's nbd
# engine or benchmarks/scripts/iscsi_bench.c (libiscsi) on the leader: RAMP seconds of the load
# unmeasured, then SECS measured seconds of it. Prints reads/s and the peers' CPU per read (from /proc, the measured window less
# 4 s). Compare builds by alternating them, e.g.
#
#   for r in 1 2 3; do for b in ../before .; do
#       TMPDIR=/dev/shm benchmarks/scripts/replicated-frontend-reads.sh $b iscsi; done; done
#
#   benchmarks/scripts/replicated-frontend-reads.sh BUILD nbd|iscsi   (SECS 15, RAMP 8)
#
# MODE=write measures 4 KiB random writes at qd 32 instead; with nbd, MODE=trim 4 KiB random trims
# (deallocations) at qd 32, and MODE=commit a database's commits: 4 KiB random writes one at a time,
# each followed by a flush (fio's fsync=1), counted as commits/s.
set -uo pipefail
build="$(cd "$1" && pwd)"; frontend="$2"; secs="${SECS:-15}"; ramp="${RAMP:-8}"; mode="${MODE:-read}"
root="$(cd "$(dirname "$0")/../.." && pwd)"
cp="$build/app/target/pistore-app-0.1.0-SNAPSHOT.jar:$build/app/target/lib/*:$build/transport-tcp/target/pistore-transport-tcp-0.1.0-SNAPSHOT.jar"
pistore() { java -cp "$cp" io.pistore.app.cli.Main "$@"; }
d=$(mktemp -d); P=n1=127.0.0.1:9961,n2=127.0.0.1:9962,n3=127.0.0.1:9963
pids=()
trap 'for p in "${pids[@]}"; do kill -9 "$p" 2> /dev/null; done; rm -rf "$d"' EXIT
case "$frontend" in
    nbd) opt() { echo "--nbd 127.0.0.1:1081$1"; } ;;
    iscsi) opt() { echo "--iscsi 127.0.0.1:326$1"; }
           gcc -O2 -o "$d/iscsi_bench" "$root/benchmarks/scripts/iscsi_bench.c" -liscsi || exit 1 ;;
    *) echo "frontend: nbd or iscsi" >&2; exit 2 ;;
esac
for i in 1 2 3; do
    pistore volume create rv --size 256MiB --format 4096+8 --data "$d/d$i" --replica-id n$i --replicas $P > /dev/null 2>&1
done
for i in 1 2 3; do
    java -cp "$cp" io.pistore.app.cli.Main serve --data "$d/d$i" --listen 127.0.0.1:542$i --replica-id n$i --replica-listen 127.0.0.1:996$i $(opt $i) \
        > "$d/s$i.log" 2>&1 &
    pids+=($!)
done
L=""
for _ in $(seq 40); do
    sleep 1
    L=$(pistore replicas status rv --replicas $P 2> /dev/null | sed -n 's/^volume rv: leader n\([123]\).*/\1/p')
    [ -n "$L" ] && break
done
[ -n "$L" ] || { echo "no leader" >&2; exit 1; }
if [ "$frontend" = nbd ]; then
    u=nbd://127.0.0.1:1081$L/rv
    fio --name=w --ioengine=nbd --uri=$u --rw=write --bs=128k --iodepth=16 --size=256M > /dev/null 2>&1
    case "$mode" in
        commit) job="--rw=randwrite --iodepth=1 --fsync=1"; side=write ;;
        write) job="--rw=randwrite --iodepth=32"; side=write ;;
        trim) job="--rw=randtrim --iodepth=32"; side=trim ;;
        *) job="--rw=randread --iodepth=32"; side=read ;;
    esac
    (fio --name=r --ioengine=nbd --uri=$u $job --bs=4k --time_based --runtime="$ramp" > /dev/null 2>&1
     fio --name=r --ioengine=nbd --uri=$u $job --bs=4k --time_based --runtime="$secs" \
        --output-format=json 2> /dev/null | sed -n '/^{/,$p' | python3 -c 'import json,sys; print(json.load(sys.stdin)["jobs"][0]["'$side'"]["iops"])' \
        > "$d/iops") &
else
    u=iscsi://127.0.0.1:326$L/iqn.2026-12.io.pistore:rv/0
    "$d/iscsi_bench" $u write seq 131072 16 6 0 > /dev/null
    (# the ramp runs the same load, so that the measured seconds find the JIT done with it
     "$d/iscsi_bench" $u "$mode" rand 4096 32 "$ramp" 0 268435456 > /dev/null
     "$d/iscsi_bench" $u "$mode" rand 4096 32 "$secs" 0 268435456 | awk '{print $2}' > "$d/iops") &
fi
b=$!
ticks() { for p in "${pids[@]}"; do awk '{print $14 + $15}' /proc/$p/stat; done | awk '{s += $1} END {print s}'; }
sleep $((ramp + 2)); t0=$(ticks); sleep $((secs - 4)); t1=$(ticks)
wait $b
[ -s "$d/iops" ] || { echo "the client failed" >&2; exit 1; }
python3 -c "import sys; iops = float(open('$d/iops').read()); print('%-6s %s %ss/s %8.0f  peers cpu/%s %5.2f us' % ('$frontend', '$1', '$mode', iops, '$mode', ($t1 - $t0) * 1e6 / $(getconf CLK_TCK) / (iops * ($secs - 4))))"
