#!/usr/bin/env bash
# bench-scale.sh — the production-scale scenario of the scheduler core (issue
# 12), outside `make test`. It starts, on free ports:
#   - a scratch PostgreSQL with the durable defaults (fsync on);
#   - the Mesos emulator with the thesis14 cluster;
#   - `sparkpack serve` against both;
# then measures the raw limit of the same PostgreSQL for one-row
# INSERT+COMMIT transactions with 64 connections (pgbench), and runs
# cmd/sparkpack-load: a job holding the cluster, 64 clients submitting as
# fast as they can (submits/s and latency), 1,000 submissions/s (how soon
# stored jobs are QUEUED), then fills the queues to 100,000 jobs and reads
# GET /api/v1/queues, starts a small job, reads serve's memory and pass
# times. Prints every figure with its target, and the ratio of durable
# submissions to the raw commit limit.
#
#   scripts/bench-scale.sh                 # the full scenario (~4 minutes)
#   scripts/bench-scale.sh --queued 20000  # flags go to sparkpack-load
#
# Environment: BENCH_SECONDS (pgbench and burst length, default 20),
# BENCH_CLIENTS (default 64), KEEP=1 keeps the logs in $workdir.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
secs=${BENCH_SECONDS:-20}
clients=${BENCH_CLIENTS:-64}

say() { echo "bench-scale: $*" >&2; }

scripts/deps.sh build >&2
mkdir -p bin
say "building sparkpack and sparkpack-load"
go build -o bin/sparkpack ./cmd/sparkpack
go build -o bin/sparkpack-load ./cmd/sparkpack-load

workdir=$(mktemp -d /tmp/sparkpack-bench.XXXXXX)
chmod 0755 "$workdir" # the PostgreSQL server runs as the postgres user when we are root
pgdir=$workdir/pg
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  scripts/scratch-pg.sh stop "$pgdir" >/dev/null 2>&1 || true
  if [ "${KEEP:-}" = 1 ]; then say "logs kept in $workdir"; else rm -rf "$workdir"; fi
}
trap cleanup EXIT

free_port() {
  local p
  for _ in $(seq 1 200); do
    p=$(( 20000 + RANDOM % 12000 ))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then echo "$p"; return 0; fi
  done
  echo "no free port" >&2; return 1
}

say "starting a durable scratch PostgreSQL (fsync on)"
admin=$(SCRATCH_PG_DURABLE=1 scripts/scratch-pg.sh start "$pgdir")
bindir=$(cat "$pgdir/bindir")
psql_admin() { "$bindir/psql" -q -v ON_ERROR_STOP=1 "$admin" "$@"; }
psql_admin -c "CREATE DATABASE sparkpack_bench" -c "CREATE DATABASE pgbench_raw"
dburl=${admin%/postgres*}/sparkpack_bench?sslmode=disable
rawurl=${admin%/postgres*}/pgbench_raw?sslmode=disable
[ "$(psql_admin -Atc 'SHOW fsync')" = on ] || { say "fsync is not on; the figures would not be of durable writes"; exit 1; }

say "raw limit: pgbench, one-row INSERT+COMMIT, $clients connections, $secs s"
"$bindir/psql" -q -v ON_ERROR_STOP=1 "$rawurl" -c "CREATE TABLE raw_insert (id bigint PRIMARY KEY, payload text NOT NULL, at timestamptz NOT NULL DEFAULT now())"
cat > "$workdir/raw.sql" <<'SQL'
\set id random(1, 9000000000000000)
INSERT INTO raw_insert (id, payload) VALUES (:id, 'one row') ON CONFLICT DO NOTHING;
SQL
"$bindir/pgbench" -n -M prepared -c "$clients" -j 2 -T "$secs" -f "$workdir/raw.sql" "$rawurl" > "$workdir/pgbench.out" 2>&1 \
  || { cat "$workdir/pgbench.out" >&2; exit 1; }
raw_tps=$(grep -Eo 'tps = [0-9.]+' "$workdir/pgbench.out" | head -1 | cut -d' ' -f3)
raw_p=$(grep -Eo 'latency average = [0-9.]+ ms' "$workdir/pgbench.out" | head -1)
say "raw limit: $raw_tps commits/s ($raw_p)"

