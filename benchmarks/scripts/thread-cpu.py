#!/usr/bin/env python3
"""CPU time of each thread of some JVMs over a window, with the threads' Java names.

    benchmarks/scripts/thread-cpu.py PID[,PID...] SECONDS [TOP]

Names come from `jcmd PID Thread.print` (the kernel keeps only 15 characters of a name); CPU is
user+system time from /proc/PID/task/*/stat, sampled at the start and the end of the window. Also
prints the context switches (voluntary and not) of all those threads over the window. Used to see
where a replicated write's CPU goes across a group's `serve` processes (BENCHMARKS.md).
"""
import os
import re
import subprocess
import sys
import time


def names(pids):
    out = {}
    for p in pids:
        dump = subprocess.run(["jcmd", p, "Thread.print"], capture_output=True, text=True).stdout
        for m in re.finditer(r'^"([^"]+)".*nid=(0x[0-9a-f]+)', dump, re.M):
            out[(p, str(int(m.group(2), 16)))] = m.group(1)
    return out


def sample(pids):
    cpu, switches = {}, 0
    for p in pids:
        for t in os.listdir(f"/proc/{p}/task"):
            try:
                stat = open(f"/proc/{p}/task/{t}/stat").read()
                fields = stat[stat.rindex(")") + 2:].split()
                cpu[(p, t)] = int(fields[11]) + int(fields[12])
                for line in open(f"/proc/{p}/task/{t}/status"):
                    if "ctxt_switches" in line:
                        switches += int(line.split()[1])
            except (OSError, ValueError):
                pass  # the thread ended meanwhile
    return cpu, switches


def main():
    pids = sys.argv[1].split(",")
    secs = float(sys.argv[2])
    top = int(sys.argv[3]) if len(sys.argv) > 3 else 30
    known = names(pids)
    a, s0 = sample(pids)
    time.sleep(secs)
    b, s1 = sample(pids)
    hz = os.sysconf("SC_CLK_TCK")
    rows = sorted(((v - a.get(k, 0), k) for k, v in b.items()), reverse=True)
    print("window %.1f s: %.2f s of CPU, %d context switches" % (secs, sum(r[0] for r in rows) / hz, s1 - s0))
    for ticks, (pid, tid) in rows[:top]:
        name = re.sub(r"group-[0-9A-F]+", "group", known.get((pid, tid), "?"))
        print("%7.2f s  %-7s %s" % (ticks / hz, pid, name))


if __name__ == "__main__":
    main()
