#!/usr/bin/env bash
# Compares power management with and without the warm pool (issue 31) on
# the thesis-like workload: bill, always-on bill, deadline misses, boots
# and mean warm cpus (powered on), per power-off time, policy and warm
# pool, as means over the seeds. Prints markdown tables.
#
#   scripts/compare-warm-pool.sh HOURS SEEDS JOBS [extra simulate flags...]
#   scripts/compare-warm-pool.sh 0 1-3 50                 # the tuning set
#   scripts/compare-warm-pool.sh 5,13,16,22 4-6 50        # held-out light hours
#   scripts/compare-warm-pool.sh 6,7,23 4-6 100           # held-out busy hours
#   scripts/compare-warm-pool.sh all [extra simulate flags...]
#                                   # the three tables of docs/power.md, each
#                                   # with issue 31's target checked
#   scripts/compare-warm-pool.sh light50 [extra simulate flags...]
#                                   # light hours at 50 jobs an hour
#                                   # (SAMPLE=1: 50 jobs drawn across each
#                                   # hour): the tuning set, then the held-out
#                                   # hours, without and with --warm-history
#   scripts/compare-warm-pool.sh fresh [extra simulate flags...]
#                                   # a second held-out set, defined on
#                                   # 2026-11-26 after the first had been run
#                                   # several times: hours no other set uses
#                                   # (light 1, 15, 3, 9 at 50 jobs an hour;
#                                   # busy 21, 18, 14 at 100), seeds 7-9, the
#                                   # forecast from the hour before; the thesis
#                                   # mix, then examples/mixes/bi-reporting.json
#   scripts/compare-warm-pool.sh light50-misses [extra simulate flags...]
#                                   # where the misses of the closest light50
#                                   # rows come from (simulate --job-log)
#   scripts/compare-warm-pool.sh busy100 [extra simulate flags...]
#                                   # the held-out busy hours at 100 jobs an
#                                   # hour (SAMPLE=1), without and with
#                                   # --warm-history
#   scripts/compare-warm-pool.sh busy-misses [extra simulate flags...]
#                                   # the busy tuning hour (4, seeds 1-3,
#                                   # --sample 100, --warm-history): each
#                                   # deadline job the warm pool misses and
#                                   # always-on does not (simulate --job-log)
#
# Environment:
#   SPARKPACK  the binary to run (default: go run ./cmd/sparkpack)
#   POLICIES   comma-separated policies (default: every policy of simulate)
#   OFFS       power-off times (default: "never 30s 2m 10m"; never is
#              always on, the baseline of the misses)
#   TARGET     light or busy: add issue 31's target column (light: bill at
#              most 60% of always-on and misses at most 2 points above the
#              always-on misses of the same policy; busy: no more misses
#              than always-on)
#   WARM_HISTORY=1  the warm pool's forecast starts from the trace's hour
#              before each window (simulate --warm-history), as serve's
#              starts from its stored history
#   SAMPLE=1   JOBS jobs drawn uniformly across each hour with the seed, at
#              their own times (simulate --sample JOBS: JOBS jobs an hour),
#              instead of the hour's first JOBS (--jobs JOBS, which arrive
#              within 14-47 minutes on the light hours: 64-214 jobs an hour)
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ ${1:-} == all ]]; then
  shift
  echo "### Tuning set (hour 0, seeds 1-3, 50 jobs): the only runs anything was tuned on"
  echo
  TARGET=light "$0" 0 1-3 50 "$@"
  echo
  echo "### Held out: light hours (5, 13, 16, 22; seeds 4-6; 50 jobs)"
  echo
  TARGET=light "$0" 5,13,16,22 4-6 50 "$@"
  echo
  echo "### Held out: busy hours (6, 7, 23; seeds 4-6; 100 jobs)"
  echo
  TARGET=busy "$0" 6,7,23 4-6 100 "$@"
  echo
  echo "### Held out, the forecast from the hour before (--warm-history): light hours (5, 13, 16, 22; seeds 4-6; 50 jobs)"
  echo
  WARM_HISTORY=1 TARGET=light "$0" 5,13,16,22 4-6 50 "$@"
  echo
  echo "### Held out, the forecast from the hour before (--warm-history): busy hours (6, 7, 23; seeds 4-6; 100 jobs)"
  echo
  WARM_HISTORY=1 TARGET=busy "$0" 6,7,23 4-6 100 "$@"
  exit
