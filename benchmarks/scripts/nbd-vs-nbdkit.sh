#!/usr/bin/env bash
# fio over NBD against pistore (memory volume, 4096+8 Type 1, PI inserted on write and checked and
# stripped on read) and against `nbdkit memory`, side by side in one run. Prints the exact fio
# command of each row and a Markdown table with the ratios. Loopback only; about 2 minutes.
#
#   benchmarks/scripts/nbd-vs-nbdkit.sh [SECONDS_PER_RUN]   (default 5)
#   QUEUES=N   queues (local-transport workers) of pistore's NBD frontend (default 1, as serve)
#   BEFORE_CP=CLASSPATH   also run a second pistore from this class path (an earlier build: its
#              app jar and app/target/lib/*), so before and after are measured in one run,
#              under one load; the table then has a "before" column and its ratio too
#   BEFORE_ARGS extra `serve` arguments of that second pistore only (e.g. --nbd-spin-us 0 to measure
#              this build with polling off against itself)
#   PISTORE_ARGS extra `serve` arguments of this build's pistore (e.g. --nbd-spin-us 50)
#   JAVA_OPTS  extra JVM options for pistore (both builds), e.g. JFR
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
secs="${1:-5}"
size=256M
pport=10810
kport=10811
bport=10812
for t in fio nbdkit python3; do
    command -v "$t" > /dev/null || { echo "nbd-vs-nbdkit: $t is not installed" >&2; exit 2; }
done
fio --enghelp=nbd > /dev/null 2>&1 || { echo "nbd-vs-nbdkit: fio has no nbd ioengine" >&2; exit 2; }
work="$(mktemp -d)"
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2> /dev/null || true; done
    for p in "${pids[@]}"; do wait "$p" 2> /dev/null || true; done
    rm -rf "$work"
}
trap cleanup EXIT

queues="${QUEUES:-1}"
# shellcheck disable=SC2086
"$root/pistore" serve --nbd "127.0.0.1:$pport" --nbd-queues "$queues" ${PISTORE_ARGS:-} --memory-volume "mem:1GiB:4096+8" > "$work/pistore.log" 2>&1 &
pids+=($!)
before_cp="${BEFORE_CP:-}"
if [ -n "$before_cp" ]; then
    # shellcheck disable=SC2086
    java ${JAVA_OPTS:-} --add-exports java.base/sun.nio.ch=ALL-UNNAMED -cp "$before_cp" io.pistore.app.cli.Main serve --nbd "127.0.0.1:$bport" --nbd-queues "$queues" ${BEFORE_ARGS:-} \
        --memory-volume "mem:1GiB:4096+8" > "$work/before.log" 2>&1 &
    pids+=($!)
fi
nbdkit -f -i 127.0.0.1 -p "$kport" memory 1G > "$work/nbdkit.log" 2>&1 &
pids+=($!)
for i in $(seq 1 300); do
    if grep -q "NBD on" "$work/pistore.log" 2> /dev/null && nbdinfo --can connect "nbd://127.0.0.1:$kport" 2> /dev/null; then
        break
    fi
    sleep 0.2
done
grep -q "NBD on" "$work/pistore.log" || { cat "$work/pistore.log" >&2; exit 3; }
if [ -n "$before_cp" ]; then
    for i in $(seq 1 300); do grep -q "NBD on" "$work/before.log" 2> /dev/null && break; sleep 0.2; done
    grep -q "NBD on" "$work/before.log" || { cat "$work/before.log" >&2; exit 3; }
fi

uri_pistore="nbd://127.0.0.1:$pport/mem"
uri_nbdkit="nbd://127.0.0.1:$kport"
uri_before="nbd://127.0.0.1:$bport/mem"
uris=("$uri_pistore" "$uri_nbdkit")
if [ -n "$before_cp" ]; then uris+=("$uri_before"); fi

# name|fio arguments
jobs=(
    "4k randread qd1|--rw=randread --bs=4k --iodepth=1"
    "4k randread qd32|--rw=randread --bs=4k --iodepth=32"
    "4k randwrite qd1|--rw=randwrite --bs=4k --iodepth=1"
    "4k randwrite qd32|--rw=randwrite --bs=4k --iodepth=32"
    "128k seq read qd16|--rw=read --bs=128k --iodepth=16"
)
common="--size=$size --time_based --runtime=$secs --ramp_time=1 --numjobs=1 --group_reporting --output-format=json"

run() { # server uri args... -> prints "iops bw_MiB/s"
    local uri="$1"; shift
    fio --name=bench --ioengine=nbd --uri="$uri" $common "$@" > "$work/out.json" 2> "$work/fio.err" \
        || { cat "$work/fio.err" "$work/out.json" >&2; exit 3; }
    python3 - "$work/out.json" << 'PY'
import json, sys
text = open(sys.argv[1]).read()
j = json.loads(text[text.index("{"):])["jobs"][0]  # fio's engine may print a line before the JSON
d = j["read"] if j["read"]["io_bytes"] > 0 else j["write"]
print("%.0f %.1f" % (d["iops"], d["bw_bytes"] / 1048576.0))
PY
}

# Fill the working set on both (so reads read data, not holes) and warm the JVM.
for uri in "${uris[@]}"; do
    fio --name=fill --ioengine=nbd --uri="$uri" --size=$size --rw=write --bs=1M --iodepth=8 > /dev/null
    fio --name=warm --ioengine=nbd --uri="$uri" --size=$size --rw=randrw --bs=4k --iodepth=32 --time_based --runtime=3 > /dev/null
    fio --name=warm --ioengine=nbd --uri="$uri" --size=$size --rw=randrw --bs=4k --iodepth=1 --time_based --runtime=2 > /dev/null
done

echo "fio $(fio --version | sed 's/fio-//'), nbdkit $(nbdkit --version | awk '{print $2}'), $(nproc) CPUs, $(date -u +%Y-%m-%dT%H:%MZ)"
echo "pistore: serve --nbd-queues $queues ${PISTORE_ARGS:-}; load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "common fio options: --ioengine=nbd --uri=URI $common"
echo
if [ -n "$before_cp" ]; then
    echo "before: $before_cp ${BEFORE_ARGS:-}"
    echo
    echo "| workload | before IOPS | pistore IOPS | pistore MiB/s | nbdkit IOPS | nbdkit MiB/s | before / nbdkit | pistore / nbdkit |"
    echo "|---|---:|---:|---:|---:|---:|---:|---:|"
else
    echo "| workload | pistore IOPS | pistore MiB/s | nbdkit IOPS | nbdkit MiB/s | pistore / nbdkit |"
    echo "|---|---:|---:|---:|---:|---:|"
fi
for j in "${jobs[@]}"; do
    name="${j%%|*}"; args="${j#*|}"
    if [ -n "$before_cp" ]; then
        # shellcheck disable=SC2086
        read -r bi bb <<< "$(run "$uri_before" $args)"
    fi
    # shellcheck disable=SC2086
    read -r pi pb <<< "$(run "$uri_pistore" $args)"
    # shellcheck disable=SC2086
    read -r ki kb <<< "$(run "$uri_nbdkit" $args)"
    ratio="$(python3 -c "print('%.2f' % ($pi / $ki))")"
    if [ -n "$before_cp" ]; then
        bratio="$(python3 -c "print('%.2f' % ($bi / $ki))")"
        echo "| $name ($args) | $bi | $pi | $pb | $ki | $kb | $bratio | $ratio |"
    else
        echo "| $name ($args) | $pi | $pb | $ki | $kb | $ratio |"
    fi
done
echo
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
