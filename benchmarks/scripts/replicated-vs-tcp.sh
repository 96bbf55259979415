#!/usr/bin/env bash
# A 3-replica volume (three `pistore serve` peers on this machine) against an unreplicated volume
# (one `serve`), both over the tcp transport, alternating in one run, REPS times: 4 KiB random write
# and random read at qd 32, 128 KiB sequential write at qd 32. Prints IOPS, MiB/s, p50/p99 (us) and
# the target side's CPU per request (the serve processes' user+system time over the measured
# seconds, divided by IOPS times those seconds).
#
#   benchmarks/scripts/replicated-vs-tcp.sh [REPS] [SECONDS]     (from the repository root)
# SERVE_OPTS: JVM options for the serve processes only (e.g. a JFR recording); WORKLOADS: which rows
# (default "randwrite:4k randread:4k write:128k"); RAMP: seconds of each run not measured (default 2; the
# three peers' JIT compilers are busy for far longer than that, see BENCHMARKS.md); WARMUP: seconds of
# unmeasured random writes, then reads, before the first row, on the group and then on the
# unreplicated volume (default 0; only the group with ONLY_REPLICATED).
# ONLY_REPLICATED=1: the group's rows only, then each peer's log indexes (`pistore replicas status`).
# PREFILL: seconds of 128 KiB sequential writes to each volume before the warm-up (default 0), so that
# read rows read written blocks on both sides (a block never written carries the unwritten tuple,
# whose PI checks are skipped and whose data is checked for zeros instead).
# QD: the queue depth of the measured rows (default 32; the prefill and warm-up run at 32).
# PORT_OFFSET: added to every port (default 0), to run beside another copy of the script.
# JARS: a directory holding another build's app/target and transport-tcp/target (default: build here).
# CP: the class path itself instead (e.g. "BUNDLE/lib/*" of ../shared/device/bundle.sh; java from PATH).
# A workload may name its queue depth: "randwrite:4k:1".
# PIN=N: each peer on N cores of its own (taskset: peer i on cores (i-1)N..iN-1), the unreplicated
# serve on the first peer's cores, the bench and the CLI on the N after the peers'.
# The bench connects to the peer that leads the volume's group (asked with `pistore replicas status`).
set -euo pipefail
cd "$(dirname "$0")/../.."
reps="${1:-2}"
secs="${2:-5}"
data="$(mktemp -d)"
out="${OUT:-target/replicated-vs-tcp.txt}"
mkdir -p "$(dirname "$out")"
jars="${JARS:-}"
if [ -n "${CP:-}" ]; then
    jars=unused
elif [ -z "$jars" ]; then
    mvn -B -q -o -DskipTests -pl app,transport-tcp -am package > /dev/null
    jars=.
fi
cp="${CP:-$jars/app/target/pistore-app-0.1.0-SNAPSHOT.jar:$jars/app/target/lib/*:$jars/transport-tcp/target/pistore-transport-tcp-0.1.0-SNAPSHOT.jar}"
o=${PORT_OFFSET:-0}
port() { echo $(($1 + o)); }
pin() { # SLOT (0-based): the taskset prefix of that slot's cores, or nothing without PIN
    [ -n "${PIN:-}" ] && echo "taskset -c $(($1 * PIN))-$((($1 + 1) * PIN - 1))"; true
}
pistore() { $(pin 3) java ${JAVA_OPTS:-} -cp "$cp" io.pistore.app.cli.Main "$@"; }
peers=n1=127.0.0.1:$(port 9881),n2=127.0.0.1:$(port 9882),n3=127.0.0.1:$(port 9883)
for port in $(port 4441) $(port 4442) $(port 4443) $(port 4444) $(port 9881) $(port 9882) $(port 9883); do
    if (exec 3<> /dev/tcp/127.0.0.1/$port) 2> /dev/null; then
        echo "port $port is in use (an earlier serve?)" >&2
        exit 2
    fi
done
. benchmarks/scripts/lib-peers.sh # the root is the working directory here
trap peers_cleanup EXIT
for i in 1 2 3; do
    mkdir -p "$data/d$i"
    pistore volume create rv --size 256MiB --format 4096+8 --data "$data/d$i" --replica-id n$i --replicas $peers > /dev/null
done
mkdir -p -m 700 "$data/plain"
pistore volume create pv --size 256MiB --format 4096+8 --data "$data/plain" > /dev/null
for i in 1 2 3; do
    # shellcheck disable=SC2086
    $(pin $((i - 1))) java ${JAVA_OPTS:-} ${SERVE_OPTS:-} -cp "$cp" io.pistore.app.cli.Main serve --transport tcp --data "$data/d$i" \
        --listen 127.0.0.1:$(port 444$i) --replica-id n$i --replica-listen 127.0.0.1:$(port 988$i) > "$data/serve$i.log" 2>&1 &
    pids+=($!)
