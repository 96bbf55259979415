#!/usr/bin/env bash
# Two builds side by side on a fresh file volume each run: `pistore bench --data` (embedded target,
# local transport) with each build in turn, every round, for 4 KiB random reads and writes at qd 32
# and 128 KiB sequential reads at qd 8. One line per run: IOPS and CPU per request (the process).
#
#   benchmarks/scripts/file-volume-builds.sh BUILD_A BUILD_B [ROUNDS] [SECONDS]
# BUILD_*: checkouts, each run with its own ./pistore ("." for this one). DIR (default /dev/shm)
# holds the volume; FORMAT (default 512+8) and SIZE (default 256MiB) shape it.
set -euo pipefail
a="$(cd "${1:?BUILD_A}" && pwd)"
b="$(cd "${2:?BUILD_B}" && pwd)"
rounds="${3:-3}"
secs="${4:-8}"
dir="${DIR:-/dev/shm}/file-volume-builds.$$"
trap 'rm -rf "$dir"' EXIT
for round in $(seq 1 "$rounds"); do
  for build in "$a" "$b"; do
    for w in "randread 4096 32" "randwrite 4096 32" "read 131072 8"; do
      set -- $w
      rm -rf "$dir"; mkdir -p "$dir"; chmod 700 "$dir"
      "$build/pistore" volume create --data "$dir" bench --size "${SIZE:-256MiB}" --format "${FORMAT:-512+8}" > /dev/null
      line="$("$build/pistore" bench --data "$dir" --rw "$1" --bs "$2" --qd "$3" --seconds "$secs" --ramp 3 2>&1 \
          | grep -E '^  iops|^  cpu' | sed -E 's/ mib_per_s=[^ ]*//; s/ lat_us.*//; s/cpu: [^ ]* cores, ([^ ]*) us per request.*/cpu_us=\1/' \
          | tr '\n' ' ')"
      echo "round=$round build=$build $1 bs=$2 qd=$3 $line"
    done
  done
done
