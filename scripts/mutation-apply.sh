#!/usr/bin/env bash
# mutation-apply.sh — apply one mutant by hand, run the package's tests,
# restore the file: to check that a new test kills a mutant gremlins
# reported LIVED, or to decide a mutant it reported NOT COVERED (gremlins
# only tests what the package's own coverage profile reaches: a switch's
# case expressions are never in it, nor code only other packages' tests
# run).
#
# Usage:
#   scripts/mutation-apply.sh FILE:LINE:COLUMN MUTATOR [go test flags...]
#   scripts/mutation-apply.sh offers/lifecycle/step.go:193:16 CONDITIONALS_NEGATION -run TestTranscripts
#
# FILE:LINE:COLUMN and MUTATOR are as gremlins prints them (the column of
# the operator, 1-based, a tab counting one). Prints KILLED (with the
# failing tests) or LIVED; exits 0 either way, 2 when the operator is not
# at that column. The tests run with -short and -count=1, in the file's
# package; the file is restored even if the tests are interrupted.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -lt 2 ]; then
	sed -n '2,/^set -e/p' "$0" | grep '^#' | sed 's/^# \{0,1\}//'
	exit 2
fi
spec=$1 mutator=$2
shift 2
IFS=: read -r file line col <<<"$spec"
backup=$(mktemp)
cp "$file" "$backup"
trap 'cp "$backup" "$file"; rm -f "$backup"' EXIT
if ! text=$(python3 - "$file" "$line" "$col" "$mutator" <<'PY'
import sys
f, l, c, typ = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
lines = open(f).read().split("\n")
s, i = lines[l - 1], c - 1
two = s[i:i + 2]
op = two if two in ("<=", ">=", "==", "!=", "++", "--") else s[i]
table = {
    "CONDITIONALS_BOUNDARY": {"<": "<=", "<=": "<", ">": ">=", ">=": ">"},
    "CONDITIONALS_NEGATION": {"==": "!=", "!=": "==", "<": ">=", "<=": ">", ">": "<=", ">=": "<"},
    "ARITHMETIC_BASE": {"+": "-", "-": "+", "*": "/", "/": "*", "%": "*"},
    "INVERT_NEGATIVES": {"-": "+"},
    "INCREMENT_DECREMENT": {"++": "--", "--": "++"},
}.get(typ, {})
if op not in table:
    sys.exit(f"no {typ} operator at {f}:{l}:{c}: {s.strip()!r}")
lines[l - 1] = s[:i] + table[op] + s[i + len(op):]
open(f, "w").write("\n".join(lines))
print(lines[l - 1].strip())
PY
); then
	exit 2
fi
if out=$(go test "./$(dirname "$file")" -short -count=1 -vet=off "$@" 2>&1); then
	echo "LIVED $spec $mutator: $text"
else
	echo "KILLED $spec $mutator: $text"
	echo "$out" | grep -E -- '--- FAIL|^panic|build failed' | head -5 | sed 's/^/    /'
fi
