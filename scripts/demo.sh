#!/usr/bin/env bash
# demo.sh — builds sparkpack and runs `sparkpack demo`: an emulated Mesos
# cluster (thesis14), a scratch PostgreSQL, the scheduler, the REST API and
# the dashboard at http://127.0.0.1:8080, with a sample SWIM workload.
# Flags are passed on, e.g. scripts/demo.sh --sim-speed 10 --no-sample.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh build
mkdir -p bin
echo "demo: building sparkpack"
go build -o bin/sparkpack ./cmd/sparkpack
exec bin/sparkpack demo "$@"