fi
if [[ ${1:-} == light50 ]]; then
  shift
  echo "#### Tuning set at 50 jobs an hour (hour 0, seeds 1-3, --sample 50)"
  echo
  SAMPLE=1 TARGET=light "$0" 0 1-3 50 "$@"
  echo
  echo "#### Held out at 50 jobs an hour: light hours (5, 13, 16, 22; seeds 4-6; --sample 50)"
  echo
  SAMPLE=1 TARGET=light "$0" 5,13,16,22 4-6 50 "$@"
  echo
  echo "#### Held out at 50 jobs an hour, the forecast from the hour before (--warm-history; that hour also drawn at 50 jobs)"
  echo
  SAMPLE=1 WARM_HISTORY=1 TARGET=light "$0" 5,13,16,22 4-6 50 "$@"
  exit
fi
if [[ ${1:-} == fresh ]]; then
  shift
  for mix in thesis bi-reporting; do
    m=(); [[ $mix != thesis ]] && m=(--mix "examples/mixes/$mix.json")
    echo "#### Fresh held-out set, $mix mix: light hours (1, 15, 3, 9; seeds 7-9; --sample 50; --warm-history)"
    echo
    SAMPLE=1 WARM_HISTORY=1 TARGET=light "$0" 1,15,3,9 7-9 50 "${m[@]}" "$@"
    echo
    echo "#### Fresh held-out set, $mix mix: busy hours (21, 18, 14; seeds 7-9; --sample 100; --warm-history)"
    echo
    SAMPLE=1 WARM_HISTORY=1 TARGET=busy "$0" 21,18,14 7-9 100 "${m[@]}" "$@"
    echo
  done
  exit
fi
if [[ ${1:-} == light50-misses ]]; then
  shift
  if [[ -n ${SPARKPACK:-} ]]; then bin=($SPARKPACK); else
    go build -o "${TMPDIR:-/tmp}/sparkpack-compare-warm-pool" ./cmd/sparkpack
    bin=("${TMPDIR:-/tmp}/sparkpack-compare-warm-pool")
  fi
  tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
  names=()
  # hours seeds power-off [history]
  for run in "0 1-3 2m" "5,13,16,22 4-6 2m" "5,13,16,22 4-6 30s history" "5,13,16,22 4-6 2m history"; do
    read -r hours seeds off hist <<<"$run"
    name="hours $hours, seeds $seeds: warm pool, power off after $off"
    extra=()
    if [[ -n $hist ]]; then extra=(--warm-history); name+=", forecast from the hour before"; fi
    "${bin[@]}" simulate --workload thesis --hours "$hours" --seeds "$seeds" --sample 50 --policies fifo-consolidate,dap \
      --power-off-after "$off" --warm-pool "${extra[@]}" --format csv --quiet --job-log "$tmp/${#names[@]}.csv" "$@" >/dev/null
    names+=("$name")
  done
  python3 - "$tmp" "${names[@]}" <<'PY'
import csv, os, statistics as st, sys
tmp, *names = sys.argv[1:]
print("light hours at 50 jobs an hour (--sample 50), deadline jobs summed over the runs (boot 60 s; hour 0 is the tuning set)")
print()
print("| run | policy | deadline jobs | missed | missed in the first 300 s | missed with >= 2 arrivals in the boot time before | missed finding fewer free cpus than asked | arrivals finding fewer free cpus than asked (missed) | free cpus at arrival: mean / median | arrivals with >= 2 / >= 3 others in the boot time before | slack below the boot |")
print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for i, name in enumerate(names):
    rows = list(csv.DictReader(open(os.path.join(tmp, f"{i}.csv"))))
    for pol in ("fifo-consolidate", "dap"):
        rs = [r for r in rows if r["policy"] == pol and r["deadline"] == "true"]
        short = lambda r: float(r["free_cpus_at_arrival"]) < int(r["cpus"])
        m = [r for r in rs if r["missed"] == "true"]
        s = [r for r in rs if short(r)]
        free = [float(r["free_cpus_at_arrival"]) for r in rs]
        before = [int(r["arrivals_in_boot_before"]) for r in rs]
        pct = lambda k: f"{100 * k / len(rs):.0f}%"
        print(f"| {name} | {pol} | {len(rs)} | {len(m)} | {sum(float(r['submit_s']) < 300 for r in m)} | "
              f"{sum(int(r['arrivals_in_boot_before']) >= 2 for r in m)} | {sum(short(r) for r in m)} | "
              f"{len(s)} ({sum(r['missed'] == 'true' for r in s)}) | "
              f"{st.mean(free):.0f} / {st.median(free):.0f} | {pct(sum(b >= 2 for b in before))} / {pct(sum(b >= 3 for b in before))} | "
              f"{pct(sum(float(r['slack_s']) < 60 for r in rs))} |")