done
# shellcheck disable=SC2086
$(pin 0) java ${JAVA_OPTS:-} ${SERVE_OPTS:-} -cp "$cp" io.pistore.app.cli.Main serve --transport tcp --data "$data/plain" \
    --listen 127.0.0.1:$(port 4444) > "$data/serve-plain.log" 2>&1 &
pids+=($!)
sleep 6
# Ticks (user+system) of the given processes, from /proc.
ticks() { local t=0; for p in "$@"; do t=$((t + $(awk '{print $14+$15}' "/proc/$p/stat"))); done; echo $t; }
hz=$(getconf CLK_TCK)
replicated=("${pids[@]:0:3}")
plain=("${pids[3]}")
# The bench talks to any peer; the leader avoids one forwarding hop and reads its own replica.
peers_await_leader || { echo "no leader of rv's group within 30 s" >&2; exit 1; }
rtarget=127.0.0.1:$(port 444$leader)
ptarget=127.0.0.1:$(port 4444)
echo "replicated: bench on n$leader (the leader)" | tee "$out"
run() { # NAME TARGET VOLUME RW BS QD -- PIDS...
    local name=$1 target=$2 vol=$3 rw=$4 bs=$5 qd=$6; shift 7
    local ramp=${RAMP:-2}
    pistore bench --transport tcp --target "$target" --volume "$vol" --rw "$rw" --bs "$bs" --qd "$qd" \
        --seconds "$secs" --ramp "$ramp" --json > "$data/bench.json" 2> /dev/null &
    local b=$!
    # The serve processes' CPU is sampled from the end of the ramp (the bench's JVM start, about a
    # second, counted into the wait) to the bench's exit.
    sleep $((ramp + 1))
    local t0 w0; t0=$(ticks "$@"); w0=$(date +%s.%N)
    wait "$b"
    local t1 w1; t1=$(ticks "$@"); w1=$(date +%s.%N)
    python3 -c "
import json,sys; r=json.load(open(sys.argv[1])); ticks=int(sys.argv[2]); hz=int(sys.argv[3]); secs=int(sys.argv[4])
# the ticks span the measured seconds from about one second in, to the bench's exit: requests ~ iops * that span
span=min(float(sys.argv[8]), secs); ops=r['iops']*span; cpu_us=ticks*1e6/hz
print('%-10s %-9s bs=%-4s qd=%-2s iops=%7d mib_s=%7.1f p50=%8.1f p99=%8.1f target_cpu_us_per_req=%7.1f' % (sys.argv[5], r['rw'] if 'rw' in r else sys.argv[6], sys.argv[7], sys.argv[9], r['iops'], r['mib_per_s'], r['lat_us']['p50'], r['lat_us']['p99'], cpu_us/max(1,ops)))
" "$data/bench.json" $((t1 - t0)) "$hz" "$secs" "$name" "$rw" "$bs" "$(python3 -c "print($w1 - $w0)")" "$qd" | tee -a "$out"
}
if [ "${PREFILL:-0}" -gt 0 ]; then
    echo "prefilling: ${PREFILL} s of 128 KiB sequential writes to each volume" | tee -a "$out"
    for t in "$rtarget rv" "$ptarget pv"; do
        set -- $t
        pistore bench --transport tcp --target "$1" --volume "$2" --rw write --bs 128k --qd 32 \
            --seconds "$PREFILL" --ramp 0 --json > /dev/null 2>&1
    done
fi
if [ "${WARMUP:-0}" -gt 0 ]; then
    targets=("$rtarget rv")
    [ -n "${ONLY_REPLICATED:-}" ] || targets+=("$ptarget pv") # its JIT too, and the blocks its reads meet
    echo "warming up: ${WARMUP} s of random writes, then of random reads, on ${#targets[@]} volume(s)" | tee -a "$out"
    for t in "${targets[@]}"; do
        set -- $t
        for rw in randwrite randread; do
            pistore bench --transport tcp --target "$1" --volume "$2" --rw $rw --bs 4k --qd 32 \
                --seconds "$WARMUP" --ramp 0 --json > /dev/null 2>&1
        done
    done
fi
for r in $(seq "$reps"); do
    for w in ${WORKLOADS:-randwrite:4k randread:4k write:128k}; do
        set -- ${w//:/ }
        run replicated $rtarget rv "$1" "$2" "${3:-${QD:-32}}" -- "${replicated[@]}"
        [ -n "${ONLY_REPLICATED:-}" ] || run tcp "$ptarget" pv "$1" "$2" "${3:-${QD:-32}}" -- "${plain[@]}"
    done
done
if [ -n "${ONLY_REPLICATED:-}" ]; then pistore replicas status rv --replicas $peers 2> /dev/null | tee -a "$out"; fi
