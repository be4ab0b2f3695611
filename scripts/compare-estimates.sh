#!/usr/bin/env bash
# Regenerates the estimates comparison of docs/simulation.md (issue 27):
# oracle, user and learned estimates (users off by exp(N(0, 0.5)), 10% noise
# on every run, application types hidden) on the three job mixes of
# examples/mixes, light and busy hours, tuning or held-out hours and seeds
# of the evaluation protocol. The tuning mix is etl-light-shuffle; the other
# two mixes are held out.
#
# Usage: scripts/compare-estimates.sh [tuning|heldout|all] > table.md
# LEARNED_DECISIONS=told runs learned mode with the estimates told at submission
# deciding (simulate --learned-decisions); the default, model, decides as live.
# Markdown goes to stdout, progress to stderr. About a minute on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."
which="${1:-all}"
case "$which" in tuning|heldout|all) ;; *) echo "usage: $0 [tuning|heldout|all]" >&2; exit 2;; esac

bin="$(mktemp -d)/sparkpack"
trap 'rm -rf "$(dirname "$bin")"' EXIT
echo "compare-estimates: building sparkpack" >&2
go build -o "$bin" ./cmd/sparkpack

policies=fifo-spread,fifo-consolidate,morpheus,bfd,dap
common=(--learned-decisions "${LEARNED_DECISIONS:-model}" --estimate-error 0.5 --run-noise 0.1 --app-type hidden --policies "$policies" --format json --quiet)
out="$(mktemp -d)"

one() { # set mix class hours jobs seeds
	local set="$1" mix="$2" class="$3" hours="$4" jobs="$5" seeds="$6"
	for mode in oracle user learned; do
		echo "compare-estimates: $set $mix $class $mode" >&2
		"$bin" simulate --mix "examples/mixes/$mix.json" --hours "$hours" --jobs "$jobs" --seeds "$seeds" \
			--estimates "$mode" "${common[@]}" > "$out/$set.$mix.$class.$mode.json"
	done
}
if [ "$which" != heldout ]; then
	one tuning etl-light-shuffle light 0,22,16 50 1-3
	one tuning etl-light-shuffle busy 6,7,4 100 1-3
fi
if [ "$which" != tuning ]; then
	for mix in join-heavy-shuffle iterative-graph; do
		one held-out "$mix" light 5,13,12 50 1001-1003
		one held-out "$mix" busy 23,19,20 100 1001-1003
	done
fi
python3 - "$out" <<'PY'
import glob, json, os, sys
rows = {}
for path in sorted(glob.glob(os.path.join(sys.argv[1], "*.json"))):
    st, mix, cls, mode = os.path.basename(path)[:-5].split(".")
    for run in json.load(open(path)):
        for r in run["results"]:
            k = (st, mix, cls, r["policy"])
            d = rows.setdefault(k, {}).setdefault(mode, {"cost": 0, "missed": 0, "dl": 0, "n": 0, "err": 0, "mape": 0, "mruns": 0, "pareto": 0})
            d["cost"] += r["total_cost_usd"]; d["missed"] += r["deadline_missed"]; d["dl"] += r["deadline_jobs"]
            d["n"] += 1; d["err"] += r.get("estimate_error_pct", 0)
            d["mape"] += r.get("model_mape_pct", 0) * r.get("model_mape_runs", 0); d["mruns"] += r.get("model_mape_runs", 0)
print("| set | mix | hours | policy | cost $ oracle / user / learned | missed % oracle / user / learned | estimate error % user / learned | model MAPE after 10 runs (runs) |")
print("|---|---|---|---|---|---|---|---|")
order = {"tuning": 0, "held-out": 1}
for k in sorted(rows, key=lambda k: (order[k[0]], k[1], k[2] != "light", k[3])):
    m = rows[k]
    cost = " / ".join("%.2f" % (m[x]["cost"] / m[x]["n"]) for x in ("oracle", "user", "learned"))
    miss = " / ".join("%.1f" % (100 * m[x]["missed"] / max(1, m[x]["dl"])) for x in ("oracle", "user", "learned"))
    err = " / ".join("%.0f" % (m[x]["err"] / m[x]["n"]) for x in ("user", "learned"))
    l = m["learned"]
    mape = "%.1f%% (%d)" % (l["mape"] / l["mruns"], l["mruns"]) if l["mruns"] else "-"
    print("| %s | %s | %s | %s | %s | %s | %s | %s |" % (k[0], k[1], k[2], k[3], cost, miss, err, mape))
PY
rm -rf "$out"
