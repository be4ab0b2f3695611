#!/usr/bin/env bash
# Compares power management with and without the warm pool (issue 31) on
# the thesis-like workload: bill, always-on bill, deadline misses, boots
# and mean cpus powered on, per power-off time, policy and warm pool, as
# means over the seeds. Prints one markdown table.
#
#   scripts/compare-warm-pool.sh HOURS SEEDS JOBS [extra simulate flags...]
#   scripts/compare-warm-pool.sh 0 1-3 50                 # the tuning set
#   scripts/compare-warm-pool.sh 5,13,16,22 4-6 50        # held-out light hours
#   scripts/compare-warm-pool.sh 6,7,23 4-6 100           # held-out busy hours
#
# SPARKPACK (default: go run ./cmd/sparkpack) is the binary to run.
set -euo pipefail
hours=${1:?hours, e.g. 0 or 5,13,16}; seeds=${2:?seeds, e.g. 1-3}; jobs=${3:?jobs per hour, e.g. 50}; shift 3
bin=${SPARKPACK:-go run ./cmd/sparkpack}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
for off in never 2m 10m; do
  for wp in no yes; do
    [[ $off == never && $wp == yes ]] && continue
    args=(simulate --workload thesis --jobs "$jobs" --hours "$hours" --seeds "$seeds" --policies fifo-consolidate,dap --format json --quiet)
    [[ $off != never ]] && args+=(--power-off-after "$off")
    [[ $wp == yes ]] && args+=(--warm-pool)
    $bin "${args[@]}" "$@" >"$tmp/$off-$wp.json"
  done
done
python3 - "$tmp" "$hours" "$seeds" "$jobs" <<'PY'
import json, os, sys
tmp, hours, seeds, jobs = sys.argv[1:]
rows = {}
def load(off, wp):
    path = os.path.join(tmp, f"{off}-{wp}.json")
    if not os.path.exists(path):
        return None
    runs = json.load(open(path))
    if isinstance(runs, dict) or (runs and "results" not in runs[0] and "Results" not in runs[0]):
        runs = [{"Results": runs}]
    out = {}
    for run in runs:
        for r in run.get("Results") or run.get("results"):
            out.setdefault(r["policy"], []).append(r)
    return out
base = load("never", "no")
print(f"hours {hours}, seeds {seeds}, first {jobs} jobs of each hour; means over {len(next(iter(base.values())))} runs")
print()
print("| power off after | warm pool | policy | bill $ | always-on $ | bill / always-on | deadline misses % | always-on misses % | boots | mean cpus on |")
print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|")
mean = lambda xs: sum(xs) / len(xs)
for off in ["never", "2m", "10m"]:
    for wp in ["no", "yes"]:
        res = load(off, wp)
        if res is None:
            continue
        for pol, rs in res.items():
            bill = mean([r["bill_usd"] for r in rs]); ao = mean([r["always_on_usd"] for r in rs])
            miss = 100 * sum(r["deadline_missed"] for r in rs) / max(1, sum(r["deadline_jobs"] for r in rs))
            b = base[pol]
            bmiss = 100 * sum(r["deadline_missed"] for r in b) / max(1, sum(r["deadline_jobs"] for r in b))
            boots = mean([r["boots"] for r in rs]); cpus = mean([r["mean_on_cpus"] for r in rs])
            print(f"| {off} | {wp} | {pol} | {bill:.2f} | {ao:.2f} | {100*bill/ao:.0f}% | {miss:.1f} | {bmiss:.1f} | {boots:.1f} | {cpus:.1f} |")
PY
