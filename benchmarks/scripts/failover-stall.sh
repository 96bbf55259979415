#!/usr/bin/env bash
# The longest a client waits when one peer of a replicated volume fails: three `serve` peers of BUILD
# (the root of a built checkout) on loopback, each with --nbd, a 16 MiB 4096+8 volume in $TMPDIR, an
# NBD gateway (`serve --nbd --transport tcp --target` every peer) in front; 8 MiB copied in with
# nbdcopy; then a client (python, NBD by hand) sends 4 KiB requests one at a time for SECS seconds,
# and 5 s in the leader (KILL=leader) or a follower (KILL=follower) gets SIG (9, or STOP: it resumes
# 6 s later). Prints every request that took over 0.2 s, the count and the longest wait, and errors.
#
#   benchmarks/scripts/failover-stall.sh BUILD          (SECS 15, KILL leader, SIG 9, MODE read)
#
# MODE=write sends writes, MODE=rw reads and writes in turn; VIA=follower puts the client on a
# follower's own --nbd instead of the gateway (a client that stays where it is).
set -uo pipefail
build="$(cd "$1" && pwd)"; secs="${SECS:-15}"; kill_which="${KILL:-leader}"; sig="${SIG:-9}"
cp="$build/app/target/pistore-app-0.1.0-SNAPSHOT.jar:$build/app/target/lib/*:$build/transport-tcp/target/pistore-transport-tcp-0.1.0-SNAPSHOT.jar"
pistore() { java -cp "$cp" io.pistore.app.cli.Main "$@"; }
serve() { # LOG ARGS...: a serve in the background, its java's pid added to pids
    local log=$1; shift
    java -cp "$cp" io.pistore.app.cli.Main serve "$@" > "$log" 2>&1 &
    pids+=($!)
}
d=$(mktemp -d); P=n1=127.0.0.1:9951,n2=127.0.0.1:9952,n3=127.0.0.1:9953
pids=()
trap 'for p in "${pids[@]}"; do kill -CONT "$p" 2> /dev/null; kill -9 "$p" 2> /dev/null; done; [ -n "${KEEP:-}" ] || rm -rf "$d"' EXIT
for i in 1 2 3; do
    pistore volume create rv --size 16MiB --format 4096+8 --data "$d/d$i" --replica-id n$i --replicas $P > /dev/null || exit 1
done
for i in 1 2 3; do
    serve "$d/serve$i.log" --data "$d/d$i" --listen 127.0.0.1:445$i --replica-id n$i --replica-listen 127.0.0.1:995$i \
        --nbd 127.0.0.1:1082$i
done
leader=""
for _ in $(seq 60); do
    leader=$(pistore replicas status rv --replicas $P 2> /dev/null | sed -n 's/^volume rv: leader n\([123]\),.*/\1/p')
    [ -n "$leader" ] && break
    sleep 1
done
[ -n "$leader" ] || { echo "no leader within 60 s" >&2; exit 1; }
serve "$d/gateway.log" --nbd 127.0.0.1:10820 --transport tcp --target 127.0.0.1:4451,127.0.0.1:4452,127.0.0.1:4453
head -c 8M /dev/urandom > "$d/img"
for try in 1 2 3 4 5 6 7 8 9 10; do
    nbdcopy "$d/img" nbd://127.0.0.1:10820/rv 2> "$d/nbdcopy.err" && break
    [ $try = 10 ] && { cat "$d/nbdcopy.err" "$d/gateway.log"; exit 1; }
    sleep 1
done
follower=$((leader % 3 + 1))
port=10820; [ "${VIA:-gateway}" = follower ] && port=1082$follower
victim=$leader; [ "$kill_which" = follower ] && victim=$follower
[ "${VIA:-gateway}" = follower ] && [ "$kill_which" = follower ] && victim=$((follower % 3 + 1))
echo "leader n$leader; client on $([ $port = 10820 ] && echo the gateway || echo "n$follower"); SIG$sig to n$victim 5 s in"
MODE="${MODE:-read}" python3 - 127.0.0.1 $port rv "$secs" <<'PY' &
import os, socket, struct, sys, time
host, port, name, secs = sys.argv[1], int(sys.argv[2]), sys.argv[3].encode(), float(sys.argv[4])
mode = os.environ['MODE']
s = socket.create_connection((host, port)); s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
def rx(n):
    b = b''
    while len(b) < n:
        c = s.recv(n - len(b))
        if not c: raise EOFError('the server closed the connection')
        b += c
    return b
rx(18); s.sendall(struct.pack('>I', 1))                                   # fixed newstyle
s.sendall(struct.pack('>QII', 0x49484156454F5054, 1, len(name)) + name)   # NBD_OPT_EXPORT_NAME
size, _ = struct.unpack('>QH', rx(10)); rx(124)
end = time.time() + secs; n = errors = 0; worst = 0.0
while time.time() < end:
    off = (n * 4096 * 7) % size; write = mode == 'write' or (mode == 'rw' and n % 2)
    t0 = time.time()
    if write:
        s.sendall(struct.pack('>IHHQQI', 0x25609513, 0, 1, n, off, 4096) + bytes([n % 251]) * 4096)
    else:
        s.sendall(struct.pack('>IHHQQI', 0x25609513, 0, 0, n, off, 4096))
    _, err, _ = struct.unpack('>IIQ', rx(16))
    if not err and not write: rx(4096)
    dt = time.time() - t0
    if err: errors += 1; print('request %d: error %d' % (n, err), flush=True)
    if dt > 0.2: print('request %d (%s) took %.2f s' % (n, 'write' if write else 'read', dt), flush=True)
    worst = max(worst, dt); n += 1
print('requests %d, errors %d, longest %.2f s' % (n, errors, worst))
PY
client=$!
sleep 5
victim_pid=${pids[$((victim - 1))]}
kill -"$sig" "$victim_pid"
if [ "$sig" = STOP ]; then sleep 6; kill -CONT "$victim_pid"; fi
wait $client
