#!/usr/bin/env python3
"""A flush behind a large forcing, outside pistore: what forcing written-back pages in pieces does to
a concurrent flush's latency on one disk.

A flusher thread appends 64 KiB to a journal-like file and fdatasync()s it in a loop (sleeping
SLEEP seconds between, default 0.0005); meanwhile, per trial, a checkpoint-like writer writes about
100 MiB of random 4 KiB pages of a 256 MiB file in offset order and fsync()s it every N MiB (0: once,
at the end). Prints the flusher's p50 / p99 / max while the writer ran, per trial and as medians per
N; the order of the N values rotates each round.

    [SLEEP=S] flush-behind-writeback.py DIR ROUNDS N...      e.g. DIR 5 0 8 2 0.5
"""
import os
import random
import statistics
import sys
import threading
import time

MIB = 1 << 20
HOME = 256 * MIB
PAGE = 4096


def filled(path, size):
    """A file of `size` bytes written and forced, so no trial pays for allocating its blocks."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    chunk = os.urandom(MIB)
    for i in range(size // MIB):
        os.pwrite(fd, chunk, i * MIB)
    os.fsync(fd)
    return fd


def main():
    d, rounds, sizes = sys.argv[1], int(sys.argv[2]), [float(x) for x in sys.argv[3:]]
    pause = float(os.environ.get("SLEEP", "0.0005"))
    home_path, journal_path = os.path.join(d, "home"), os.path.join(d, "journal")
    home, journal = filled(home_path, HOME), filled(journal_path, 64 * MIB)
    state = {"stop": False, "busy": False, "lat": []}

    def flusher():
        pos, data = 0, os.urandom(64 << 10)
        while not state["stop"]:
            os.pwrite(journal, data, pos)
            pos = (pos + len(data)) % (64 * MIB)
            t = time.perf_counter()
            os.fdatasync(journal)
            if state["busy"]:
                state["lat"].append(time.perf_counter() - t)
            time.sleep(pause)

    thread = threading.Thread(target=flusher)
    thread.start()
    results = {n: [] for n in sizes}
    rnd, page = random.Random(1), os.urandom(PAGE)
    try:
        for r in range(rounds):
            for n in sizes[r % len(sizes):] + sizes[:r % len(sizes)]:
                pages = sorted(set(rnd.randrange(HOME // PAGE) for _ in range(32000)))
                time.sleep(1.0)
                state["lat"] = []
                state["busy"] = True
                t0, unforced, forcings = time.perf_counter(), 0, 0
                for p in pages:
                    os.pwrite(home, page, p * PAGE)
                    unforced += PAGE
                    if n and unforced >= n * MIB:
                        os.fsync(home)
                        unforced, forcings = 0, forcings + 1
                os.fsync(home)
                took = time.perf_counter() - t0
                state["busy"] = False
                lat = sorted(state["lat"]) or [0.0]
                row = (lat[len(lat) // 2] * 1e3, lat[int(len(lat) * 0.99)] * 1e3, lat[-1] * 1e3, took)
                results[n].append(row)
                print("round %d, forced every %s MiB: %d pages, %d forcings, %.2f s; %d flushes, p50 %.2f ms,"
                      " p99 %.2f ms, max %.1f ms" % (r, n or "all", len(pages), forcings + 1, took, len(lat), *row[:3]),
                      flush=True)
    finally:
        state["stop"] = True
        thread.join()
        os.unlink(home_path)
        os.unlink(journal_path)
    for n in sizes:
        v = results[n]
        print("forced every %s MiB: median p50 %.2f ms, p99 %.2f ms, max %.1f ms, writing %.2f s" % (
            n or "all", *(statistics.median(x[i] for x in v) for i in range(4))))


if __name__ == "__main__":
    main()
