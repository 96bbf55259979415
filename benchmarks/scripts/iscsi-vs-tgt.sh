#!/usr/bin/env bash
# pistore's iSCSI frontend against tgt (tgtd serving a file on the same file system) and against
# pistore's own NBD frontend, side by side in one run: 4 KiB random read and write at qd 1 and 32,
# 128 KiB sequential read and write at qd 8, and on pistore PI carried from the initiator
# (RDPROTECT/WRPROTECT 1) against protect 0. Prints the command of each tool and a Markdown table
# with IOPS, MiB/s and the server's CPU time per request (utime + stime of its process over the
# run, from /proc/PID/stat). Loopback only; about 3 minutes at the default 5 s a run.
#
#   benchmarks/scripts/iscsi-vs-tgt.sh [SECONDS_PER_RUN]   (default 5)
#   WORK_DIR=DIR   where the volume and tgt's file live (default: a new directory under /tmp)
#
# Clients: iSCSI rows run benchmarks/scripts/iscsi_bench.c (libiscsi's asynchronous API, built here
# with gcc), the NBD rows fio's nbd engine with the same sizes and depths. pistore serves one
# 512+8 Type 1 volume from --data through both frontends in one process; tgt serves a sparse file
# of the same size with its default rdwr backing store (512-byte blocks). Needs root for tgtd.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
secs="${1:-5}"
size_mib=1024
span=$((256 << 20))
iport=13260
nport=13261
tport=13262
ctl=$((RANDOM % 200 + 20))
for t in gcc tgtd tgtadm fio qemu-img python3; do
    command -v "$t" > /dev/null || { echo "iscsi-vs-tgt: $t is not installed (Debian: libiscsi-dev gcc tgt fio qemu-utils qemu-block-extra)" >&2; exit 2; }
done
[ -f /usr/include/iscsi/iscsi.h ] || { echo "iscsi-vs-tgt: libiscsi's headers are not installed (libiscsi-dev)" >&2; exit 2; }
work="${WORK_DIR:-$(mktemp -d)}"
mkdir -p "$work"
pids=()
# shellcheck source=lib-tgt.sh
. "$root/benchmarks/scripts/lib-tgt.sh"
trap tgt_cleanup EXIT

for p in $iport $nport $tport; do
    if (exec 3<> "/dev/tcp/127.0.0.1/$p") 2> /dev/null; then
        echo "iscsi-vs-tgt: port $p is in use (a server left from an earlier run?)" >&2
        exit 3
    fi
done
gcc -O2 -Wall -o "$work/iscsi_bench" "$root/benchmarks/scripts/iscsi_bench.c" -liscsi
"$root/pistore" volume create --data "$work/data" vol --size "${size_mib}MiB" --format 512+8 > /dev/null
"$root/pistore" serve --data "$work/data" --iscsi "127.0.0.1:$iport" --nbd "127.0.0.1:$nport" > "$work/pistore.log" 2>&1 &
ppid=$!
pids+=($ppid)
tgt_up "$work" "$tport" "$ctl" "$size_mib"
tpid=$tgt_pid
for i in $(seq 1 300); do
    grep -q "iSCSI on" "$work/pistore.log" 2> /dev/null && break
    sleep 0.2
done
grep -q "iSCSI on" "$work/pistore.log" || { cat "$work/pistore.log" >&2; exit 3; }

url_p="iscsi://127.0.0.1:$iport/iqn.2026-12.io.pistore:vol/0"
url_t="$tgt_url"
uri_n="nbd://127.0.0.1:$nport/vol"

cpu() { # PID -> utime + stime in clock ticks
    awk '{print $14 + $15}' "/proc/$1/stat"
}
tck="$(getconf CLK_TCK)"

# Fill the working set (reads read data, not holes), then warm both servers.
for u in "$url_p" "$url_t"; do
    qemu-img bench -f raw -t none -w -c $((span >> 20)) -s 1M -d 8 "$u" > /dev/null
    "$work/iscsi_bench" "$u" write rand 4096 32 3 0 "$span" > /dev/null
    "$work/iscsi_bench" "$u" read rand 4096 32 3 0 "$span" > /dev/null
done
fio --name=warm --ioengine=nbd --uri="$uri_n" --size=$((span >> 20))M --rw=randrw --bs=4k --iodepth=32 \
    --time_based --runtime=3 > /dev/null

