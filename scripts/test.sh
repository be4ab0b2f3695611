#!/usr/bin/env bash
# test.sh — runs every test of sparkpack against real parts: installs what
# is missing (scripts/deps.sh), starts a scratch PostgreSQL for the run,
# runs go vet, the unit and integration tests, and each fuzz target briefly.
#
# Environment: FUZZTIME (inputs per fuzz target, default 20000x; a
# duration such as 30s also works, but Go 1.26's fuzz coordinator can then
# fail a clean target with "context deadline exceeded" at the end of the
# time, golang/go#75804; 0 skips fuzzing),
# GOTESTFLAGS (extra flags for go test, e.g. -run TestX), MESOS_BIN (a
# Mesos build's bin folder for the real-Mesos tests of
# integration/realmesos; by default ../shared/mesos/bin when it exists,
# see scripts/mesos-bin.sh; MESOS_BIN=off skips them).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

step() { echo; echo "==> $*"; }

step "dependencies"
scripts/deps.sh test

pgdir=$(mktemp -d /tmp/sparkpack-test-pg.XXXXXX)
rmdir "$pgdir"
cleanup() { scripts/scratch-pg.sh stop "$pgdir" >/dev/null 2>&1 || true; }
trap cleanup EXIT
step "scratch PostgreSQL"
export SPARKPACK_TEST_DATABASE_URL=$(scripts/scratch-pg.sh start "$pgdir")
echo "tests use $SPARKPACK_TEST_DATABASE_URL"

if mesos_bin=$(scripts/mesos-bin.sh); then
  export MESOS_BIN=$mesos_bin
  echo "real Mesos tests (integration/realmesos): $MESOS_BIN"
else
  echo "real Mesos tests (integration/realmesos): skipped; set MESOS_BIN to a Mesos build's bin folder to run them"
fi

step "go vet"
go vet ./...

step "go test (unit and integration)"
# shellcheck disable=SC2086
go test -count=1 -timeout 20m ${GOTESTFLAGS:-} ./... 2>&1 | tee /tmp/sparkpack-test.log | grep -v '^scratch-pg:\|^waiting for server\|^server st\|^postgres://'
status=${PIPESTATUS[0]}
if [ "$status" != 0 ]; then
  echo "go test failed (full log: /tmp/sparkpack-test.log)" >&2
  exit "$status"
fi

fuzztime=${FUZZTIME:-20000x}
if [ "$fuzztime" != 0 ]; then
  step "fuzz targets, $fuzztime each"
  grep -rl --include='*_test.go' '^func Fuzz' . | sort | while read -r f; do
    pkg=./$(dirname "${f#./}")
    for target in $(grep -o '^func Fuzz[A-Za-z0-9_]*' "$f" | cut -d' ' -f2); do
      echo "fuzz $pkg $target"
      corpus=$pkg/testdata/fuzz/$target
      before=$(ls "$corpus" 2>/dev/null | sort || true)
      if ! go test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" "$pkg" >/tmp/sparkpack-fuzz.log 2>&1; then
        cat /tmp/sparkpack-fuzz.log
        added=$(comm -13 <(echo "$before") <(ls "$corpus" 2>/dev/null | sort || true))
        if [ -n "$added" ]; then
          echo "fuzz target $target in $pkg failed on an input it wrote to $corpus/$added; rerun it with: go test -run '$target/$added' $pkg" >&2
        else
          echo "fuzz target $target in $pkg failed without writing an input (see the log above); rerun it with: go test -run '^\$' -fuzz '^$target\$' -fuzztime $fuzztime $pkg" >&2
        fi
        exit 1
      fi
    done
  done
fi

step "summary"
passed=$(grep -c '^ok ' /tmp/sparkpack-test.log || true)
failed=$(grep -c '^FAIL' /tmp/sparkpack-test.log || true)
echo "packages: $passed passed, $failed failed"
