package api

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
)

// Pages of GET /api/v1/cluster. A cluster may have tens of thousands of
// agents: the view answers with a page of them (in the order Views.Cluster
// gives, hostnames in natural order), the summary of all of them, and the
// cursor of the next page.

// DefaultClusterPageLimit is the page size of GET /api/v1/cluster without
// ?limit: every agent of a cluster up to this size.
const DefaultClusterPageLimit = 1000

// MaxClusterPageLimit is the largest ?limit of GET /api/v1/cluster.
const MaxClusterPageLimit = 5000

// ClusterSummary counts every agent of the cluster (not only the page's).
type ClusterSummary struct {
	Agents int `json:"agents"`
	// ByState counts agents by state: idle, active, off.
	ByState map[string]int `json:"byState"`
	// ByPower counts agents by power management state (when it is on).
	ByPower   map[string]int `json:"byPower,omitempty"`
	CPUs      float64        `json:"cpus"`
	FreeCPUs  float64        `json:"freeCpus"`
	MemMB     float64        `json:"memMB"`
	FreeMemMB float64        `json:"freeMemMB"`
	// PricePerHour sums the hourly price of the agents that are not off.
	PricePerHour float64 `json:"pricePerHour"`
}

// ClusterQuery selects a page of GET /api/v1/cluster.
type ClusterQuery struct {
	Limit  int    // 1..MaxClusterPageLimit; 0 means DefaultClusterPageLimit
	Cursor string // the Next of the previous page (an agent id); "" for the first
	State  string // only agents in this state (idle, active, off); "" for all
}

func parseClusterQuery(q url.Values) (ClusterQuery, string, error) {
	var o ClusterQuery
	for k := range q {
		if k != "limit" && k != "cursor" && k != "state" {
			return o, k, fmt.Errorf("unknown query parameter %q (use limit, cursor, state)", k)
		}
	}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > MaxClusterPageLimit {
			return o, "limit", fmt.Errorf("limit must be a whole number from 1 to %d, got %q", MaxClusterPageLimit, truncateQuery(v))
		}
		o.Limit = n
	}
	switch s := q.Get("state"); s {
	case "", "idle", "active", "off":
		o.State = s
	default:
		return o, "state", fmt.Errorf("state must be idle, active or off, got %q", truncateQuery(s))
	}
	o.Cursor = q.Get("cursor")
	return o, "", nil
}

// errBadClusterCursor: the cursor names no agent of the list.
var errBadClusterCursor = fmt.Errorf("unknown cursor; use the 'next' value of a previous page")

// clusterPage summarises the whole view and cuts out the page q asks for.
// A cursor is the id of the last agent of the previous page. v.Agents is
// only read: the page is a copy of its own agents (at most q's limit), so
// a request costs that copy, not one of the whole cluster.
func clusterPage(v ClusterView, q ClusterQuery) (ClusterView, error) {
	sum := ClusterSummary{Agents: len(v.Agents), ByState: map[string]int{"idle": 0, "active": 0, "off": 0}}
	powerOf := func(a *AgentView) string {
		if v.PowerOf != nil {
			return v.PowerOf(a.ID, a.State)
		}
		return a.Power
	}
	// sel holds the selected agents' indices when q filters by state.
	var sel []int32
	for i := range v.Agents {
		a := &v.Agents[i]
		sum.ByState[a.State]++
		if p := powerOf(a); p != "" {
			if sum.ByPower == nil {
				sum.ByPower = map[string]int{}
			}
			sum.ByPower[p]++
		}
		sum.CPUs += a.CPUs
		sum.MemMB += a.MemMB
		sum.FreeCPUs += a.FreeCPUs
		sum.FreeMemMB += a.FreeMemMB
		if a.State != "off" {
			sum.PricePerHour += a.PricePerHour
		}
		if q.State != "" && a.State == q.State {
			sel = append(sel, int32(i))
		}
	}
	n := len(v.Agents)
	at := func(k int) *AgentView { return &v.Agents[k] }
	if q.State != "" {
		n = len(sel)
		at = func(k int) *AgentView { return &v.Agents[sel[k]] }
	}
	start := 0
	if q.Cursor != "" {
		start = -1
		for k := 0; k < n; k++ {
			if at(k).ID == q.Cursor {
				start = k + 1
				break
			}
		}
		if start < 0 && q.State != "" {
			// The cursor's agent changed state since the page before (a
			// power-off between two pages): the page goes on after its
			// place in the whole list.
			for i := range v.Agents {
				if v.Agents[i].ID == q.Cursor {
					start, _ = slices.BinarySearch(sel, int32(i+1))
					break
				}
			}
		}
		if start < 0 {
			return ClusterView{}, errBadClusterCursor
		}
	}
	limit := q.Limit
	if limit <= 0 {
		limit = DefaultClusterPageLimit
	}
	end := min(start+limit, n)
	out := ClusterView{Agents: make([]AgentView, 0, end-start), Summary: &sum, Total: n}
	for k := start; k < end; k++ {
		a := *at(k)
		a.Power = powerOf(&a)
		if v.PowerDetail != nil && a.Power != "" {
			if since, lastErr := v.PowerDetail(a.ID); !since.IsZero() {
				a.PowerSince, a.PowerError = &since, lastErr
			}
		}
		out.Agents = append(out.Agents, a)
	}
	if end < n && end > start {
		out.Next = at(end - 1).ID
	}
	return out, nil
}
