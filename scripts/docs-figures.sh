#!/usr/bin/env bash
# docs-figures.sh — regenerates the figures the docs state, in place, from
# this checkout (`make figures`). Review the diff (git diff docs/) and
# commit it with the code that changed them.
#
#   scripts/docs-figures.sh              # everything below
#   scripts/docs-figures.sh deterministic  # only the simulator's tables (same on every machine)
#   scripts/docs-figures.sh timings      # only the machine-dependent figures
#   scripts/docs-figures.sh preemption derived   # some parts: policies, preemption,
#                                        # sensitivity, derived, single-runs, demo-bill
#
# Deterministic (the simulator on a virtual clock; TestDocFigures in
# simulate checks them on every `make test`, so they cannot go stale):
#   docs/simulation.md   "All figures" (scripts/compare-policies.sh all),
#                        the sensitivity grid and ablation (scripts/dap-sensitivity.sh),
#                        the power-management table
#   docs/preemption-results.md (scripts/compare-preemption.sh all) and the
#                        summary tables of docs/preemption.md
# Machine-dependent (written with the date, the commit and the machine's
# load beside them):
#   docs/simulation.md   "Single runs of the trace-sized workload" (scheduling delays)
#   docs/power.md        the demo's bill (scripts/demo-bill.sh; live demo, about 2-3 minutes)
#   the run times of the comparison scripts (printed at the end, and in
#   the generated blocks' header comments)
# Not written here: docs/deploy.md's failover times (measured by the HA
# integration test, see that page) and docs/scale.md's benchmarks
# (scripts/bench-*.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
parts=" "
for a in "${@:-all}"; do
	case "$a" in
	all) parts+="policies preemption sensitivity derived single-runs demo-bill " ;;
	deterministic) parts+="policies preemption sensitivity derived " ;;
	timings) parts+="single-runs demo-bill " ;;
	policies|preemption|sensitivity|derived|single-runs|demo-bill) parts+="$a " ;;
	*) echo "usage: $0 [all|deterministic|timings|policies|preemption|sensitivity|derived|single-runs|demo-bill]..." >&2; exit 2 ;;
	esac
done
want() { [[ "$parts" == *" $1 "* ]]; }

commit=$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- . ':!docs' || echo "+changes")
machine() { echo "$(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"; }
stamp() { echo "$(date -u +%Y-%m-%dT%H:%MZ), commit $commit, $(machine)"; }
work=$(mktemp -d /tmp/sparkpack-figures.XXXXXX)
trap 'rm -rf "$work"' EXIT
timings=()

# region FILE NAME CONTENT-FILE: replaces what lies between
# "<!-- BEGIN NAME" and "<!-- END NAME -->" in FILE.
region() {
	python3 - "$1" "$2" "$3" <<'PY'
import sys
path, name, content = sys.argv[1], sys.argv[2], open(sys.argv[3]).read()
text = open(path).read()
b = text.find("<!-- BEGIN " + name)
e = text.find("<!-- END " + name + " -->")
if b < 0 or e < b:
    sys.exit(f"docs-figures: no region {name} in {path}")
b = text.index("\n", b) + 1
open(path, "w").write(text[:b] + content.rstrip("\n") + "\n\n" + text[e:])
PY
}

# timed LABEL CMD...: runs CMD (stdout to $work/out), records its times.
timed() {
	local label="$1"; shift
	echo "docs-figures: $label" >&2
	local t0; t0=$(date +%s)
	/usr/bin/time -f "%U %S" -o "$work/time" "$@" > "$work/out"
	local cpu; cpu=$(awk '{printf "%.0f", $1 + $2}' "$work/time")
	timings+=("| \`$label\` | $(( $(date +%s) - t0 )) s | $cpu s | $(stamp) |")
}

if want policies; then
	timed "scripts/compare-policies.sh all" scripts/compare-policies.sh all
	# The page nests the script's sections one level deeper.
	sed 's/^### /#### /' "$work/out" > "$work/policies.md"
	region docs/simulation.md compare-policies "$work/policies.md"
fi
if want preemption; then
	timed "scripts/compare-preemption.sh all" scripts/compare-preemption.sh all
	region docs/preemption-results.md compare-preemption "$work/out"
fi
if want sensitivity; then
	timed "scripts/dap-sensitivity.sh" scripts/dap-sensitivity.sh
	region docs/simulation.md dap-sensitivity "$work/out"
fi
if want derived; then
	echo "docs-figures: derived tables (go test ./simulate/ -run TestDocFigures -update-docs)" >&2
	go test ./simulate/ -count=1 -run 'TestDocFigures' -args -update-docs >&2
fi

if want single-runs; then
	go build -o "$work/sparkpack" ./cmd/sparkpack
	{
		echo "Measured $(stamp) (scheduling delays are real time: they depend on the machine and its load)."
		for run in "16|**Lightest hour** by data volume (hour 16: 144 jobs, 192 GB read+shuffled+written; hour 11 of the file is empty)|--hour 16" \
			"7|**Busiest hour** by data volume (hour 7: 427 jobs, 12.6 TB)|--hour 7" \
			"all|**The whole trace** (24 h, 5,894 jobs)|" \
			"7x10|**A loaded cluster**: the busiest hour with 10× the data|--hour 7 --scale 10"; do
			IFS='|' read -r _ title flags <<<"$run"
			echo
			echo "$title: \`sparkpack simulate${flags:+ $flags}\`"
			echo
			echo '```'
			t0=$(date +%s)
			# shellcheck disable=SC2086
			"$work/sparkpack" simulate $flags --quiet
			echo '```'
			echo
			echo "(all eight policies in $(( $(date +%s) - t0 )) s of wall time)"
		done
	} > "$work/single.md"
	region docs/simulation.md single-runs "$work/single.md"
fi
if want demo-bill; then
	echo "docs-figures: scripts/demo-bill.sh (a live demo at 30x, a few minutes)" >&2
	if scripts/demo-bill.sh > "$work/bill" 2> "$work/bill.err"; then
		{
			echo '```'
			echo "\$ scripts/demo-bill.sh            # SIM_SPEED=30, HOURS=1; $(stamp)"
			cat "$work/bill"
			echo '```'
		} > "$work/bill.md"
		region docs/power.md demo-bill "$work/bill.md"
	else
		cat "$work/bill.err" >&2
		echo "docs-figures: demo-bill.sh failed; docs/power.md left as it was" >&2
	fi
fi

if [ ${#timings[@]} -gt 0 ]; then
	echo
	echo "Run times of the comparison scripts (wall, cpu user+sys):"
	echo
	echo "| script | wall | cpu | when, commit, machine |"
	echo "|---|---:|---:|---|"
	printf '%s\n' "${timings[@]}"
fi
echo "docs-figures: done; review with git diff docs/" >&2