PY
  exit
fi
if [[ ${1:-} == busy100 ]]; then
  shift
  echo "#### Held out at 100 jobs an hour: busy hours (6, 7, 23; seeds 4-6; --sample 100)"
  echo
  SAMPLE=1 TARGET=busy "$0" 6,7,23 4-6 100 "$@"
  echo
  echo "#### Held out at 100 jobs an hour, the forecast from the hour before (--warm-history; that hour also drawn at 100 jobs)"
  echo
  SAMPLE=1 WARM_HISTORY=1 TARGET=busy "$0" 6,7,23 4-6 100 "$@"
  exit
fi
if [[ ${1:-} == busy-misses ]]; then
  shift
  if [[ -n ${SPARKPACK:-} ]]; then bin=($SPARKPACK); else
    go build -o "${TMPDIR:-/tmp}/sparkpack-compare-warm-pool" ./cmd/sparkpack
    bin=("${TMPDIR:-/tmp}/sparkpack-compare-warm-pool")
  fi
  tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
  for off in never 30s 2m 10m; do
    extra=()
    [[ $off != never ]] && extra=(--power-off-after "$off" --warm-pool --warm-history)
    "${bin[@]}" simulate --workload thesis --hours 4 --seeds 1-3 --sample 100 "${extra[@]}" --format csv --quiet --job-log "$tmp/$off.csv" "$@" >/dev/null
  done
  python3 - "$tmp" <<'PY'
import csv, os, sys
tmp = sys.argv[1]
key = lambda r: (r["seed"], r["policy"], r["job"])
base = {key(r): r for r in csv.DictReader(open(os.path.join(tmp, "never.csv")))}
print("busy tuning hour 4, seeds 1-3, 100 jobs an hour (--sample 100), warm pool with --warm-history: deadline jobs missed with it and not always on")
print()
print("| power off after | seed | policy | job | arrival s | cpus | slack s | wait s (always on) | free cpus at arrival | arrivals in the boot time before |")
print("|---|---:|---|---|---:|---:|---:|---:|---:|---:|")
sums = []
for off in ("30s", "2m", "10m"):
    added = removed = 0
    for r in csv.DictReader(open(os.path.join(tmp, off + ".csv"))):
        b = base[key(r)]
        if r["deadline"] != "true" or r["missed"] == b["missed"]:
            continue
        if r["missed"] == "true":
            added += 1
            print(f"| {off} | {r['seed']} | {r['policy']} | {r['job']} | {float(r['submit_s']):.0f} | {r['cpus']} | {float(r['slack_s']):.1f} | "
                  f"{float(r['wait_s']):.1f} ({float(b['wait_s']):.1f}) | {float(r['free_cpus_at_arrival']):.0f} | {r['arrivals_in_boot_before']} |")
        else:
            removed += 1
    sums.append(f"{off}: {added} more, {removed} fewer")
print()
print("misses against always on (all policies, 3 runs each): " + "; ".join(sums))
PY
  exit
fi
hours=${1:?hours, e.g. 0 or 5,13,16}; seeds=${2:?seeds, e.g. 1-3}; jobs=${3:?jobs per hour, e.g. 50}; shift 3
if [[ -n ${SPARKPACK:-} ]]; then
  bin=($SPARKPACK)
else
  go build -o "${TMPDIR:-/tmp}/sparkpack-compare-warm-pool" ./cmd/sparkpack
  bin=("${TMPDIR:-/tmp}/sparkpack-compare-warm-pool")