mport=$(free_port); aport=$(free_port)
say "starting the Mesos emulator (thesis14) on 127.0.0.1:$mport"
bin/sparkpack mesos-sim --listen "127.0.0.1:$mport" --cluster thesis14 --offer-interval 200ms --time-scale 0.1 \
  --log-level warn > "$workdir/mesos-sim.log" 2>&1 &
pids+=($!)
say "starting sparkpack serve on 127.0.0.1:$aport"
bin/sparkpack serve --listen "127.0.0.1:$aport" --database-url "$dburl" --mesos-master "http://127.0.0.1:$mport" --rate-limit 0 \
  --log-level warn --log-format json > "$workdir/serve.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 150); do
  curl -fsS "http://127.0.0.1:$aport/readyz" >/dev/null 2>&1 && break
  sleep 0.2
done
curl -fsS "http://127.0.0.1:$aport/readyz" >/dev/null || { tail -50 "$workdir/serve.log" >&2; say "serve did not become ready"; exit 1; }

bin/sparkpack-load --api "http://127.0.0.1:$aport" --database-url "$dburl" --clients "$clients" --burst "${secs}s" "$@" \
  > "$workdir/load.json" --json || { tail -50 "$workdir/serve.log" >&2; exit 1; }

python3 - "$workdir/load.json" "$raw_tps" <<'PY'
import json, sys
r = json.load(open(sys.argv[1])); raw = float(sys.argv[2])
def row(what, got, target, ok):
    print(f"{what:<55} {got:<24} {target:<16} {'' if target == '' else ('ok' if ok else 'MISSED')}")
print(f"{'figure':<55} {'measured':<24} {'target':<16}")
print("-" * 104)
row("raw limit: pgbench one-row INSERT+COMMIT, commits/s", f"{raw:.0f}", "", True)
row(f"POST /api/v1/jobs, {r['burstClients']} clients, submits/s", f"{r['burstSubmitsPerSec']:.0f}", "", True)
ratio = r['burstSubmitsPerSec'] / raw if raw else 0
row("  ratio to the raw limit", f"{ratio:.2f}", ">= 0.5", ratio >= 0.5)
row("  latency p50 / p99 (ms)", f"{r['burstP50Ms']:.1f} / {r['burstP99Ms']:.1f}", "p99 < 50", r['burstP99Ms'] < 50)
row("  failed submissions", f"{r['burstFailed']}", "0", r['burstFailed'] == 0)
row("sustained submissions/s asked / achieved", f"{r['sustainedRate']:.0f} / {r['sustainedAchieved']:.0f}", ">= 1000", r['sustainedAchieved'] >= 0.98 * r['sustainedRate'] >= 980)
row("  stored -> QUEUED p50 / p99 / max (ms)", f"{r['intakeP50Ms']:.0f} / {r['intakeP99Ms']:.0f} / {r['intakeMaxMs']:.0f}", "max <= 1000", r['intakeMaxMs'] <= 1000 and r['intakeNotQueued'] == 0)
row("  queued within 1 s (%)", f"{r['intakeWithin1sPct']:.2f}", "100", r['intakeWithin1sPct'] >= 100)
row("  last submission -> in the core's queues (ms)", f"{r['coreCatchUpMs']:.0f}", "<= 1000", r['coreCatchUpMs'] <= 1000)
row("jobs queued while reading", f"{r['queued']}", ">= 100000", r['queued'] >= 100000)
row("  GET /api/v1/queues p50 / p99 (ms)", f"{r['queuesP50Ms']:.1f} / {r['queuesP99Ms']:.1f}", "p99 < 100", r['queuesP99Ms'] < 100)
row("  small job: submitted -> RESERVING (ms)", f"{r['smallJobStartMs']:.0f} ({r['smallJobState']})", "< 1000", 0 <= r['smallJobStartMs'] < 1000)
row("  serve RSS (MiB)", f"{r['serveRSSMiB']:.0f}", "< 500", 0 < r['serveRSSMiB'] < 500)
row("  full scheduling pass: longest (ms)", f"{r['passFullMaxMs']:.1f} ({r['passFullCount']:.0f} passes)", "< 100", 0 <= r['passFullMaxMs'] < 100)
row("  full scheduling pass p99 (ms, bucket bound)", f"{r['passFullP99Ms']:.1f}", "", True)
row("  incremental pass: longest / p99 (ms, bucket bound)", f"{r['passIncrementalMaxMs']:.1f} / {r['passIncrementalP99Ms']:.1f} ({r['passIncrementalCount']:.0f} passes)", "", True)
PY
