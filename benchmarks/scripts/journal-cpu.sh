#!/usr/bin/env bash
# CPU time per write of file volumes, without transport, CLI or JVM start: JournalCpuProbe
# (engine/src/test/.../JournalCpuProbe.java, public volume API only) run against the jars of each
# build given (the root of a checkout built with its own ./pistore; "." for this one), builds
# alternating in every round. Per directory (tmpfs, a disk) and round, one line per build:
#   us_cpu_per_write=… (user … sys …) minflt_per_write=… wall_s=… close_ms_cpu=…
# for WRITES random 4 KiB writes (4096+8, PI) from one thread on a fresh 1 GiB volume after a
# warm-up. CPU per write moves far less than IOPS on a machine shared with other work.
#
#   benchmarks/scripts/journal-cpu.sh BUILD... -- DIR... [-- WRITES ROUNDS]   (defaults 200000 3)
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
builds=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do builds+=("$(cd "$1" && pwd)"); shift; done
shift
dirs=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do dirs+=("$1"); shift; done
[ "${1:-}" = -- ] && shift
writes="${1:-200000}"
rounds="${2:-3}"
probe="$(mktemp -d)"
trap 'rm -rf "$probe"' EXIT
for b in "${builds[@]}"; do "$b/pistore" --help > /dev/null; done
javac -d "$probe" -cp "${builds[0]}/app/target/lib/*" \
    "$root/engine/src/test/java/io/pistore/engine/volume/JournalCpuProbe.java" \
    "$root/testkit/src/main/java/io/pistore/testkit/TestFiles.java" # the probe's clean-up
for d in "${dirs[@]}"; do
  fs="$(df -T "$d" | awk 'NR == 2 { print $2 }')"
  for ((i = 0; i < rounds; i++)); do
    order=("${builds[@]}")
    if ((i % 2 == 1)); then
      order=(); for ((k = ${#builds[@]} - 1; k >= 0; k--)); do order+=("${builds[k]}"); done
    fi
    for b in "${order[@]}"; do
      printf '%-5s round %d %-24s ' "$fs" "$i" "$(basename "$b")"
      java --add-exports java.base/sun.nio.ch=ALL-UNNAMED -cp "$probe:$b/app/target/lib/*" \
          io.pistore.engine.volume.JournalCpuProbe "$d" "$writes" 1 2>&1 | tail -n 1
    done
  done
done
