#!/usr/bin/env bash
# rdma (the soft NIC) against tcp, 4 KiB qd 32 random read and random write, PI insert, in one
# process (embedded target, memory volume; rdma's in-process fabric) and in two (`pistore serve` on a
# file volume, `pistore bench --target`; rdma's packet path over a loopback socket), interleaved REPS
# times (the order of the four shapes turns each rep). Prints one line per run and, at the end, the
# median IOPS of each shape and the rdma/tcp ratio paired rep by rep.
#
#   benchmarks/scripts/rdma-processes.sh [REPS] [SECONDS]     (from the repository root)
set -euo pipefail
cd "$(dirname "$0")/../.."
reps="${1:-3}"
secs="${2:-4}"
tport=4432
rport=4521
dt="$(mktemp -d)"
dr="$(mktemp -d)"
out="${OUT:-target/rdma-processes.txt}"
mvn -B -q -o -DskipTests -pl app,transport-tcp,transport-rdma -am package > /dev/null
cp="app/target/pistore-app-0.1.0-SNAPSHOT.jar:app/target/lib/*:transport-tcp/target/pistore-transport-tcp-0.1.0-SNAPSHOT.jar"
cp="$cp:transport-rdma/target/pistore-transport-rdma-0.1.0-SNAPSHOT.jar:transport-rdma/target/lib/*"
pistore() { java --add-exports java.base/sun.nio.ch=ALL-UNNAMED ${JAVA_OPTS:-} -cp "$cp" io.pistore.app.cli.Main "$@"; }
for p in $tport $rport; do
    if (exec 3<> /dev/tcp/127.0.0.1/$p) 2> /dev/null; then
        echo "port $p is in use (an earlier serve?)" >&2
        exit 2
    fi
done
pistore volume create --data "$dt" --size 256MiB --format 4096+8 v > /dev/null
pistore volume create --data "$dr" --size 256MiB --format 4096+8 v > /dev/null
# java directly (not the function): $! must be the JVM, so that the cleanup stops it
# shellcheck disable=SC2086
java --add-exports java.base/sun.nio.ch=ALL-UNNAMED ${JAVA_OPTS:-} -cp "$cp" io.pistore.app.cli.Main serve \
    --transport tcp --data "$dt" --listen 127.0.0.1:$tport > "$dt/serve.log" 2>&1 &
st=$!
# shellcheck disable=SC2086
java --add-exports java.base/sun.nio.ch=ALL-UNNAMED ${JAVA_OPTS:-} -cp "$cp" io.pistore.app.cli.Main serve \
    --transport rdma --data "$dr" --listen 127.0.0.1:$rport > "$dr/serve.log" 2>&1 &
sr=$!
cleanup() {
    kill "$st" "$sr" 2> /dev/null || true
    wait "$st" "$sr" 2> /dev/null || true
    rm -rf "$dt" "$dr"
}
trap cleanup EXIT
sleep 3
: > "$out"
shapes=("tcp one" "rdma one" "tcp two" "rdma two")
for r in $(seq "$reps"); do
    for rw in randread randwrite; do
        for i in 0 1 2 3; do
            s=(${shapes[$(( (i + r) % 4 ))]})
            t=${s[0]}
            target=()
            if [ "${s[1]}" = two ]; then
                port=$tport; [ "$t" = rdma ] && port=$rport
                target=(--target 127.0.0.1:$port --volume v)
            fi
            pistore bench --transport "$t" "${target[@]}" --rw $rw --bs 4k --qd 32 --pi insert --seconds "$secs" \
                --ramp 1 --json 2> /dev/null | python3 -c "
import json,sys; r=json.loads(sys.stdin.read())
print('rep=$r %-4s %-3s processes %-9s iops=%7d p50=%7.1f p99=%8.1f errors=%d' % ('$t', '${s[1]}', '$rw', r['iops'],
      r['lat_us']['p50'], r['lat_us']['p99'], r['pi_errors'] + r['io_errors'] + r['data_mismatches']))" | tee -a "$out"
        done
    done
done
python3 - "$out" <<'PY'
import re, statistics, sys
runs = {}
for line in open(sys.argv[1]):
    m = re.match(r'rep=(\d+) (\S+)\s+(\S+) processes (\S+)\s+iops=\s*(\d+)', line)
    if m:
        rep, t, shape, rw, iops = m.groups()
        runs.setdefault((shape, rw, t), {})[rep] = int(iops)
print()
for shape in ('one', 'two'):
    for rw in ('randread', 'randwrite'):
        tcp, rdma = runs.get((shape, rw, 'tcp'), {}), runs.get((shape, rw, 'rdma'), {})
        ratios = [rdma[k] / tcp[k] for k in tcp if k in rdma and tcp[k]]
        if ratios:
            print('%s process(es) %-9s tcp median %7d  rdma median %7d  rdma/tcp median %.2f (per rep %s)' % (
                shape, rw, statistics.median(tcp.values()), statistics.median(rdma.values()),
                statistics.median(ratios), ' '.join('%.2f' % x for x in ratios)))
PY
