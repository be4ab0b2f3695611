#!/usr/bin/env bash
# mesos-agent-crash.sh — checks on the real Mesos build (scripts/mesos-bin.sh)
# what the master says about an agent whose process dies (SIGKILL, as in a
# machine crash) and (e) comes back with its work dir wiped at the same
# address, (f) wiped at a new address, (g) with its work dir kept after a
# few seconds (a slow restart), (h) never comes back; and (i) what a
# restarted master lists before its agents re-register. It prints
# GET_AGENTS (agents and recovered_agents) at each step and the operator
# event stream (SUBSCRIBE) at the end. Facts recorded in docs/power.md ("An
# agent that crashed and came back under a new agent id"). Usage:
#   scripts/mesos-agent-crash.sh [master-port] (default 45160; it also uses the next two)
set -uo pipefail
M=$(dirname "$0")/mesos-bin.sh
M=$("$M") || { echo "no Mesos build (scripts/mesos-bin.sh)" >&2; exit 1; }
MP=${1:-45160}; AP=$((MP + 1)); AP2=$((MP + 2))
D=$(mktemp -d /tmp/mesos-agent-crash.XXXXXX)
MPID=; APID=; SPID=
cleanup() { for p in "$SPID" "$APID" "$MPID"; do [ -n "$p" ] && kill -TERM "$p" 2>/dev/null; done; sleep 1; }
trap cleanup EXIT
api() { curl -s -X POST -H 'Content-Type: application/json' -H 'Accept: application/json' "http://127.0.0.1:$MP/api/v1" -d "$1" -w ' [HTTP %{http_code}]\n'; }
T0=$(date +%s.%N)
ts() { python3 -c "import sys; print('t=%5.1fs' % (float('$(date +%s.%N)') - $T0))"; }
agents() {
  echo "  $(ts) GET_AGENTS:"
  api '{"type":"GET_AGENTS"}' | python3 -c '
import sys, json
t = sys.stdin.read(); j = json.loads(t[:t.rfind(" [HTTP")])
g = j["get_agents"]
for a in g.get("agents", []):
    res = [(r["name"], r["scalar"]["value"], [x.get("role") for x in r["reservations"]]) for r in a.get("total_resources", []) if r.get("reservations")]
    print("    agent", a["agent_info"]["id"]["value"], a["agent_info"]["hostname"], "port", a["agent_info"].get("port"), "active", a["active"],
          "deactivated", a.get("deactivated"), "registered", a.get("registered_time", {}).get("nanoseconds", 0) // 10**9 % 1000,
          "reregistered", a.get("reregistered_time", {}).get("nanoseconds", 0) // 10**9 % 1000, "reserved", res)
for a in g.get("recovered_agents", []):
    print("    recovered_agent", a["id"]["value"], a["hostname"], "port", a.get("port"))'
}
first_id() { api '{"type":"GET_AGENTS"}' | grep -o '"id":{"value":"[^"]*-S[0-9]*"' | tail -1 | sed 's/.*"value":"//;s/"//'; }
start_master() {
  "$M/mesos-master" --ip=127.0.0.1 --port=$MP --work_dir="$D/master" --agent_ping_timeout=2secs --max_agent_ping_timeouts=3 >>"$D/master.log" 2>&1 &
  MPID=$!; sleep 3
}
subscribe() {
  curl -s -N -X POST -H 'Content-Type: application/json' -H 'Accept: application/json' "http://127.0.0.1:$MP/api/v1" \
    -d '{"type":"SUBSCRIBE"}' 2>/dev/null | while IFS= read -r l; do echo "$(ts) $l"; done >>"$D/events" &
  SPID=$!
}
start_agent() { # port
  "$M/mesos-agent" --master=127.0.0.1:$MP --ip=127.0.0.1 --port="$1" --work_dir="$D/agent" --hostname=agent-x \
    --resources='cpus:4;mem:4096' --launcher=posix --isolation=posix/cpu,posix/mem --launcher_dir="$M" \
    --no-systemd_enable_support >>"$D/agent.log" 2>&1 &
  APID=$!; sleep 4
}
crash_agent() { kill -KILL "$APID"; wait "$APID" 2>/dev/null; APID=; }
res='[{"name":"cpus","type":"SCALAR","scalar":{"value":1},"reservations":[{"type":"DYNAMIC","role":"r1"}]}]'
reserve() { api '{"type":"RESERVE_RESOURCES","reserve_resources":{"agent_id":{"value":"'"$1"'"},"resources":'"$res"'}}'; }

start_master; subscribe
start_agent $AP; ID=$(first_id)
echo "== $(ts) agent $ID, 1 cpu reserved for r1: $(reserve "$ID")"; sleep 1; agents
echo "== (e) $(ts) SIGKILL, work dir wiped, back at the same address 2 s later"; crash_agent; sleep 1; agents
rm -rf "$D/agent"; sleep 1; start_agent $AP; agents; ID=$(first_id)
echo "== (f) $(ts) $ID reserved ($(reserve "$ID")), SIGKILL, work dir wiped, back at a new address (port $AP2)"
sleep 1; crash_agent; rm -rf "$D/agent"; start_agent $AP2; agents
sleep 8; echo "   after the ping timeouts (2 s x 3)"; agents; ID=$(first_id)
echo "== (g) $(ts) $ID: SIGKILL, back with its work dir at the same address 4 s later"
crash_agent; sleep 1; agents; sleep 3; start_agent $AP2; agents
echo "== (h) $(ts) $ID: SIGKILL, never back"; crash_agent; sleep 1; agents; sleep 8; echo "   after the ping timeouts"; agents
rm -rf "$D/agent"; start_agent $AP; ID=$(first_id)
echo "== (i) $(ts) master restarted (same work dir: replicated log), agent $ID left running"
kill -TERM "$SPID" 2>/dev/null; kill -TERM "$MPID"; wait "$MPID" 2>/dev/null
"$M/mesos-master" --ip=127.0.0.1 --port=$MP --work_dir="$D/master" --agent_ping_timeout=2secs --max_agent_ping_timeouts=3 >>"$D/master.log" 2>&1 &
MPID=$!
for _ in $(seq 1 50); do api '{"type":"GET_HEALTH"}' 2>/dev/null | grep -q healthy && break; sleep 0.1; done
subscribe; agents; sleep 5; agents
echo "== operator events (SUBSCRIBE; type and agent id)"
python3 - "$D/events" <<'PY'
import sys, re, json
for line in open(sys.argv[1]):
    t, _, rest = line.partition(" ")
    m = re.search(r'\{.*\}', rest)
    if not m: continue
    try: e = json.loads(m.group(0))
    except Exception: continue
    typ = e.get("type")
    if typ in ("AGENT_ADDED", "AGENT_REMOVED"):
        a = e.get("agent_added", {}).get("agent", {}).get("agent_info", {}).get("id") or e.get("agent_removed", {}).get("agent_id")
        print("  ", t, typ, a.get("value") if a else "")
    elif typ not in ("HEARTBEAT", "SUBSCRIBED"):
        print("  ", t, typ)
PY
echo "== master log"; grep -hE 'Removing|removed|unreachable|disconnected|Re-registered|Registered agent|Recovered' "$D/master.log" | sed 's/^[IWE][0-9]* [0-9:.]* *[0-9]* //' | cut -c1-200
