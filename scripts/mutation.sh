#!/usr/bin/env bash
# mutation.sh — mutation testing with gremlins (github.com/go-gremlins/gremlins):
# each mutant (a comparison flipped, a + made a -, a boundary moved...) is
# applied to a copy of the module and the package's tests are run; a mutant
# the tests do not notice LIVED. Outside `make test` (it takes minutes to an
# hour); docs/testing.md explains the scores and the equivalent mutants.
#
# Usage:
#   scripts/mutation.sh                 # placement scheduler simulate power offers store
#   scripts/mutation.sh placement simulate
#   scripts/mutation.sh --diff main     # only the lines changed since main, in the
#                                       # packages with changed Go files (before stopping)
#
# Options: --diff BASE (changed lines only), --exclude REGEX (skip the files
# whose path matches, repeatable; gremlins matches the path relative to the
# package folder, e.g. 'boot\.go$', not 'scheduler/boot.go'), --only REGEX
# (mutate only the package's files whose name matches, repeatable: every other
# non-test .go file of the package is excluded), --full (run the tests without
# -short: the random property tests then use all their seeds; slower),
# --workers N (default 1; the machine is shared), --timeout-coefficient N
# (default 40: a mutant's build and test run may take N x the coverage run,
# which reuses the build cache while every mutant rebuilds its package,
# cgo included; on a loaded machine 10 timed most of placement's out).
# Environment: MUTATION_MEM_GIB (virtual memory cap of every process, default
# 16), MUTATION_OUT (folder for the JSON results and logs, default
# a fresh temporary one), SPARKPACK_TEST_DATABASE_URL (otherwise store and
# offers start a scratch PostgreSQL, see scripts/scratch-pg.sh).
#
# The score per package is killed / (killed + lived - known equivalents);
# the equivalent mutants are listed, with why, in scripts/mutation-equivalent.txt
# (matched by file, mutator, column and source line, so they survive line
# shifts).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

# Pinned: v0.6.0 builds with go1.26 and installs through the module proxy.
gremlins_version=v0.6.0

diff_base="" full=0 workers=1 coef=40
pkgs=()
excludes=()
onlys=()
while [ $# -gt 0 ]; do
	case "$1" in
	--diff) diff_base="$2"; shift 2 ;;
	--full) full=1; shift ;;
	--exclude) excludes+=(-E "$2"); shift 2 ;;
	--only) onlys+=("$2"); shift 2 ;;
	--workers) workers="$2"; shift 2 ;;
	--timeout-coefficient) coef="$2"; shift 2 ;;
	-h|--help) sed -n '2,/^set -e/p' "$0" | grep '^#' | sed 's/^# \{0,1\}//'; exit 0 ;;
	-*) echo "mutation.sh: unknown option $1" >&2; exit 2 ;;
	*) pkgs+=("${1#./}"); shift ;;
	esac
done

bindir="${XDG_CACHE_HOME:-$HOME/.cache}/sparkpack/gremlins-$gremlins_version"
gremlins="$bindir/gremlins"
if [ ! -x "$gremlins" ]; then
	echo "mutation: installing gremlins $gremlins_version into $bindir" >&2
	GOBIN="$bindir" go install "github.com/go-gremlins/gremlins/cmd/gremlins@$gremlins_version"
fi

