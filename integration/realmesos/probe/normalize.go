package probe

import (
	"regexp"
	"sort"
	"strings"
)

// normalizer rewrites what the master sends into a form that does not
// depend on the run: ids become named placeholders, times, uuids, pids
// and ports are blanked, everything else is kept as sent.
type normalizer struct {
	masterID   string
	agents     map[string]string // agent id -> hostname
	frameworks map[string]string // framework id -> probe's name for it
}

// volatile keys: their values differ from run to run.
var volatile = map[string]string{
	"uuid": "<uuid>", "timestamp": "<time>", "nanoseconds": "<ns>", "executor_pid": "<pid>",
	"container_id": "<container>", "pid": "<pid>", "port": "<port>", "ip": "<ip>",
	"start_time": "<time>", "elected_time": "<time>", "status_update_uuid": "<uuid>",
	"unreachable_time": "<time>", "build_date": "<time>", "build_time": "<time>", "build_user": "<user>",
	"heartbeat_interval_seconds": "<seconds>", "id": "",
}

var offerID = regexp.MustCompile(`<master>-O[0-9]+`)

func (n *normalizer) str(s string) string {
	for id, host := range n.agents {
		if id != "" && strings.Contains(s, id) {
			s = strings.ReplaceAll(s, id, "<agent:"+host+">")
		}
	}
	for id, name := range n.frameworks {
		if id != "" && strings.Contains(s, id) {
			s = strings.ReplaceAll(s, id, "<framework:"+name+">")
		}
	}
	if n.masterID != "" {
		s = strings.ReplaceAll(s, n.masterID, "<master>")
	}
	return offerID.ReplaceAllString(s, "<offer>")
}

// value normalises any decoded JSON value.
func (n *normalizer) value(v any) any {
	switch x := v.(type) {
	case obj:
		out := obj{}
		for k, val := range x {
			if ph, ok := volatile[k]; ok && ph != "" {
				out[k] = ph
				continue
			}
			if k == "id" {
				// MasterInfo.id is the master's id; elsewhere "id" is an
				// object ({"value": ...}) normalised as usual.
				if s, ok := val.(string); ok {
					out[k] = n.str(s)
					continue
				}
			}
			out[k] = n.value(val)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i := range x {
			out[i] = n.value(x[i])
		}
		return out
	case string:
		return n.str(x)
	}
	return v
}

// sortByHost orders offers (or agents) by hostname.
func sortByHost(list []any, host func(any) string) {
	sort.SliceStable(list, func(i, j int) bool { return host(list[i]) < host(list[j]) })
}
