#!/usr/bin/env bash
# An NBD client's connect through a gateway, two builds side by side: one target (`serve --transport
# tcp`, DIR_B's build) with a 64 MiB volume, and a gateway of each build in front of it (`serve --nbd
# --transport tcp --target`). Each round, A then B: 50 `nbdinfo --size` in a row; prints the
# microseconds of one (the handshake, and with a relisting gateway the volume list asked again).
#
#   benchmarks/scripts/gateway-handshake.sh DIR_A DIR_B [ROUNDS]     (from the repository root)
# DIR_A, DIR_B: repository roots holding a package build. WORK_DIR: where the volume goes (default
# /dev/shm/gateway-handshake). Needs libnbd-bin.
set -euo pipefail
A=$(cd "$1" && pwd); B=$(cd "$2" && pwd); R=${3:-5}
D=${WORK_DIR:-/dev/shm/gateway-handshake}
rm -rf "$D"; mkdir -p "$D"
stop() {
  for p in a b t; do [ -f "$D/$p.pid" ] && (cd "$B" && ./pistore stop --pid-file "$D/$p.pid" >/dev/null 2>&1) || true; done
  rm -rf "$D"
}
trap stop EXIT
(cd "$B" && ./pistore volume create --data "$D/t" img --size 64MiB >/dev/null)
(cd "$B" && ./pistore serve --data "$D/t" --transport tcp --listen 127.0.0.1:17700 --daemon --pid-file "$D/t.pid" --log-file "$D/t.log" >/dev/null)
(cd "$A" && ./pistore serve --nbd 127.0.0.1:17701 --transport tcp --target 127.0.0.1:17700 --daemon --pid-file "$D/a.pid" --log-file "$D/a.log" >/dev/null)
(cd "$B" && ./pistore serve --nbd 127.0.0.1:17702 --transport tcp --target 127.0.0.1:17700 --daemon --pid-file "$D/b.pid" --log-file "$D/b.log" >/dev/null)
for p in 17701 17702; do for i in $(seq 20); do nbdinfo --size "nbd://127.0.0.1:$p/img" >/dev/null; done; done # warm-up
for r in $(seq "$R"); do
  for p in 17701 17702; do
    s=$(date +%s%N); for i in $(seq 50); do nbdinfo --size "nbd://127.0.0.1:$p/img" >/dev/null; done; e=$(date +%s%N)
    echo "$([ $p = 17701 ] && echo A || echo B) round $r: $(( (e - s) / 50000 )) us per nbdinfo"
  done
done
