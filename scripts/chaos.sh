#!/usr/bin/env bash
# chaos.sh — sparkpack's chaos suite (issue 34), outside `make test` (which
# runs its short version, TestChaosShort in internal/chaos). It builds
# bin/sparkpack and bin/sparkpack-chaos, then sparkpack-chaos starts a
# scratch PostgreSQL, the Mesos emulator (`sparkpack mesos-sim`) and three
# `sparkpack serve` instances and, with jobs submitted all along, runs:
#   - the leader killed (kill -9) 19 times, every other time during the
#     new leader's recovery;
#   - 3 split brains: the leader stopped (SIGSTOP) until another leads,
#     then continued;
#   - 5 stalls of the leader's lease renewals in the database (2 s) and
#     5 pauses of its process (1 s), which must depose nobody;
#   - PostgreSQL stopped twice and its postmaster killed twice;
#   - 330 hostile requests (bad bodies, NUL and invalid query parameters,
#     launcher classes and launch settings, missing and wrong tokens).
# Each scenario prints lost / doubled / leaked / 5xx for client errors /
# 503 without Retry-After / unauthorised / unwanted failovers and the
# failover times; a Markdown table (docs/chaos.md) ends the run. It exits
# non-zero on any breach (a failover over 5 s is one).
#
#   scripts/chaos.sh                       # the full suite (~4 minutes)
#   scripts/chaos.sh --kills 3 --hostile 50  # flags go to sparkpack-chaos (--help lists them)
#   scripts/chaos.sh --reserve-mode offers   # every serve instance reserves from offers
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh build >&2
mkdir -p bin
go build -o bin/sparkpack ./cmd/sparkpack
go build -o bin/sparkpack-chaos ./cmd/sparkpack-chaos
exec bin/sparkpack-chaos --bin bin/sparkpack --root . "$@"