if [ ${#pkgs[@]} -eq 0 ]; then
	if [ -n "$diff_base" ]; then
		# The packages with changed (non-test) Go files.
		mapfile -t pkgs < <(git diff --name-only "$diff_base" -- '*.go' | grep -v '_test\.go$' | xargs -r -n1 dirname | sort -u)
		if [ ${#pkgs[@]} -eq 0 ]; then
			echo "mutation: no Go file changed since $diff_base"
			exit 0
		fi
	else
		pkgs=(placement scheduler simulate power offers store)
	fi
fi

out="${MUTATION_OUT:-$(mktemp -d /tmp/sparkpack-mutation.XXXXXX)}"
if [ -n "$diff_base" ]; then
	shim="$out/git-shim"
	mkdir -p "$shim"
	realgit="$(command -v git)"
	cat >"$shim/git" <<SHIM
#!/bin/sh
if [ "\$1" = diff ] && [ -n "\$SPARKPACK_MUTATION_PKG" ]; then
	shift
	exec "$realgit" diff -U0 --relative="\$SPARKPACK_MUTATION_PKG" "\$@"
fi
exec "$realgit" "\$@"
SHIM
	chmod +x "$shim/git"
	PATH="$shim:$PATH"
fi

mkdir -p "$out"

needs_pg=0
for p in "${pkgs[@]}"; do
	case "$p" in store|offers|leader|api|integration*) needs_pg=1 ;; esac
done
if [ "$needs_pg" = 1 ] && [ -z "${SPARKPACK_TEST_DATABASE_URL:-}" ]; then
	pgdir=$(mktemp -d /tmp/sparkpack-mutation-pg.XXXXXX)
	rmdir "$pgdir"
	trap 'scripts/scratch-pg.sh stop "$pgdir" >/dev/null 2>&1 || true' EXIT
	SPARKPACK_TEST_DATABASE_URL=$(scripts/scratch-pg.sh start "$pgdir")
	export SPARKPACK_TEST_DATABASE_URL
fi

if [ "$full" = 0 ]; then
	# go test reads -short from GOFLAGS: the property tests run their
	# reduced seed counts (every test still runs).
	export GOFLAGS="${GOFLAGS:+$GOFLAGS }-short"
fi
# go vet belongs to make test; here it would only slow every mutant down.
# -count=1: gremlins' coverage run sets the timeout (its coefficient times
# that run); a cached test result makes it ~0.1 s and every mutant then
# times out.
export GOFLAGS="${GOFLAGS:+$GOFLAGS }-vet=off -count=1"

# A mutant can make the tests allocate without bound (a store mutant reached
# 9 GB, a simulate one 22 GB): cap every process's virtual memory so that it
# fails its tests instead of taking the machine down (MUTATION_MEM_GIB).
ulimit -v $(( ${MUTATION_MEM_GIB:-16} * 1024 * 1024 ))
echo "mutation: gremlins $gremlins_version on ${pkgs[*]}${diff_base:+ (lines changed since $diff_base)}; $workers worker(s), timeout x$coef, $([ "$full" = 1 ] && echo full || echo short) tests; results in $out" >&2
for p in "${pkgs[@]}"; do
	if [ ! -d "$p" ]; then
		echo "mutation: no package folder $p" >&2
		exit 2
	fi
	start=$(date +%s)
	echo "mutation: $p ..." >&2
	mkdir -p "$(dirname "$out/$p.json")" # a nested package (offers/lifecycle) writes under a folder
	args=(unleash --workers "$workers" --timeout-coefficient "$coef" -o "$out/$p.json")
	[ -n "$diff_base" ] && args+=(--diff "$diff_base")
	# gremlins v0.6.0 matches git diff's file names (from the repository
	# root: placement/dap.go) against its mutants' (from the package:
	# dap.go), so with --diff it skipped every mutant and scored 100%; and
	# it takes a fragment's added lines as one run after its leading
	# context. The git it calls is a shim that asks for names relative to
	# the package (--relative) and no context lines (-U0: every fragment is
	# one run of added lines).
	export SPARKPACK_MUTATION_PKG="$p"
	[ ${#excludes[@]} -gt 0 ] && args+=("${excludes[@]}")
	if [ ${#onlys[@]} -gt 0 ]; then
		# --only: exclude every other non-test file of the package by its exact name.
		kept=0
		for f in "$p"/*.go; do
			b=$(basename "$f")
			case "$b" in *_test.go) continue ;; esac
			keep=0
			for re in "${onlys[@]}"; do
				if printf '%s\n' "$b" | grep -qE -- "$re"; then keep=1; fi
			done
			if [ "$keep" = 1 ]; then
				kept=$((kept + 1))
			else
				args+=(-E "^${b//./\\.}\$")
			fi
		done
		if [ "$kept" = 0 ]; then
			echo "mutation: --only matches no file of $p" >&2
			exit 2
		fi
		# gremlins also mutates the packages in the folder's subfolders
		# (offers/lifecycle under offers): --only names files of this one.
		args+=(-E '/')
	fi
	# Progress: gremlins prints one line per mutant as it is decided.
	if ! "$gremlins" "${args[@]}" "./$p" 2>&1 | tee "$out/$p.log" | grep --line-buffered -E '^ *(KILLED|LIVED|TIMED OUT|NOT VIABLE)|Gathering|Mutator coverage|ERROR' >&2; then
		:
	fi
	if [ ! -s "$out/$p.json" ]; then
		echo "mutation: gremlins wrote no result for $p (log: $out/$p.log)" >&2
		exit 1
	fi
	echo "mutation: $p done in $(( $(date +%s) - start ))s" >&2
done

python3 - "$root" "$out" "${pkgs[@]}" <<'PY'
import json, os, sys
root, out, pkgs = sys.argv[1], sys.argv[2], sys.argv[3:]
# Known equivalent mutants: "file | MUTATOR | column | source line | why".
equiv = {}
with open(os.path.join(root, "scripts", "mutation-equivalent.txt")) as f:
    for line in f:
        line = line.rstrip("\n")
        if not line.strip() or line.startswith("#"):
            continue
        parts = line.split(" | ", 4)
        if len(parts) == 5:
            equiv[(parts[0].strip(), parts[1].strip(), int(parts[2]), parts[3].strip())] = parts[4].strip()
rows, lived_new = [], []
for p in pkgs:
    r = json.load(open(os.path.join(out, p + ".json")))
    k = l = t = nv = nc = eq = 0
    timed = []
    for f in r.get("files", []):
        name = f["file_name"]
        # gremlins names a file from the module root or from the package
        # folder (lifecycle/step.go under offers).
        path = next((c for c in (name, os.path.join(p, name), os.path.join(p, os.path.basename(name)))
                     if os.path.exists(os.path.join(root, c))), name)
        src = open(os.path.join(root, path)).read().split("\n")
        for m in f["mutations"]:
            s = m["status"]
            if s == "KILLED": k += 1
            elif s == "TIMED OUT":
                t += 1
                timed.append(f"{path}:{m['line']}:{m['column']} {m['type']}")
            elif s == "NOT VIABLE": nv += 1
            elif s == "NOT COVERED": nc += 1
            elif s == "LIVED":
                text = src[m["line"] - 1].strip() if m["line"] <= len(src) else ""
                if (path, m["type"], m["column"], text) in equiv:
                    eq += 1
                else:
                    l += 1
                    lived_new.append(f"{path}:{m['line']}:{m['column']} {m['type']}: {text}")
    # A timed-out mutant is left out of the score: on a loaded machine a
    # slow build times out as well as a mutant that hangs the tests.
    denom = k + l
    score = 100.0 * k / denom if denom else 100.0
    rows.append((p, k, l, eq, t, nc, nv, score))
    lived_new.extend(f"timed out (undecided): {x}" for x in timed)
print()
print("| package | killed | lived, not equivalent | lived, equivalent | timed out | not covered | not viable | score |")
print("|---|---:|---:|---:|---:|---:|---:|---:|")
for p, k, l, eq, t, nc, nv, score in rows:
    print(f"| {p} | {k} | {l} | {eq} | {t} | {nc} | {nv} | {score:.1f}% |")
print()
print("score = killed / (killed + lived, not equivalent); timed-out mutants are left out (rerun them with a larger --timeout-coefficient)")
if lived_new:
    print()
    print("Lived mutants not known to be equivalent (kill them with a test, or add them to scripts/mutation-equivalent.txt with why):")
    for x in lived_new:
        print("  " + x)
PY
