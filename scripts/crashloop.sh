#!/usr/bin/env bash
# crashloop.sh — issue 21's crash loop at full size: JOBS jobs (default 150)
# submitted to the real binary on the Mesos emulator, sparkpack SIGKILLed
# KILLS times (default 30) while they reserve and launch, then every job
# must finish after exactly one run (GAP_MS, default 60: longest pause
# between a restart being up and the next SIGKILL) (none FAILED without running, no retry
# used). Prints the test's log, with the count of jobs by final state.
set -euo pipefail
cd "$(dirname "$0")/.."
export SPARKPACK_CRASHLOOP_JOBS=${JOBS:-150} SPARKPACK_CRASHLOOP_KILLS=${KILLS:-30} SPARKPACK_CRASHLOOP_GAP_MS=${GAP_MS:-60}
echo "crash loop: $SPARKPACK_CRASHLOOP_JOBS jobs, $SPARKPACK_CRASHLOOP_KILLS SIGKILLs (a few minutes)"
go test -count=1 -timeout 20m -run '^TestE2ERestartsDuringLaunchingCostNothing$' -v ./integration/ 2>&1 \
  | grep -E 'reliability_test|^--- |^ok|^FAIL|^PASS' | cut -c1-400
