#!/usr/bin/env bash
# test.sh — runs every test of sparkpack against real parts: installs what
# is missing (scripts/deps.sh), starts a scratch PostgreSQL for the run,
# runs go vet, checks that go.mod is tidy, runs the unit and integration
# tests, the packages with concurrency again under -race, and each fuzz
# target briefly.
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

# This run's logs (two runs on one machine must not share them).
testlog=$(mktemp /tmp/sparkpack-test.XXXXXX.log)
racelog=$(mktemp /tmp/sparkpack-race.XXXXXX.log)
fuzzlog=$(mktemp /tmp/sparkpack-fuzz.XXXXXX.log)
pgdir=$(mktemp -d /tmp/sparkpack-test-pg.XXXXXX)
rmdir "$pgdir"
cleanup() { scripts/scratch-pg.sh stop "$pgdir" >/dev/null 2>&1 || true; rm -f "$fuzzlog"; }
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

step "go mod tidy"
# go.mod and go.sum must be what go mod tidy makes of them (a module
# imported directly must not be marked // indirect, none left unused).
if ! tidydiff=$(go mod tidy -diff 2>&1); then
  echo "$tidydiff"
  echo "go.mod/go.sum are not tidy: run 'go mod tidy' and commit the result" >&2
  exit 1
fi
echo "go.mod and go.sum are tidy"

step "go test (unit and integration)"
# shellcheck disable=SC2086
go test -count=1 -timeout 20m ${GOTESTFLAGS:-} ./... 2>&1 | tee "$testlog" | grep -v '^scratch-pg:\|^waiting for server\|^server st\|^postgres://'
status=${PIPESTATUS[0]}
if [ "$status" != 0 ]; then
  echo "go test failed (full log: $testlog)" >&2
  exit "$status"
fi

# The packages whose code runs concurrently, again under the race
# detector (about 2 minutes on 2 cores: whole packages, no -short). A
# data race fails the run like a failed test.
racepkgs="./scheduler/ ./offers/ ./power/ ./leader/ ./api/ ./store/"
step "go test -race ($racepkgs)"
# shellcheck disable=SC2086
go test -race -count=1 -timeout 20m ${GOTESTFLAGS:-} $racepkgs 2>&1 | tee "$racelog" | grep -v '^scratch-pg:\|^waiting for server\|^server st\|^postgres://'
status=${PIPESTATUS[0]}
if [ "$status" != 0 ]; then
  echo "go test -race failed (full log: $racelog)" >&2
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
      if ! go test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" "$pkg" >"$fuzzlog" 2>&1; then
        cat "$fuzzlog"
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
passed=$(grep -c '^ok ' "$testlog" || true)
failed=$(grep -c '^FAIL' "$testlog" || true)
echo "under -race: $(grep -c '^ok ' "$racelog" || true) packages passed"
echo "packages: $passed passed, $failed failed"
echo "deploy test (the docker-compose stack, needs Docker): not part of make test; run make test-deploy (.ci/run does when a Docker engine can be started)"
