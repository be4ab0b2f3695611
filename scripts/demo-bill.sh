#!/usr/bin/env bash
# demo-bill.sh — what the demo's sample workload costs with power
# management, by the emulator's bill (the referee), against the same
# cluster always on. Runs `sparkpack demo` (emulated thesis14 cluster,
# scratch PostgreSQL, the SWIM sample) faster than real time, waits until
# every sample job has ended and the bill covers HOURS of simulated time,
# then prints the bill and the always-on bill (simulated time), and
# sparkpack's own meter (wall-clock time: equal only at SIM_SPEED=1).
#
#   scripts/demo-bill.sh                  # 1 simulated hour at 30x
#   SIM_SPEED=60 HOURS=2 scripts/demo-bill.sh -- --power-off-after 5m
#
# Extra flags after -- go to `sparkpack demo`.
set -euo pipefail
cd "$(dirname "$0")/.."
speed=${SIM_SPEED:-30}
hours=${HOURS:-1}
[ "${1:-}" = -- ] && shift
scripts/deps.sh build >&2
mkdir -p bin
go build -o bin/sparkpack ./cmd/sparkpack
out=$(mktemp)
# --teams off: the demo's sample teams came after the documented figures (docs/power.md)
bin/sparkpack demo --listen 127.0.0.1:0 --mesos-listen 127.0.0.1:0 --spark-rest-listen= \
  --sim-speed "$speed" --sample-max-gap 2s --log-level warn --teams off "$@" > "$out" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -f "$out"' EXIT
api=""
emu=""
for _ in $(seq 1 300); do
  api=$(sed -n 's/^demo: dashboard  \(.*\)\/$/\1/p' "$out" | head -1)
  emu=$(sed -n 's/^demo: emulator   \(.*\)\/sim\/agents$/\1/p' "$out" | head -1)
  [ -n "$api" ] && [ -n "$emu" ] && break
  kill -0 $pid 2>/dev/null || { cat "$out" >&2; exit 1; }
  sleep 0.2
done
[ -n "$api" ] && [ -n "$emu" ] || { cat "$out" >&2; echo "demo-bill: the demo did not start" >&2; exit 1; }
echo "demo-bill: demo at $api, simulated time x$speed" >&2
python3 - "$api" "$speed" "$hours" "$emu" <<'PY'
import json, sys, time, urllib.request
api, speed, hours, emu = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
def get(path, base=None):
    with urllib.request.urlopen((base or api) + path, timeout=10) as r:
        return json.load(r)
terminal = {"FINISHED", "FAILED", "KILLED", "REJECTED", "CANCELLED"}
start = time.time()
while True:
    jobs = get("/api/v1/jobs?limit=1000")["jobs"]
    done = [j for j in jobs if j["state"] in terminal]
    cost = get("/api/v1/cost")
    # The emulator's own bill, in simulated time (/api/v1/cost's "bill" is
    # put on sparkpack's wall clock under --sim-speed).
    bill = get("/sim/bill", emu)
    sim = bill.get("seconds", 0)
    print(f"demo-bill: {len(done)}/{len(jobs)} jobs ended, {sim/3600:.2f} simulated h, bill ${bill.get('totalUSD', 0):.3f} of ${bill.get('alwaysOnUSD', 0):.3f} always on", file=sys.stderr)
    if jobs and len(done) == len(jobs) and sim >= hours * 3600:
        break
    if time.time() - start > 3600:
        sys.exit("demo-bill: gave up after an hour of wall time")
    time.sleep(5)
states = {}
for j in jobs:
    states[j["state"]] = states.get(j["state"], 0) + 1
print(f"jobs: {len(jobs)} {states}")
print(f"simulated time: {sim/3600:.2f} h (x{speed:g})")
print(f"emulator bill, power management on: ${bill['totalUSD']:.3f}")
print(f"emulator bill, always on:           ${bill['alwaysOnUSD']:.3f}")
print(f"saved: {100*(1-bill['totalUSD']/bill['alwaysOnUSD']):.1f}%")
print(f"sparkpack's own meter (active agents only, wall-clock time): ${cost['totalUSD']:.3f}")
PY
