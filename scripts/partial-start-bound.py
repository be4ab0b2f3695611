#!/usr/bin/env python3
"""How many deadline misses starting a job on the warm part of its plan could
save, at most (docs/power.md, "Starting on the warm part of a plan: an upper
bound"; issue 31).

Spark in coarse-grained mode runs a job with the executors it has and takes
more as offers come, so a job could start on the room that is on when it
arrives and gain the rest of its executors when the agents powered on for
it are up, one boot time later. sparkpack does not do this: a job that needs
an agent that is off waits for it. Before building it, this bounds its gain
from job logs (sparkpack simulate --job-log, CSV) of runs with power
management, in the scheme's favour:
  - a missed deadline job had, at its arrival, all the free cpus of the
    agents on (free_cpus_at_arrival) to itself, whatever arrived with it,
    and placed any part of itself there;
  - its work is spread evenly over its executors and speed is linear in
    them (share f of its cpus during the boot, all of them after);
  - its run time is the one it had (run_s), started at its arrival.
A miss is counted as saved when the job would then end by its deadline.
Prints, per log, the bill (share of always-on, from the run's results CSV
when given), the misses, and the misses this could save at most.

Usage: scripts/partial-start-bound.py [--boot 60] JOBLOG.csv [RESULTS.csv]...
  (pairs: a job log, then optionally the simulate --format csv output of the
  same runs, for the bill)
"""
import argparse
import csv
import sys


def saved(row, boot):
    run, sub, dl = float(row["run_s"]), float(row["submit_s"]), float(row["deadline_s"])
    f = min(1.0, float(row["free_cpus_at_arrival"]) / float(row["cpus"]))
    if f > 0 and f * boot >= run:
        end = sub + run / f
    else:
        end = sub + boot + (run - f * boot)
    return end <= dl


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--boot", type=float, default=60, help="boot time in seconds (simulate's default, 60)")
    ap.add_argument("files", nargs="+")
    a = ap.parse_args()
    def header(f):
        return next(csv.reader(open(f)), [])
    logs = [f for f in a.files if "missed" in header(f) and "free_cpus_at_arrival" in header(f)]
    if not logs:
        sys.exit("partial-start-bound: no job log among the files (write one with simulate --job-log FILE.csv)")
    for f in a.files:
        if f not in logs:
            continue
        rows = list(csv.DictReader(open(f)))
        res = None
        i = a.files.index(f)
        if i + 1 < len(a.files) and "bill_usd" in header(a.files[i + 1]):
            res = list(csv.DictReader(open(a.files[i + 1])))
        dl = [r for r in rows if r["deadline"] == "true"]
        miss = [r for r in dl if r["missed"] == "true"]
        s = sum(saved(r, a.boot) for r in miss)
        bill = ""
        if res:
            b, ao = sum(float(r["bill_usd"]) for r in res), sum(float(r["always_on_usd"]) for r in res)
            bill = f"bill {100 * b / ao:.1f}% of always-on, "
        n = max(1, len(dl))
        print(f"{f}: {bill}misses {len(miss)} of {len(dl)} ({100 * len(miss) / n:.1f}%); "
              f"starting on the warm part could save at most {s} ({100 * (len(miss) - s) / n:.1f}% left)")


if __name__ == "__main__":
    main()
