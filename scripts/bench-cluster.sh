#!/usr/bin/env bash
# bench-cluster.sh — the cluster-scale scenario (issue 20), outside `make
# test`. For each cluster size it generates a cluster file (three instance
# types in the thesis14 proportions: 4, 8 and 12 cpus), starts on free ports
#   - a scratch PostgreSQL (one for the whole run, a fresh database per size),
#   - the Mesos emulator with that cluster (allocation interval 1 s, as a
#     Mesos master's default; simulated task time 10x faster),
#   - `sparkpack serve` against both,
# then runs cmd/sparkpack-clusterload: 51 small jobs submitted at once and
# followed until they end. It prints, per size: jobs finished,
# reservations-confirmed -> driver-launched latency, GET /api/v1/cluster
# latency p50/p99, serve RSS and cpu, emulator RSS and cpu, placement p99,
# and a summary table at the end.
#
#   scripts/bench-cluster.sh                   # 1,000 / 10,000 / 30,000 agents
#   scripts/bench-cluster.sh 2000 10000        # chosen sizes
#   scripts/bench-cluster.sh 10000 30000 50000 # the sizes of issue 30 (up to
#                                              # clusterspec.MaxAgents, 100,000)
#   RUNS=3 scripts/bench-cluster.sh 10000      # three runs of each size
#
# Environment: RUNS (default 1), JOBS (default 51), TIMEOUT (default 180s),
# OFFER_INTERVAL (default 1s), EXTRA_SERVE / EXTRA_SIM (more flags),
# SERVE_GOMEMLIMIT (Go's soft memory limit for serve only, e.g. 400MiB),
# PPROF=1 (serve on :6060+, emulator on :6061+ profiles kept in the workdir),
# KEEP=1 keeps logs and profiles in $workdir.
set -euo pipefail
cd "$(dirname "$0")/.."
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(1000 10000 30000)
runs=${RUNS:-1}
jobs=${JOBS:-51}
timeout=${TIMEOUT:-180s}
offer_ivl=${OFFER_INTERVAL:-1s}

say() { echo "bench-cluster: $*" >&2; }

mkdir -p bin
say "building sparkpack and sparkpack-clusterload"
go build -o bin/sparkpack ./cmd/sparkpack
go build -o bin/sparkpack-clusterload ./cmd/sparkpack-clusterload

