#!/usr/bin/env python3
"""What a fixed warm room would bill, idealised (docs/power.md, "A fixed warm
room, idealised"; issue 31).

Reads job logs of always-on runs (sparkpack simulate --job-log, CSV) and
replays each run's arrivals through a fluid model of the simplest warm pool
an operator could configure: keep W cpus on and idle at all times. Every
other detail is idealised in the pool's favour:
  - cpus are fungible (no agent sizes, no job split across agents);
  - idle room above W is powered off the instant a job ends (no timeout);
  - every job runs its profiled single-agent time (times its run noise);
  - a job that finds less than its cpus idle takes what is idle and boots
    the rest (it starts one boot time later); the room it took is booted
    again at once;
  - optionally, a job whose slack covers a boot boots its own room and
    leaves the warm room to tight jobs ("slack jobs boot").
Prints, per job log, the bill (share of always-on, the cluster's cpus over
the window) and the deadline misses for W = 0, 4, ..., CAP, and the
cheapest W with misses at most --max-miss percent.

Usage: scripts/fixed-warm-room.py [--boot 60] [--cap 100] [--max-miss 2] JOBLOG.csv...
"""
import argparse
import collections
import csv
import heapq
import sys

END, READY, ARRIVAL = 0, 1, 2  # event kinds, in the order ties are taken


def replay(jobs, W, slack_boot, boot, cap, hour):
    jobs = sorted(jobs, key=lambda r: float(r["submit_s"]))
    idle, free_boot, held = float(min(W, cap)), 0.0, 0.0  # held: busy and booting for a job
    ev, seq = [], 0

    def push(t, kind, payload):
        nonlocal seq
        heapq.heappush(ev, (t, kind, seq, payload))
        seq += 1

    for j in jobs:
        push(float(j["submit_s"]), ARRIVAL, j)
    boots, area, last, starts = 0, 0.0, 0.0, {}

    def start(j, t):
        run = float(j["profiled_s"]) * float(j["noise"])
        starts[j["job"]] = t + run
        push(t + run, END, float(j["cpus"]))

    def replenish(t):
        nonlocal free_boot, boots
        x = min(W - idle - free_boot, cap - (idle + free_boot + held))
        if x > 1e-9:
            free_boot += x
            boots += 1
            push(t + boot, READY, (x, None))

    while ev:
        t, kind, _, p = heapq.heappop(ev)
        area += (idle + free_boot + held) * (t - last)
        last = t
        if kind == END:
            held -= p
            idle += p
            idle -= min(max(idle + free_boot - W, 0.0), idle)  # the excess goes off at once
        elif kind == READY:
            x, j = p
            if j is None:
                free_boot -= x
                idle += x
            else:
                start(j, t)  # its room was counted in held from its arrival
        else:
            # A job without a deadline has an empty slack_s: all the time
            # it needs (it failed on float("") before).
            c, slack = float(p["cpus"]), float(p["slack_s"] or "inf")
            own = slack_boot and slack >= boot + 5 and cap - (idle + free_boot + held) >= c
            if not own and idle >= c - 1e-9:
                idle -= c
                held += c
                start(p, t)
            else:
                take = 0.0 if own else min(idle, c)
                idle -= take
                held += c
                boots += 1
                push(t + boot, READY, (c - take, p))
        replenish(t)
    dl = [j for j in jobs if j["deadline"] == "true"]
    missed = sum(1 for j in dl if starts[j["job"]] > float(j["deadline_s"]) + 1e-6)
    end = max(hour, last)
    return area / (cap * end), missed / max(len(dl), 1), boots


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--boot", type=float, default=60.0, help="boot time, seconds")
    ap.add_argument("--cap", type=float, default=100.0, help="the cluster's cpus (thesis14: 100)")
    ap.add_argument("--hour", type=float, default=3600.0, help="the window, seconds")
    ap.add_argument("--max-miss", type=float, default=2.0, help="misses allowed, percent")
    ap.add_argument("--step", type=int, default=4)
    ap.add_argument("logs", nargs="+")
    a = ap.parse_args()
    for path in a.logs:
        runs = collections.defaultdict(list)
        for r in csv.DictReader(open(path)):
            runs[(r["window"], r["seed"], r["policy"])].append(r)
        if not runs:
            sys.exit(f"{path}: no jobs (write it with sparkpack simulate --job-log)")
        print(f"{path}: {len(runs)} runs, boot {a.boot:g} s, {a.cap:g} cpus")
        print()
        print("| warm cpus W | slack jobs boot | bill / always-on | deadline misses % | boots per run |")
        print("|---:|---|---:|---:|---:|")
        best = None
        for W in range(0, int(a.cap) + 1, a.step):
            for sb in (False, True):
                res = [replay(jobs, W, sb, a.boot, a.cap, a.hour) for jobs in runs.values()]
                b = 100 * sum(r[0] for r in res) / len(res)
                m = 100 * sum(r[1] for r in res) / len(res)
                n = sum(r[2] for r in res) / len(res)
                print(f"| {W} | {'yes' if sb else 'no'} | {b:.1f}% | {m:.1f} | {n:.1f} |")
                if m <= a.max_miss and (best is None or b < best[0]):
                    best = (b, m, W, sb)
        print()
        if best:
            print(f"cheapest with misses at most {a.max_miss:g}%: {best[0]:.1f}% of always-on, {best[1]:.1f}% misses "
                  f"(W = {best[2]}, slack jobs boot: {'yes' if best[3] else 'no'})")
        else:
            print(f"no W keeps misses at most {a.max_miss:g}%")
        print()


if __name__ == "__main__":
    main()
