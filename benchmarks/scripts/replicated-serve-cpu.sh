#!/usr/bin/env bash
# One replicated row with the CPU the peers spend on it: three `serve` peers of BUILD (the root of a
# built checkout: app/target and transport-tcp/target) on loopback, a 256 MiB replicated volume in
# $TMPDIR (tmpfs: TMPDIR=/dev/shm), `pistore bench` at qd 32 on the leader for RAMP unmeasured and
# WIN measured seconds. Prints IOPS, latency (p50, p99, p99.9, max), the three serve processes' CPU per request (from
# /proc, over the measured window less 4 s), their voluntary context switches per request, the bytes
# written to the block device under $TMPDIR per request (/proc/diskstats; 0 on tmpfs), and the
# requests per log entry (each entry is one batch): the leader's commit index read 3 s before the
# measured window and after the bench, outside the window since each reading starts a JVM, the
# requests over that span taken at the measured rate.
# Uses ports 5441-5443 and 9981-9983, so it runs beside replicated-vs-tcp.sh. Compare builds by
# alternating them in one session, e.g.
#
#   for r in 1 2; do RAMP=60 WIN=20 benchmarks/scripts/replicated-serve-cpu.sh ../before before
#                    RAMP=60 WIN=20 benchmarks/scripts/replicated-serve-cpu.sh . after; done
#
# QD sets the measured row's queue depth (default 32); SERVE_OPTS adds JVM options to the peers,
# SERVE_ARGS `serve` arguments (e.g. --transport-option tcp.spinMicros=0), BENCH_BUILD another build's
# `pistore bench` as the client (one that reports more). The last line gives the threads each peer's
# JVM started over its life (a library that starts a thread per task shows here).
#
# PREFILL=SECONDS first writes the volume sequentially in 128 KiB requests for that long (the whole
# 256 MiB takes about 5 s), so a read row meets written blocks rather than never-written ones.
#
#   benchmarks/scripts/replicated-serve-cpu.sh BUILD LABEL [RW BS]   (defaults randwrite 4k; RAMP 60, WIN 30)
set -uo pipefail
build="$(cd "$1" && pwd)"; label="$2"; rw="${3:-randwrite}"; bs="${4:-4k}"
ramp="${RAMP:-60}"; win="${WIN:-30}"
data=$(mktemp -d)
cp="$build/app/target/pistore-app-0.1.0-SNAPSHOT.jar:$build/app/target/lib/*:$build/transport-tcp/target/pistore-transport-tcp-0.1.0-SNAPSHOT.jar"
pistore() { java -cp "$cp" io.pistore.app.cli.Main "$@"; }
# The bench (the client) may come from another build (BENCH_BUILD), e.g. one that reports more.
bcp="$cp"
if [ -n "${BENCH_BUILD:-}" ]; then
    bb="$(cd "$BENCH_BUILD" && pwd)"
    bcp="$bb/app/target/pistore-app-0.1.0-SNAPSHOT.jar:$bb/app/target/lib/*:$bb/transport-tcp/target/pistore-transport-tcp-0.1.0-SNAPSHOT.jar"
fi
bench() { java -cp "$bcp" io.pistore.app.cli.Main bench "$@"; }
. "$(dirname "$0")/lib-peers.sh"
trap peers_cleanup EXIT
peers_start
if [ "${PREFILL:-0}" -gt 0 ]; then # reads then meet written blocks, not the unwritten ones' zero scans
    pistore bench --transport tcp --target 127.0.0.1:544$leader --volume rv --rw write --bs 128k --qd 32 \
        --seconds "$PREFILL" --ramp 0 --json > /dev/null 2>&1
fi
bench --transport tcp --target 127.0.0.1:544$leader --volume rv --rw "$rw" --bs "$bs" --qd "${QD:-32}" --seconds "$win" \
    --ramp "$ramp" --json > "$data/bench.json" 2> /dev/null &
b=$!
ticks() { for p in "${pids[@]}"; do awk '{print $14 + $15}' /proc/$p/stat; done | awk '{s += $1} END {print s}'; }
switches() {
    for p in "${pids[@]}"; do cat /proc/$p/task/*/status 2> /dev/null | awk '/^voluntary_ctxt_switches/ {s += $2} END {print s}'; done \
        | awk '{s += $1} END {print s}'
}
# Bytes written to the block device under $TMPDIR, whoever wrote them (0 on tmpfs). Not the
# processes' write_bytes: that counts each folio dirtied again in full, and large folios made a
# log re-dirtied at every forcing count megabytes per write.
device=$(basename "$(df --output=source "$data" | tail -1)")
written() { awk -v d="$device" '$3 == d {printf "%.0f\n", $10 * 512; f = 1} END {if (!f) print 0}' /proc/diskstats; }
committed() { pistore replicas status rv --replicas $peers 2> /dev/null | sed -n 's/.*leader .*committed=\([0-9]*\).*/\1/p' | head -1; }
start=$(date +%s.%N)
sleep $((ramp - 3))
i0=$(committed); at0=$(date +%s.%N)
sleep "$(python3 -c "print(max(0, $start + $ramp + 2 - $(date +%s.%N)))")"
t0=$(ticks); c0=$(switches); w0=$(written)
sleep $((win - 4))
t1=$(ticks); c1=$(switches); w1=$(written)
wait $b
i1=$(committed)
started=$(for p in "${pids[@]}"; do jcmd "$p" PerfCounter.print 2> /dev/null | sed -n 's/^java.threads.started=//p'; done | paste -sd/)
python3 - "$label" "$data/bench.json" $((t1 - t0)) $((win - 4)) $((c1 - c0)) "$(getconf CLK_TCK)" "${i0:-0}" "${i1:-0}" \
    "$(python3 -c "print($start + $ramp + $win - $at0)")" "$started" $((w1 - w0)) <<'PY'
import json, sys
label, f, ticks, secs, cs, hz = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
entries, span = int(sys.argv[8]) - int(sys.argv[7]), float(sys.argv[9])
r = json.load(open(f))
n = r["iops"] * secs
print("%-12s iops %7.0f p50 %7.0f p99 %7.0f p99.9 %7.0f max %7.0f  serve cpu/req %7.1f us  voluntary switches/req %5.2f  req/entry %5.1f"
      "  threads started %s  load %s  device KiB/req %.1f"
      % (label, r["iops"], r["lat_us"]["p50"], r["lat_us"]["p99"], r["lat_us"]["p999"], r["lat_us"].get("max", float("nan")), ticks * 1e6 / hz / n, cs / n,
         r["iops"] * span / entries if entries > 0 else float("nan"), sys.argv[10], open("/proc/loadavg").read().split()[0],
         int(sys.argv[11]) / 1024 / n))
PY
