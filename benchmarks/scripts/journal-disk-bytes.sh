#!/usr/bin/env bash
# What a write run costs the disk: `pistore bench --data DIR` of one build (the root of a checkout
# built with its own ./pistore) on a fresh 1 GiB volume, with the sectors the disk DEV wrote during
# the run (/proc/diskstats: the whole machine, so other work on the same disk counts too) and what a
# `sync` right after it still had to write (left dirty in the page cache). Prints one line:
#   BUILD RW BS qdQD iops=… p50=… p99=… p999=… cores=… us/op=… disk_MiB_in_run=…
#   disk_KiB_per_op_in_run=… MiB_left_dirty=…
#
#   benchmarks/scripts/journal-disk-bytes.sh BUILD DIR DEV RW BS QD
#   e.g. benchmarks/scripts/journal-disk-bytes.sh ../twofile /work/jdisk vda write 128k 8
set -euo pipefail
b="$(cd "$1" && pwd)"; dir="$2/pistore-disk-bytes"; dev="$3"; rw="$4"; bs="$5"; qd="$6"
written() { awk -v d="$dev" '$3 == d { print $10 }' /proc/diskstats; } # 512-byte sectors
rm -rf "$dir"; mkdir -p "$dir"; sync
w0="$(written)"
r="$("$b/pistore" bench --data "$dir" --rw "$rw" --bs "$bs" --qd "$qd" --size 1GiB --pi insert --seconds 4 --ramp 1 \
    --json 2>/dev/null)"
w1="$(written)"
sync
w2="$(written)"
rm -rf "$dir"
echo "$r" | python3 -c '
import json, sys
r = json.loads(sys.stdin.read())
name, rw, bs, qd, w0, w1, w2 = sys.argv[1:]
w0, w1, w2 = int(w0), int(w1), int(w2)
print("%-12s %s %s qd%s iops=%d p50=%.1f p99=%.0f p999=%.0f cores=%.2f us/op=%.2f disk_MiB_in_run=%d"
      " disk_KiB_per_op_in_run=%.1f MiB_left_dirty=%d" % (name, rw, bs, qd, r["iops"], r["lat_us"]["p50"],
      r["lat_us"]["p99"], r["lat_us"]["p999"], r["cpu"]["cores"], r["cpu"]["us_per_op"], (w1 - w0) / 2048,
      (w1 - w0) / 2 / r["ops"], (w2 - w1) / 2048))' "$(basename "$b")" "$rw" "$bs" "$qd" "$w0" "$w1" "$w2"
