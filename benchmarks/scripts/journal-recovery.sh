#!/usr/bin/env bash
# How long replaying a file volume's journal takes after a crash: runs `pistore bench --data` of one
# build (the root of a checkout built with its own ./pistore) on a fresh 1 GiB volume in DIR, kills
# it with SIGKILL after KILL_AFTER seconds, forces everything (`sync`) and drops the journal and data
# files from the page cache (`dd iflag=nocache`), so that the replay reads the journal from the disk,
# then opens the store with `pistore volume list`, whose recovery line says how many records were
# replayed and in how long.
#
#   benchmarks/scripts/journal-recovery.sh BUILD DIR RW BS QD KILL_AFTER
#   e.g. benchmarks/scripts/journal-recovery.sh . /work/jdisk randwrite 4k 32 12
set -euo pipefail
b="$(cd "$1" && pwd)"; dir="$2/pistore-recovery"; rw="$3"; bs="$4"; qd="$5"; k="$6"
rm -rf "$dir"; mkdir -p "$dir"; sync
"$b/pistore" bench --data "$dir" --rw "$rw" --bs "$bs" --qd "$qd" --size 1GiB --pi insert --seconds 600 --ramp 0 \
    --json > /dev/null 2>&1 &
sleep "$k"
pid="$(ps -eo pid,args | grep "[b]ench --data $dir" | grep java | awk '{ print $1 }')"
kill -9 $pid
wait 2>/dev/null || true
echo "journal file: $(stat -c %s "$dir/bench.journal") bytes"
sync
dd if="$dir/bench.journal" iflag=nocache count=0 2>/dev/null
dd if="$dir/bench.data" iflag=nocache count=0 2>/dev/null
"$b/pistore" volume list --data "$dir" 2>&1 | grep recovered || echo "nothing replayed"
rm -rf "$dir"
