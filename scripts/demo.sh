#!/usr/bin/env bash
# demo.sh — builds sparkpack and runs `sparkpack demo`: an emulated Mesos
# cluster (thesis14), a scratch PostgreSQL, the scheduler, the REST API and
# the dashboard (http://127.0.0.1:8080, or a free port when 8080 is busy:
# the demo prints it), with a sample workload that runs until Ctrl-C.
# Flags are passed on, e.g. scripts/demo.sh --sim-speed 10 --no-sample,
# or from make: make demo ARGS="--sim-speed 10 --no-sample".
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh build
mkdir -p bin
echo "demo: building sparkpack"
go build -o bin/sparkpack ./cmd/sparkpack
exec bin/sparkpack demo "$@"
