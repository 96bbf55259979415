#!/usr/bin/env bash
# pistore's iSCSI frontend against tgt on one workload, alternating, ROUNDS times: IOPS and the CPU
# time per request of the server process and of the client (iscsi_bench.c over libiscsi), so that a
# run shows where a 2-CPU machine's time goes and how far a server's own thread is from a core.
#
#   benchmarks/scripts/iscsi-vs-tgt-cpu.sh [ROUNDS] [SECONDS]     (default 3 rounds of 5 s)
# RW read|write, MODE seq|rand, BS bytes, QD (default: 128 KiB sequential reads at qd 8), PROTECT
# (pistore only; tgt refuses a non-zero protect field), WORK_DIR (default a new directory under
# /tmp, removed after; one named is kept). Volume 512+8 Type 1 of 1 GiB, tgt's rdwr store on a
# sparse file of 1 GiB beside it, the first 256 MiB of each written with qemu-img first. Needs root
# (tgtd), tgt, gcc, libiscsi-dev, qemu-utils, qemu-block-extra.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
rounds="${1:-3}"
secs="${2:-5}"
rw="${RW:-read}" mode="${MODE:-seq}" bs="${BS:-131072}" qd="${QD:-8}" prot="${PROTECT:-0}"
iport=13270
tport=13272
ctl=$((RANDOM % 200 + 20))
work="${WORK_DIR:-$(mktemp -d)}"
mkdir -p "$work"
pids=()
# shellcheck source=lib-tgt.sh
. "$root/benchmarks/scripts/lib-tgt.sh"
trap tgt_cleanup EXIT
gcc -O2 -Wall -o "$work/iscsi_bench" "$root/benchmarks/scripts/iscsi_bench.c" -liscsi
"$root/pistore" volume create --data "$work/data" vol --size 1024MiB --format 512+8 > /dev/null
"$root/pistore" serve --data "$work/data" --iscsi "127.0.0.1:$iport" > "$work/pistore.log" 2>&1 &
pids+=($!)
ppid=$!
tgt_up "$work" "$tport" "$ctl" 1024
tpid=$tgt_pid
for _ in $(seq 300); do
    grep -q "iSCSI on" "$work/pistore.log" && break
    sleep 0.2
done
grep -q "iSCSI on" "$work/pistore.log" || { cat "$work/pistore.log" >&2; exit 3; }
up="iscsi://127.0.0.1:$iport/iqn.2026-12.io.pistore:vol/0"
ut="$tgt_url"
span=$((256 << 20))
for u in "$up" "$ut"; do
    qemu-img bench -f raw -t none -w -c 256 -s 1M -d 8 "$u" > /dev/null
    "$work/iscsi_bench" "$u" "$rw" "$mode" "$bs" "$qd" 3 0 "$span" > /dev/null
done
cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; }
tck="$(getconf CLK_TCK)"
row() { # URL SERVER_PID NAME PROTECT
    local c0 c1 out
    c0="$(cpu "$2")"
    out="$( { /usr/bin/time -f "client %U %S" "$work/iscsi_bench" "$1" "$rw" "$mode" "$bs" "$qd" "$secs" "$4" "$span"; } 2>&1 )"
    c1="$(cpu "$2")"
    python3 - "$3" "$c0" "$c1" "$tck" << PY
import sys
lines = """$out""".splitlines()
req, iops = [l for l in lines if not l.startswith("client")][0].split()[:2]
u, s = [float(x) for x in [l for l in lines if l.startswith("client")][0].split()[1:]]
n = int(req)
print("%-8s iops=%6s server_us_per_req=%6.1f client_us_per_req=%5.1f (user %4.1f, system %4.1f)" % (
    sys.argv[1], iops, (int(sys.argv[3]) - int(sys.argv[2])) * 1e6 / int(sys.argv[4]) / n, (u + s) * 1e6 / n, u * 1e6 / n, s * 1e6 / n))
PY
}
echo "$(nproc) CPUs; $rw $mode bs=$bs qd=$qd, $secs s a run, pistore protect $prot; in $work"
for _ in $(seq "$rounds"); do
    row "$up" "$ppid" pistore "$prot"
    row "$ut" "$tpid" tgt 0
done
