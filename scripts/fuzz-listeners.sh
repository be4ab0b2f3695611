#!/usr/bin/env bash
# fuzz-listeners.sh — sends N malformed and mutated requests (default
# 10000) to both listeners of a real `serve` (scratch PostgreSQL, tokens,
# --protect-reads, the Spark REST allowlist) and fails on any 5xx from
# sparkpack, any panic, or a 4xx whose body is not the listener's JSON
# error. It prints the count sent and the answers by status.
#
#   scripts/fuzz-listeners.sh            # 10000 requests, a new seed
#   scripts/fuzz-listeners.sh 50000 42   # 50000 requests, seed 42 (replay)
#
# make test runs a short version (600 requests) of the same test.
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-10000}
seed=${2:-}
pgdir=$(mktemp -d /tmp/sparkpack-fuzz-pg.XXXXXX)
rmdir "$pgdir"
cleanup() { scripts/scratch-pg.sh stop "$pgdir" >/dev/null 2>&1 || true; }
trap cleanup EXIT
export SPARKPACK_TEST_DATABASE_URL=$(scripts/scratch-pg.sh start "$pgdir")
export SPARKPACK_FUZZ_REQUESTS=$n
if [ -n "$seed" ]; then export SPARKPACK_FUZZ_SEED=$seed; fi
echo "sending $n hostile requests to both listeners (progress every 2000)"
go test -count=1 -timeout 60m -run '^TestHostileRequests$' -v ./cmd/sparkpack/ 2>&1 | grep -v 'level=info\|^scratch-pg:\|^waiting for server\|^server st'
