#!/usr/bin/env bash
# Block status through an NBD gateway over tcp, two builds side by side: for each build a target
# (`serve --transport tcp`) with one 512 MiB volume written whole from /dev/urandom, and a gateway in
# front of it (`serve --nbd --transport tcp --target`). Each round, A then B: `qemu-img convert` out of
# the gateway (it asks every range's status first) with `cmp` against the source, then `nbdinfo --map`.
# Prints the seconds of each and the CPU ticks of the target and the gateway over the convert.
#
#   benchmarks/scripts/gateway-status.sh DIR_A DIR_B [ROUNDS]     (from the repository root)
# DIR_A, DIR_B: repository roots holding a package build (as for two-builds.sh). FMT: the volume's
# format (default 512+8). WORK_DIR: where the volumes and images go (default a directory in /dev/shm;
# 2.5 GiB). Needs qemu-utils, qemu-block-extra and libnbd-bin.
set -euo pipefail
cd "$(dirname "$0")/../.."
a="${1:?DIR_A}"
b="${2:?DIR_B}"
rounds="${3:-3}"
fmt="${FMT:-512+8}"
work="${WORK_DIR:-$(mktemp -d /dev/shm/gateway-status.XXXXXX)}"
mkdir -p "$work"
cpof() { echo "$1/app/target/pistore-app-0.1.0-SNAPSHOT.jar:$1/app/target/lib/*:$1/transport-tcp/target/pistore-transport-tcp-0.1.0-SNAPSHOT.jar"; }
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2> /dev/null || true; done
    sleep 1
    rm -rf "$work"
}
trap cleanup EXIT
ticks() { awk '{print $14+$15}' "/proc/$1/stat"; }
now() { date +%s.%N; }
head -c 512M /dev/urandom > "$work/src.img"
for side in a b; do
    dir=$([ $side = a ] && echo "$a" || echo "$b")
    cp=$(cpof "$dir")
    d="$work/$side"
    mkdir -p -m 700 "$d"
    port=$([ $side = a ] && echo 4461 || echo 4462)
    nport=$([ $side = a ] && echo 10861 || echo 10862)
    java -cp "$cp" io.pistore.app.cli.Main volume create --data "$d" v --size 512MiB --format "$fmt" > /dev/null
    java -cp "$cp" io.pistore.app.cli.Main serve --data "$d" --transport tcp --listen 127.0.0.1:$port --daemon \
        --pid-file "$d/target.pid" > /dev/null
    java -cp "$cp" io.pistore.app.cli.Main serve --nbd 127.0.0.1:$nport --transport tcp --target 127.0.0.1:$port \
        --daemon --pid-file "$d/gateway.pid" --log-file "$d/gateway.log" > /dev/null
    pids+=("$(cat "$d/target.pid")" "$(cat "$d/gateway.pid")")
    qemu-img convert -n -f raw -O raw "$work/src.img" nbd://127.0.0.1:$nport/v
done
for r in $(seq "$rounds"); do
    for side in a b; do
        d="$work/$side"
        nport=$([ $side = a ] && echo 10861 || echo 10862)
        tp=$(cat "$d/target.pid")
        gp=$(cat "$d/gateway.pid")
        t0=$(now); c0=$(ticks "$tp"); g0=$(ticks "$gp")
        qemu-img convert -f raw -O raw nbd://127.0.0.1:$nport/v "$work/out.img"
        t1=$(now); c1=$(ticks "$tp"); g1=$(ticks "$gp")
        nbdinfo --map nbd://127.0.0.1:$nport/v > /dev/null
        t2=$(now)
        same=$(cmp -s "$work/src.img" "$work/out.img" && echo identical || echo DIFFERENT)
        rm -f "$work/out.img"
        awk -v r="$r" -v s="$side" -v t0="$t0" -v t1="$t1" -v t2="$t2" -v c=$((c1 - c0)) -v g=$((g1 - g0)) -v same="$same" \
            'BEGIN { printf "round %s build %s: convert %.2f s (target %d ticks, gateway %d ticks), map %.3f s, %s\n",
                     r, toupper(s), t1 - t0, c, g, t2 - t1, same }'
    done
done
