#!/usr/bin/env bash
# Host and target in two processes: `pistore serve --transport tcp` on a file volume directory and
# `pistore bench --transport tcp --target`, against `nbdkit memory` read by `fio --ioengine=nbd`,
# interleaved REPS times: 4 KiB random read at qd 1 and qd 32 (PI insert and off for pistore).
#
#   benchmarks/scripts/two-process.sh [REPS] [SECONDS]     (from the repository root)
# Needs nbdkit and fio (with the nbd engine) for the comparison; skips them when missing.
set -euo pipefail
cd "$(dirname "$0")/../.."
reps="${1:-3}"
secs="${2:-4}"
port=4431
nbdport=10809
data="$(mktemp -d)"
out="${OUT:-target/tcp-two-process.txt}"
mvn -B -q -o -DskipTests -pl app,transport-tcp -am package > /dev/null
cp="app/target/pistore-app-0.1.0-SNAPSHOT.jar:app/target/lib/*:transport-tcp/target/pistore-transport-tcp-0.1.0-SNAPSHOT.jar"
pistore() { java ${JAVA_OPTS:-} -cp "$cp" io.pistore.app.cli.Main "$@"; }
pistore volume create --data "$data" --size 256MiB --format 4096+8 pi > /dev/null
pistore volume create --data "$data" --size 256MiB --format 4096+0 nopi > /dev/null
if (exec 3<> /dev/tcp/127.0.0.1/$port) 2> /dev/null; then
    echo "port $port is in use (an earlier serve?)" >&2
    exit 2
fi
# shellcheck disable=SC2086
java ${JAVA_OPTS:-} -cp "$cp" io.pistore.app.cli.Main serve --transport tcp --data "$data" \
    --listen 127.0.0.1:$port > "$data/serve.log" 2>&1 &
serve=$!
nbd=""
if command -v nbdkit > /dev/null && command -v fio > /dev/null; then
    nbdkit -p $nbdport -i 127.0.0.1 -P "$data/nbdkit.pid" memory 256M
    nbd=$(cat "$data/nbdkit.pid")
fi
cleanup() {
    kill "$serve" 2> /dev/null || true
    wait "$serve" 2> /dev/null || true
    [ -n "$nbd" ] && kill "$nbd" 2> /dev/null || true
    rm -rf "$data"
}
trap cleanup EXIT
sleep 3
: > "$out"
for r in $(seq "$reps"); do
    for qd in 1 32; do
        for vol in pi nopi; do
            pi=insert; [ "$vol" = nopi ] && pi=off
            pistore bench --transport tcp --target 127.0.0.1:$port --volume $vol --rw randread --bs 4k --qd $qd \
                --pi $pi --seconds "$secs" --ramp 2 --json 2> /dev/null | python3 -c "
import json,sys; r=json.loads(sys.stdin.read())
print('pistore-tcp randread qd=%d pi=%-6s iops=%7d p50=%7.1f p99=%7.1f' % (r['qd'], r['pi'], r['iops'], r['lat_us']['p50'], r['lat_us']['p99']))" | tee -a "$out"
        done
        if [ -n "$nbd" ]; then
            fio --name=nbd --ioengine=nbd --uri=nbd://127.0.0.1:$nbdport --rw=randread --bs=4k --iodepth=$qd \
                --runtime="$secs" --ramp_time=2 --time_based --size=256M --output-format=json 2> /dev/null \
                | sed -n '/^{/,$p' | python3 -c "
import json,sys; j=json.load(sys.stdin)['jobs'][0]['read']; p=j['clat_ns']['percentile']
print('nbdkit-fio  randread qd=%d pi=none   iops=%7d p50=%7.1f p99=%7.1f' % ($qd, j['iops'], p['50.000000']/1e3, p['99.000000']/1e3))" | tee -a "$out"
        fi
    done
done
