#!/usr/bin/env bash
# Where a settled replicated write's CPU and wake-ups go, thread by thread: three `serve` peers of
# BUILD (a built checkout, default this one) on loopback, a 256 MiB replicated volume in $TMPDIR
# (tmpfs: TMPDIR=/dev/shm), `pistore bench` on the leader for RAMP unmeasured seconds, then each
# thread's CPU time and voluntary context switches over WIN seconds, summed by thread name (Ratis's
# names with the group and numbers cut) and by role (L the leader, F the followers), per request.
# Only threads with 0.1 µs or more per request are listed; the last line is the sum of all.
#
#   [BUILD=DIR] [RW=randwrite BS=4k QD=32] [RAMP=60 WIN=20] [SERVE_OPTS=... CLI_OPTS=...] \
#       benchmarks/scripts/replicated-threads.sh
#
# SERVE_OPTS adds JVM options to the peers, CLI_OPTS to the `pistore` commands that create the volume
# and ask for the leader (an experiment build whose peers need them to talk, e.g. another Ratis RPC).
# Uses ports 5441-5443 and 9981-9983 (lib-peers.sh: run one at a time); SERVE_ARGS adds `serve` arguments.
set -uo pipefail
build="$(cd "${BUILD:-$(dirname "$0")/../..}" && pwd)"
ramp="${RAMP:-60}"; win="${WIN:-20}"
data=$(mktemp -d)
cp="$build/app/target/pistore-app-0.1.0-SNAPSHOT.jar:$build/app/target/lib/*:$build/transport-tcp/target/pistore-transport-tcp-0.1.0-SNAPSHOT.jar"
pistore() { java ${CLI_OPTS:-} -cp "$cp" io.pistore.app.cli.Main "$@"; }
. "$(dirname "$0")/lib-peers.sh"
trap peers_cleanup EXIT
peers_start
pistore bench --transport tcp --target 127.0.0.1:544$leader --volume rv --rw "${RW:-randwrite}" --bs "${BS:-4k}" --qd "${QD:-32}" \
    --seconds $((win + 10)) --ramp "$ramp" --json > "$data/bench.json" 2> /dev/null &
b=$!
sleep $((ramp + 3))
# Thread names from the JVMs (nid is the thread id in hex), then each thread's switches and ticks.
for i in 0 1 2; do
    jcmd "${pids[$i]}" Thread.print 2> /dev/null | sed -n 's/^"\([^"]*\)".* nid=\(0x[0-9a-f]*\).*/\2 \1/p' \
        | while read -r nid name; do echo "$((i + 1)) $((nid)) $(echo "$name" | sed 's/[0-9]*$//; s/ /_/g; s/group-[0-9A-F]*/G/')"; done
done > "$data/names"
snap() {
    for i in 0 1 2; do
        for t in /proc/${pids[$i]}/task/*; do
            s=$(awk '/^voluntary_ctxt_switches/ {print $2}' "$t/status" 2> /dev/null)
            c=$(awk '{print $14 + $15}' "$t/stat" 2> /dev/null)
            echo "$((i + 1)) ${t##*/} ${s:-0} ${c:-0}"
        done
    done
}
snap > "$data/s0"; sleep "$win"; snap > "$data/s1"
wait $b
python3 - "$data" "$win" "$leader" "$(getconf CLK_TCK)" <<'PY'
import collections, json, sys
d, win, leader, hz = sys.argv[1], float(sys.argv[2]), sys.argv[3], int(sys.argv[4])
names = {}
for l in open(d + "/names"):
    p, t, n = l.split(None, 2)
    names[(p, t)] = n.strip()
def read(f):
    return {(p, t): (int(s), int(c)) for p, t, s, c in (l.split() for l in open(f))}
a, b = read(d + "/s0"), read(d + "/s1")
r = json.load(open(d + "/bench.json"))
n = r["iops"] * win
by = collections.defaultdict(lambda: [0, 0])
for k, (s, c) in b.items():
    s0, c0 = a.get(k, (0, 0))
    row = by[("L" if k[0] == leader else "F", names.get(k, "?"))]
    row[0] += s - s0
    row[1] += c - c0
print("iops %.0f p50 %.0f p99 %.0f us" % (r["iops"], r["lat_us"]["p50"], r["lat_us"]["p99"]))
for (role, name), (s, c) in sorted(by.items(), key=lambda x: -x[1][1]):
    if c * 1e6 / hz / n >= 0.1:
        print("%s %-46s switches/req %6.3f  cpu/req %7.2f us" % (role, name, s / n, c * 1e6 / hz / n))
print("all threads: switches/req %.3f, cpu/req %.2f us" % (sum(v[0] for v in by.values()) / n, sum(v[1] for v in by.values()) * 1e6 / hz / n))
PY