iscsi_row() { # URL SERVER_PID rw pattern bytes qd protect -> "iops mibs cpu_us_per_request"
    local c0 c1 out
    c0="$(cpu "$2")"
    out="$("$work/iscsi_bench" "$1" "$3" "$4" "$5" "$6" "$secs" "$7" "$span")"
    c1="$(cpu "$2")"
    python3 -c "r, iops, mib, err = '$out'.split(); print('%s %s %.1f' % (iops, mib, ($c1 - $c0) * 1e6 / $tck / int(r)))"
}
nbd_row() { # rw pattern bytes qd -> "iops mibs cpu_us_per_request"
    local rw c0 c1
    case "$2" in rand) rw="rand$1" ;; *) rw="$1" ;; esac
    c0="$(cpu "$ppid")"
    fio --name=bench --ioengine=nbd --uri="$uri_n" --size=$((span >> 20))M --rw="$rw" --bs="$3" --iodepth="$4" \
        --time_based --runtime="$secs" --numjobs=1 --output-format=json > "$work/fio.json" 2> "$work/fio.err" \
        || { cat "$work/fio.err" >&2; exit 3; }
    c1="$(cpu "$ppid")"
    python3 - "$work/fio.json" "$c0" "$c1" "$tck" << 'PY'
import json, sys
text = open(sys.argv[1]).read()
j = json.loads(text[text.index("{"):])["jobs"][0]
d = j["read"] if j["read"]["io_bytes"] > 0 else j["write"]
n = d["total_ios"]
print("%.0f %.1f %.1f" % (d["iops"], d["bw_bytes"] / 1048576.0, (int(sys.argv[3]) - int(sys.argv[2])) * 1e6 / int(sys.argv[4]) / n))
PY
}

echo "$(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(date -u +%Y-%m-%dT%H:%MZ)"
echo "tgt $(tgtd --version 2>&1 | head -1), fio $(fio --version | sed 's/fio-//'), libiscsi $(dpkg-query -W -f '${Version}' libiscsi7 2> /dev/null || echo '?'); load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "pistore: serve --data DIR --iscsi --nbd, volume 512+8 Type 1 of ${size_mib} MiB; tgt: tgtd, rdwr file of ${size_mib} MiB, both in $work"
echo "iSCSI: iscsi_bench URL RW rand|seq BYTES QD $secs PROTECT $span; NBD: fio --ioengine=nbd --size=$((span >> 20))M --time_based --runtime=$secs"
echo
echo "| workload | pistore iSCSI IOPS | µs CPU/req | tgt IOPS | µs CPU/req | pistore NBD IOPS | µs CPU/req | iSCSI / tgt | iSCSI / NBD |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
cells=("read rand 4096 1" "read rand 4096 32" "write rand 4096 1" "write rand 4096 32" "read seq 131072 8" "write seq 131072 8")
for c in "${cells[@]}"; do
    read -r rw pat bytes qd <<< "$c"
    read -r pi pm pc <<< "$(iscsi_row "$url_p" "$ppid" "$rw" "$pat" "$bytes" "$qd" 0)"
    read -r ti tm tc <<< "$(iscsi_row "$url_t" "$tpid" "$rw" "$pat" "$bytes" "$qd" 0)"
    read -r ni nm nc <<< "$(nbd_row "$rw" "$pat" "$bytes" "$qd")"
    name="$((bytes / 1024)) KiB $pat $rw qd $qd"
    echo "| $name | $pi | $pc | $ti | $tc | $ni | $nc | $(python3 -c "print('%.2f' % ($pi / $ti))") | $(python3 -c "print('%.2f' % ($pi / $ni))") |"
done
echo
echo "PI carried from the initiator (pistore iSCSI only; tgt refuses a non-zero protect field):"
echo
echo "| workload | protect 0 IOPS | µs CPU/req | protect 1 IOPS | µs CPU/req | 1 / 0 |"
echo "|---|---:|---:|---:|---:|---:|"
for c in "read rand 4096 32" "write rand 4096 32" "read seq 131072 8" "write seq 131072 8"; do
    read -r rw pat bytes qd <<< "$c"
    read -r ai am ac <<< "$(iscsi_row "$url_p" "$ppid" "$rw" "$pat" "$bytes" "$qd" 0)"
    read -r bi bm bc <<< "$(iscsi_row "$url_p" "$ppid" "$rw" "$pat" "$bytes" "$qd" 1)"
    echo "| $((bytes / 1024)) KiB $pat $rw qd $qd | $ai | $ac | $bi | $bc | $(python3 -c "print('%.2f' % ($bi / $ai))") |"
done
echo
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
