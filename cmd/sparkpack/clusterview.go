package main

import (
	"context"
	"slices"
	"strings"
	"sync"

	"github.com/sparkpack/sparkpack/api"
	"github.com/sparkpack/sparkpack/power"
	"github.com/sparkpack/sparkpack/store"
)

// jobNames caches job names for the cluster view: a name never changes,
// and GET /api/v1/cluster would otherwise read every job holding
// resources from the database on every request (51 reads for 51 jobs).
type jobNames struct {
	mu sync.Mutex
	m  map[string]string
}

// maxCachedNames bounds the cache; it starts over when full.
const maxCachedNames = 20000

func (n *jobNames) get(ctx context.Context, st *store.Store, id string) string {
	name, _ := n.lookup(ctx, st, id)
	return name
}

// lookup is get that also says whether the name was found.
func (n *jobNames) lookup(ctx context.Context, st *store.Store, id string) (string, bool) {
	n.mu.Lock()
	name, ok := n.m[id]
	n.mu.Unlock()
	if ok {
		return name, true
	}
	j, err := st.GetJob(ctx, id)
	if err != nil {
		return "", false // not cached: read again next time
	}
	n.mu.Lock()
	if n.m == nil || len(n.m) >= maxCachedNames {
		n.m = map[string]string{}
	}
	n.m[id] = j.Name
	n.mu.Unlock()
	return j.Name, true
}

// prefetch reads the names of the jobs of ids not cached yet in one
// query: a view built when many jobs had just started read them one at
// a time (51 reads for 51 jobs, the cluster view's slowest answers).
// Those it cannot read are left to lookup.
func (n *jobNames) prefetch(ctx context.Context, st *store.Store, ids []string) {
	n.mu.Lock()
	var missing []string
	seen := map[string]bool{}
	for _, id := range ids {
		if _, ok := n.m[id]; !ok && !seen[id] {
			seen[id] = true
			missing = append(missing, id)
		}
	}
	n.mu.Unlock()
	if len(missing) == 0 {
		return
	}
	jobs, err := st.JobsByID(ctx, missing)
	if err != nil {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.m == nil || len(n.m)+len(jobs) > maxCachedNames {
		n.m = map[string]string{}
	}
	for _, j := range jobs {
		n.m[j.ID] = j.Name
	}
}

// hostOrder ranks hostnames in natural order ("agent-2" before
// "agent-10") for the cluster view, which a cluster of tens of thousands of
// agents sorts on every request: the ranks are computed once, and again
// only when a hostname they do not know shows up.
type hostOrder struct {
	mu   sync.Mutex
	rank map[string]int
}

// sorted orders the agents by hostname in natural order (stable), in
// place, and returns them.
func (h *hostOrder) sorted(agents []api.AgentView) []api.AgentView {
	h.mu.Lock()
	defer h.mu.Unlock()
	known := h.rank != nil
	for i := 0; known && i < len(agents); i++ {
		_, known = h.rank[agents[i].Hostname]
	}
	if !known {
		names := make([]string, 0, len(agents)+len(h.rank))
		seen := make(map[string]bool, len(agents)+len(h.rank))
		for _, a := range agents {
			if !seen[a.Hostname] {
				seen[a.Hostname] = true
				names = append(names, a.Hostname)
			}
		}
		if len(h.rank) < 4*len(agents) { // keep ranks of agents gone a while (bounded)
			for n := range h.rank {
				if !seen[n] {
					seen[n] = true
					names = append(names, n)
				}
			}
		}
		slices.SortFunc(names, func(a, b string) int {
			switch {
			case naturalLess(a, b):
				return -1
			case naturalLess(b, a):
				return 1
			}
			return strings.Compare(a, b)
		})
		h.rank = make(map[string]int, len(names))
		for i, n := range names {
			h.rank[n] = i
		}
	}
	idx := make([]int, len(agents))
	ranks := make([]int, len(agents))
	for i, a := range agents {
		idx[i], ranks[i] = i, h.rank[a.Hostname]
	}
	slices.SortFunc(idx, func(x, y int) int { // ties (one hostname twice) keep their order
		if ranks[x] != ranks[y] {
			return ranks[x] - ranks[y]
		}
		return x - y
	})
	// Apply the order in place, one cycle of the permutation at a time:
	// the agents are the caller's fresh slice, and a second slice of
	// every agent's view (6 MiB at 30,000 agents) would be garbage.
	for i := range idx {
		if idx[i] == i {
			continue
		}
		first := agents[i]
		j := i
		for {
			k := idx[j]
			idx[j] = j
			if k == i {
				agents[j] = first
				break
			}
			agents[j] = agents[k]
			j = k
		}
	}
	return agents
}

// viewCache keeps the cluster view's agents built for one version of the
// cluster (offers.Cluster.Version): GET /api/v1/cluster on a cluster of
// tens of thousands of agents then costs a copy and a page, not a build of
// every agent's view, between changes.
type viewCache struct {
	mu    sync.Mutex
	ver   uint64
	views []api.AgentView
}

func (c *viewCache) get(ver uint64) ([]api.AgentView, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.views, c.views != nil && c.ver == ver
}

func (c *viewCache) put(ver uint64, views []api.AgentView) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ver, c.views = ver, views
}

// agentPower is the power state the cluster view shows for an agent in
// state (idle, active, off): none for an agent gone without power
// management (lost).
func agentPower(s power.State, state string) string {
	if state == "off" && s == power.StateOn {
		return ""
	}
	return string(s)
}