fi
policies=${POLICIES:-fifo-spread,fifo-consolidate,morpheus,bfd,ilp,exact,gio,dap}
offs=${OFFS:-never 30s 2m 10m}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
order=()
for off in $offs; do
  for wp in no yes; do
    [[ $off == never && $wp == yes ]] && continue
    args=(simulate --workload thesis --hours "$hours" --seeds "$seeds" --policies "$policies" --format json --quiet)
    if [[ -n ${SAMPLE:-} ]]; then args+=(--sample "$jobs"); else args+=(--jobs "$jobs"); fi
    [[ $off != never ]] && args+=(--power-off-after "$off")
    [[ $wp == yes ]] && args+=(--warm-pool)
    [[ $wp == yes && -n ${WARM_HISTORY:-} ]] && args+=(--warm-history)
    "${bin[@]}" "${args[@]}" "$@" >"$tmp/$off-$wp.json"
    order+=("$off-$wp")
  done
done
[[ -e $tmp/never-no.json ]] || { echo "OFFS must hold never (the always-on baseline)" >&2; exit 2; }
python3 - "$tmp" "$hours" "$seeds" "$jobs" "${TARGET:-}" "${order[@]}" <<'PY'
import json, os, sys
tmp, hours, seeds, jobs, target, *order = sys.argv[1:]
def load(name):
    runs = json.load(open(os.path.join(tmp, name + ".json")))
    if isinstance(runs, dict) or (runs and "results" not in runs[0] and "Results" not in runs[0]):
        runs = [{"Results": runs}]
    out = {}
    for run in runs:
        for r in run.get("Results") or run.get("results"):
            out.setdefault(r["policy"], []).append(r)
    return out
mean = lambda xs: sum(xs) / len(xs)
misses = lambda rs: 100 * sum(r["deadline_missed"] for r in rs) / max(1, sum(r["deadline_jobs"] for r in rs))
base = load("never-no")
hist = " (warm pool: the forecast from the hour before)" if os.environ.get("WARM_HISTORY") else ""
picked = f"{jobs} jobs drawn across each hour (--sample {jobs})" if os.environ.get("SAMPLE") else f"first {jobs} jobs of each hour"
print(f"hours {hours}, seeds {seeds}, {picked}; means over {len(next(iter(base.values())))} runs{hist}")
print()
head = "| power off after | warm pool | policy | bill $ | always-on $ | bill / always-on | deadline misses % | always-on misses % | boots | mean warm cpus |"
rule = "|---|---|---|---:|---:|---:|---:|---:|---:|---:|"
if target:
    head += " target |"
    rule += "---|"
print(head)
print(rule)
met = []
for name in order:
    off, wp = name.split("-")
    for pol, rs in load(name).items():
        bill = mean([r["bill_usd"] for r in rs]); ao = mean([r["always_on_usd"] for r in rs])
        miss, bmiss = misses(rs), misses(base[pol])
        boots = mean([r["boots"] for r in rs]); cpus = mean([r["mean_on_cpus"] for r in rs])
        row = f"| {off} | {wp} | {pol} | {bill:.2f} | {ao:.2f} | {100*bill/ao:.0f}% | {miss:.1f} | {bmiss:.1f} | {boots:.1f} | {cpus:.1f} |"
        if target and off == "never":
            row += " (baseline) |"
        elif target == "light":
            why = [w for w, bad in (("bill", round(100 * bill / ao) > 60), ("misses", round(miss, 1) > round(bmiss, 1) + 2)) if bad]
            row += (" met |" if not why else " not met (" + ", ".join(why) + ") |")
        elif target == "busy":
            row += (" met |" if round(miss, 1) <= round(bmiss, 1) else " not met (misses) |")
        if target and off != "never" and row.endswith(" met |"):
            met.append(f"{off} {'with' if wp == 'yes' else 'without'} the warm pool, {pol}")
        print(row)
# The floor no power management reaches: agents billed only while they
# hold work (sparkpack's own meter, always on), no idle time, no boot.
print()
print("agents billed only while they hold work (no idle time, no boot), always on: " +
      ", ".join(f"{pol} {100*mean([r['total_cost_usd'] for r in rs])/mean([r['always_on_usd'] for r in rs]):.0f}%" for pol, rs in base.items()) +
      " of always-on")
if target:
    print("target met by: " + ("; ".join(met) if met else "none"))
PY