workdir=$(mktemp -d /tmp/sparkpack-bench-cluster.XXXXXX)
chmod 0755 "$workdir"
pgdir=$workdir/pg
pids=()
stop_all() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  pids=()
}
cleanup() {
  stop_all
  scripts/scratch-pg.sh stop "$pgdir" >/dev/null 2>&1 || true
  if [ "${KEEP:-}" = 1 ] || [ "${PPROF:-}" = 1 ]; then say "logs kept in $workdir"; else rm -rf "$workdir"; fi
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

say "starting a scratch PostgreSQL"
admin=$(scripts/scratch-pg.sh start "$pgdir")
bindir=$(cat "$pgdir/bindir")

gen_cluster() { # N FILE: N agents, 6:5:3 of 4/8/12 cpus (like thesis14)
  python3 - "$1" "$2" <<'PY'
import json, sys
n, path = int(sys.argv[1]), sys.argv[2]
a = n * 6 // 14; b = n * 5 // 14; c = n - a - b
groups = [
  {"count": a, "cpus": 4, "memMB": 16384, "diskMB": 100000, "pricePerHour": 0.24, "instanceType": "m.xlarge"},
  {"count": b, "cpus": 8, "memMB": 32768, "diskMB": 100000, "pricePerHour": 0.48, "instanceType": "m.2xlarge"},
  {"count": c, "cpus": 12, "memMB": 49152, "diskMB": 100000, "pricePerHour": 0.72, "instanceType": "m.3xlarge"},
]
json.dump({"name": f"gen{n}", "groups": [g for g in groups if g["count"] > 0]}, open(path, "w"))
PY
}

results=()
for n in "${sizes[@]}"; do
  for run in $(seq 1 "$runs"); do
    tag="n${n}-r${run}"
    say "== $n agents, run $run of $runs =="
    gen_cluster "$n" "$workdir/cluster-$n.json"
    db="bench_${tag//-/_}"
    "$bindir/psql" -q -v ON_ERROR_STOP=1 "$admin" -c "CREATE DATABASE $db"
    dburl=${admin%/postgres*}/$db?sslmode=disable
    mport=$(free_port); aport=$(free_port)
    simflags=(); serveflags=()
    if [ "${PPROF:-}" = 1 ]; then
      simflags+=(--pprof "127.0.0.1:$(free_port)"); serveflags+=(--pprof "127.0.0.1:$(free_port)")
    fi
    say "starting the Mesos emulator ($n agents) on 127.0.0.1:$mport"
    # shellcheck disable=SC2086
    bin/sparkpack mesos-sim --listen "127.0.0.1:$mport" --cluster "$workdir/cluster-$n.json" --offer-interval "$offer_ivl" \
      --time-scale 0.1 --log-level warn "${simflags[@]}" ${EXTRA_SIM:-} > "$workdir/mesos-sim-$tag.log" 2>&1 &
    simpid=$!; pids+=($simpid)
    # serve starts once the emulator answers: building a cluster of tens of
    # thousands of agents takes it seconds, and serve's subscription would
    # meanwhile back off (up to seconds) before the scenario starts.
    for _ in $(seq 1 600); do
      curl -fsS "http://127.0.0.1:$mport/version" >/dev/null 2>&1 && break
      kill -0 "$simpid" 2>/dev/null || { tail -30 "$workdir/mesos-sim-$tag.log" >&2; say "the emulator exited"; exit 1; }
      sleep 0.2
    done
    say "starting sparkpack serve on 127.0.0.1:$aport"
    # shellcheck disable=SC2086
    env ${SERVE_GOMEMLIMIT:+GOMEMLIMIT=$SERVE_GOMEMLIMIT} bin/sparkpack serve --listen "127.0.0.1:$aport" --database-url "$dburl" --mesos-master "http://127.0.0.1:$mport" \
      --rate-limit 0 --log-level warn --log-format json "${serveflags[@]}" ${EXTRA_SERVE:-} > "$workdir/serve-$tag.log" 2>&1 &
    servepid=$!; pids+=($servepid)
    for _ in $(seq 1 300); do
      curl -fsS "http://127.0.0.1:$aport/readyz" >/dev/null 2>&1 && break
      sleep 0.2
    done
    curl -fsS "http://127.0.0.1:$aport/readyz" >/dev/null || { tail -30 "$workdir/serve-$tag.log" >&2; say "serve did not become ready"; exit 1; }
    if [ "${PPROF:-}" = 1 ]; then
      ( sleep 8
        curl -fsS "http://${serveflags[1]}/debug/pprof/profile?seconds=20" -o "$workdir/serve-$tag.cpu.pprof" &
        curl -fsS "http://${simflags[1]}/debug/pprof/profile?seconds=20" -o "$workdir/sim-$tag.cpu.pprof" &
        wait ) &
    fi
    bin/sparkpack-clusterload --api "http://127.0.0.1:$aport" --agents "$n" --jobs "$jobs" --timeout "$timeout" \
      --serve-pid "$servepid" --emulator-pid "$simpid" --json > "$workdir/result-$tag.json" \
      || { tail -30 "$workdir/serve-$tag.log" >&2; say "the scenario failed (logs in $workdir)"; KEEP=1; exit 1; }
    if [ "${PPROF:-}" = 1 ]; then
      curl -fsS "http://${serveflags[1]}/debug/pprof/heap" -o "$workdir/serve-$tag.heap.pprof" || true
      curl -fsS "http://${simflags[1]}/debug/pprof/heap" -o "$workdir/sim-$tag.heap.pprof" || true
    fi
    wait_jobs=$(jobs -p | grep -v -e "^$simpid\$" -e "^$servepid\$" || true)
    [ -z "$wait_jobs" ] || wait $wait_jobs 2>/dev/null || true
    stop_all
    results+=("$workdir/result-$tag.json")
    python3 - "$workdir/result-$tag.json" <<'PY' >&2
import json, sys
r = json.load(open(sys.argv[1]))
print(f"bench-cluster: {r['agents']} agents: {r['finished']}/{r['jobs']} finished ({r['finishedInWindow']} within {r['windowSec']:.0f} s), "
      f"launch p99 {r['launchP99Ms']:.0f} ms max {r['launchMaxMs']:.0f} ms, cluster p99 {r['clusterP99Ms']:.0f} ms, "
      f"serve {r['serveRSSMiB']:.0f} MiB {r['serveCPU']:.2f} cores, emulator {r['emulatorRSSMiB']:.0f} MiB {r['emulatorCPU']:.2f} cores, "
      f"placement p99 {r['placementEventsP99Ms']:.2f} ms")
PY
  done
done

python3 - "${results[@]}" <<'PY'
import json, sys
rows = [json.load(open(p)) for p in sys.argv[1:]]
hdr = ["agents", "finished", "in 45 s", "all ended s", "launch p50/p99/max ms", "dropped", "cluster p50/p99 ms", "cluster KiB",
       "serve MiB", "serve cores avg/peak", "emu MiB", "emu cores", "placement p50/p99 ms"]
print(" | ".join(hdr))
print(" | ".join("---" for _ in hdr))
for r in rows:
    print(" | ".join([
        f"{r['agents']:,}", f"{r['finished']}/{r['jobs']}", str(r['finishedInWindow']), f"{r['allEndedSec']:.1f}",
        f"{r['launchP50Ms']:.0f} / {r['launchP99Ms']:.0f} / {r['launchMaxMs']:.0f}", str(r['droppedLaunches']),
        f"{r['clusterP50Ms']:.1f} / {r['clusterP99Ms']:.1f}", f"{r['clusterBytes']//1024}",
        f"{r['serveRSSMiB']:.0f}", f"{r['serveCPU']:.2f} / {r['serveCPUPeak']:.2f}", f"{r['emulatorRSSMiB']:.0f}",
        f"{r['emulatorCPU']:.2f}", f"{r['placementEventsP50Ms']:.2f} / {r['placementEventsP99Ms']:.2f}"]))
PY
