#!/usr/bin/env bash
# mesos-agent-ids.sh — checks on the real Mesos build (scripts/mesos-bin.sh)
# which agent id an agent gets back, and what happens to its dynamic
# reservation, when it restarts (a) with the same work dir, (b) after a
# faked host reboot (meta/boot_id changed), (c) with its work dir wiped at
# the same address and (d) wiped at a new address; and how the master
# answers calls naming the old id. Facts recorded in docs/power.md ("An
# agent that comes back with a new agent id"). Usage:
#   scripts/mesos-agent-ids.sh [master-port] (default 45150; it also uses the next two)
set -uo pipefail
M=$(dirname "$0")/mesos-bin.sh
M=$("$M") || { echo "no Mesos build (scripts/mesos-bin.sh)" >&2; exit 1; }
MP=${1:-45150}; AP=$((MP + 1)); AP2=$((MP + 2))
D=$(mktemp -d /tmp/mesos-agent-ids.XXXXXX)
MPID=; APID=
cleanup() { [ -n "$APID" ] && kill -TERM "$APID" 2>/dev/null; [ -n "$MPID" ] && kill -TERM "$MPID" 2>/dev/null; sleep 1; }
trap cleanup EXIT
api() { curl -s -X POST -H 'Content-Type: application/json' -H 'Accept: application/json' "http://127.0.0.1:$MP/api/v1" -d "$1" -w ' [HTTP %{http_code}]\n'; }
agents() {
  api '{"type":"GET_AGENTS"}' | python3 -c '
import sys, json
t = sys.stdin.read(); j = json.loads(t[:t.rfind(" [HTTP")])
for a in j["get_agents"].get("agents", []):
    res = [(r["name"], r["scalar"]["value"], [x.get("role") for x in r["reservations"]]) for r in a.get("total_resources", []) if r.get("reservations")]
    print("  ", a["agent_info"]["id"]["value"], a["agent_info"]["hostname"], "port", a["agent_info"].get("port"), "active", a["active"],
          "reregistered", "reregistered_time" in a, "reserved", res)'
}
first_id() { api '{"type":"GET_AGENTS"}' | grep -o '"id":{"value":"[^"]*-S[0-9]*"' | head -1 | sed 's/.*"value":"//;s/"//'; }
start_agent() { # port
  "$M/mesos-agent" --master=127.0.0.1:$MP --ip=127.0.0.1 --port="$1" --work_dir="$D/agent" --hostname=agent-x \
    --resources='cpus:4;mem:4096' --launcher=posix --isolation=posix/cpu,posix/mem --launcher_dir="$M" \
    --no-systemd_enable_support >>"$D/agent.log" 2>&1 &
  APID=$!; sleep 4
}
stop_agent() { kill -TERM "$APID"; wait "$APID" 2>/dev/null; APID=; sleep 1; }
res='[{"name":"cpus","type":"SCALAR","scalar":{"value":1},"reservations":[{"type":"DYNAMIC","role":"r1"}]}]'
reserve() { api '{"type":"RESERVE_RESOURCES","reserve_resources":{"agent_id":{"value":"'"$1"'"},"resources":'"$res"'}}'; }
unreserve() { api '{"type":"UNRESERVE_RESOURCES","unreserve_resources":{"agent_id":{"value":"'"$1"'"},"resources":'"$res"'}}'; }

"$M/mesos-master" --ip=127.0.0.1 --port=$MP --work_dir="$D/master" --agent_ping_timeout=2secs --max_agent_ping_timeouts=3 >"$D/master.log" 2>&1 &
MPID=$!; sleep 3
start_agent $AP; ID1=$(first_id)
echo "== a new agent, 1 cpu reserved for r1 on $ID1: $(reserve "$ID1")"; sleep 1; agents
echo "== (a) restarted, same work dir"; stop_agent; start_agent $AP; agents
echo "== (b) faked host reboot (meta/boot_id changed), same work dir"; stop_agent
echo -n "00000000-1111-2222-3333-444444444444" >"$D/agent/meta/boot_id"; start_agent $AP; agents
grep -h 'Agent host rebooted' "$D/agent.log" | tail -1
echo "== (c) work dir wiped, same address"; stop_agent; rm -rf "$D/agent"; start_agent $AP; agents; ID2=$(first_id)
echo "   UNRESERVE on the old id $ID1: $(unreserve "$ID1")"
echo "   DEACTIVATE_AGENT on it: $(api '{"type":"DEACTIVATE_AGENT","deactivate_agent":{"agent_id":{"value":"'"$ID1"'"}}}')"
echo "   REACTIVATE_AGENT on it: $(api '{"type":"REACTIVATE_AGENT","reactivate_agent":{"agent_id":{"value":"'"$ID1"'"}}}')"
echo "== (d) reserved on $ID2 ($(reserve "$ID2")), work dir wiped, new address (port $AP2)"
sleep 1; stop_agent; rm -rf "$D/agent"; start_agent $AP2; agents
echo "   UNRESERVE on the old id while it is listed: $(unreserve "$ID2")"
sleep 10; echo "== after the ping timeouts (2 s x 3)"; agents
echo "   UNRESERVE on the old id, unreachable: $(unreserve "$ID2")"
echo "== master log"; grep -hE 'Removing old disconnected|a new agent registered at the same address|unreachable: health' "$D/master.log" | sed 's/^[IWE][0-9]* [0-9:.]* *[0-9]* //'
