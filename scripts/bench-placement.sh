#!/usr/bin/env bash
# Measures placement latency: BenchmarkPlace in ./placement times every
# Place call and reports the median (p50-ns) and 99th percentile (p99-ns).
# Usage: scripts/bench-placement.sh [ops-per-case] [bench-regexp]
#   e.g. scripts/bench-placement.sh 1000 'BenchmarkPlace/policy=dap/'
# Prints the raw `go test` output, then a Markdown table, then the latency
# targets (p99 < 1 ms at 1,000 agents, < 10 ms at 10,000) per policy measured.
set -euo pipefail
cd "$(dirname "$0")/.."
N="${1:-1000}"
RE="${2:-BenchmarkPlace}"
out="$(mktemp)"
trap 'rm -f "$out"' EXIT
cmd=(go test ./placement/ -run '^$' -bench "$RE" -benchtime="${N}x" -count=1 -timeout 60m)
echo "\$ ${cmd[*]}"
"${cmd[@]}" | tee "$out"
echo
echo "| policy | agents | executors | p50 | p99 | mean | ILP outcomes (optimal/incumbent/fallback) |"
echo "|---|---:|---:|---:|---:|---:|---|"
awk '
function fmt(ns) {
	if (ns >= 1e6) return sprintf("%.2f ms", ns / 1e6)
	return sprintf("%.1f µs", ns / 1e3)
}
/^BenchmarkPlace\// {
	split($1, parts, "/")
	pol = parts[2]; sub("policy=", "", pol)
	ag = parts[3]; sub("agents=", "", ag)
	ex = parts[4]; sub("executors=", "", ex); sub("-[0-9]+$", "", ex)
	delete v
	for (i = 3; i < NF; i++) v[$(i+1)] = $i
	oc = ""
	if ("optimal/op" in v) oc = sprintf("%.0f%% / %.0f%% / %.0f%%", 100*v["optimal/op"], 100*v["incumbent/op"], 100*v["fallback/op"])
	printf "| %s | %s | %s | %s | %s | %s | %s |\n", pol, ag, ex, fmt(v["p50-ns"]), fmt(v["p99-ns"]), fmt(v["ns/op"]), oc
}
/SKIP|--- SKIP/ { }
' "$out"
echo
echo "| policy | worst p99 at 1,000 agents (target < 1 ms) | worst p99 at 10,000 agents (target < 10 ms) |"
echo "|---|---:|---:|"
awk '
/^BenchmarkPlace\// {
	split($1, parts, "/")
	pol = parts[2]; sub("policy=", "", pol)
	ag = parts[3]; sub("agents=", "", ag)
	for (i = 3; i < NF; i++) if ($(i+1) == "p99-ns") p99 = $i
	pols[pol] = 1
	if (ag == 1000 && p99 > w1[pol]) w1[pol] = p99
	if (ag == 10000 && p99 > w10[pol]) w10[pol] = p99
}
END {
	for (p in pols) {
		a = (p in w1) ? sprintf("%.2f ms %s", w1[p] / 1e6, (w1[p] < 1e6 ? "met" : "NOT met")) : "-"
		b = (p in w10) ? sprintf("%.2f ms %s", w10[p] / 1e6, (w10[p] < 1e7 ? "met" : "NOT met")) : "-"
		printf "| %s | %s | %s |\n", p, a, b
	}
}
' "$out"
echo
echo "(load average while measuring: $(cut -d' ' -f1-3 /proc/loadavg))"
