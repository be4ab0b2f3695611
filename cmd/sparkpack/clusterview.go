package main

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/sparkpack/sparkpack/api"
	"github.com/sparkpack/sparkpack/offers"
	"github.com/sparkpack/sparkpack/placement"
	"github.com/sparkpack/sparkpack/power"
	"github.com/sparkpack/sparkpack/scheduler"
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
	if errors.Is(err, scheduler.ErrNotFound) {
		j.Name, err = "", nil // a job pruned since: no name, and none to read again
	}
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

// resolve returns the names of the jobs of ids, as far as they can be
// read (prefetch, then lookup for those it left): the I/O of a cluster
// view's build, done before the build itself. An id missing from the
// answer is a name that could not be read.
func (n *jobNames) resolve(ctx context.Context, st *store.Store, ids []string) map[string]string {
	n.prefetch(ctx, st, ids)
	out := make(map[string]string, len(ids))
	tried := map[string]bool{}
	for _, id := range ids {
		if tried[id] {
			continue
		}
		tried[id] = true
		if name, ok := n.lookup(ctx, st, id); ok {
			out[id] = name
		}
	}
	return out
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

// clusterSnap is the cluster view built once per change of the cluster,
// off the request path (live.views): GET /api/v1/cluster pages it as it
// is, and the dashboard's sampler reads its counts. It is shared and never
// modified once published.
type clusterSnap struct {
	// agents is every agent's view in the view's order, without power
	// states (they change without the cluster: read per request).
	agents []api.AgentView
	// active counts the agents holding sparkpack's work.
	active int
	// sig sums up what the dashboard's cluster panel shows of every agent:
	// when it moves, the dashboard is told to read the view again.
	sig uint64
	// powerSeq is cameOnAfter's count when the build began.
	powerSeq uint64
}

// holderIDs is the ids of the jobs holding resources or running a driver
// on the agents, for their names.
func holderIDs(agents []offers.AgentState) []string {
	var ids []string
	for _, a := range agents {
		for _, h := range a.Holdings {
			ids = append(ids, h.JobID)
		}
		for _, d := range a.Drivers {
			ids = append(ids, d.JobID)
		}
	}
	return ids
}

// withUnlistedOff adds to the agents the adapter knows those power
// management keeps off (off, powering off or booting) that are not among
// them, as gone (shown "off"): Mesos stops listing an agent that is off a
// minute or so after it went, and a restarted sparkpack's adapter never
// saw it, so the cluster view of a restarted serve showed "0 agents" for
// a cluster of 14 powered off (the scheduler knew them and powered them
// on as jobs needed them). Records of an id replaced by a new one are
// skipped: that machine is listed under its new id.
func withUnlistedOff(agents []offers.AgentState, recs []power.Record) []offers.AgentState {
	var extra []offers.AgentState
	var listed map[string]bool // made at the first record that needs it: a set, not a scan per record (30,000 x 30,000)
	for _, r := range recs {
		if r.ReplacedBy != "" || (r.State != power.StateOff && r.State != power.StatePoweringOff && r.State != power.StateBooting) {
			continue
		}
		if listed == nil {
			listed = make(map[string]bool, len(agents))
			for _, a := range agents {
				listed[a.ID] = true
			}
		}
		if listed[r.AgentID] {
			continue
		}
		a := offers.Agent{ID: r.AgentID, Hostname: r.Hostname, Attributes: r.Attributes, CPUs: r.CPUs, MemMB: r.MemMB,
			PricePerHour: r.PricePerHour, Location: placement.LocationCloud}
		if r.Attributes["location"] == string(placement.LocationLocal) {
			a.Location = placement.LocationLocal
		}
		extra = append(extra, offers.AgentState{Agent: a, Gone: true})
	}
	if len(extra) == 0 {
		return agents // shared, unmodified
	}
	return append(slices.Clip(agents), extra...)
}

// buildClusterSnap builds the cluster view of the agents: a pure function
// of them and of the job names read before (name; ok false for a name not
// read, which makes complete false). hosts orders the views (it keeps
// only the ranks of the hostnames it has seen).
func buildClusterSnap(agents []offers.AgentState, name func(id string) (string, bool), hosts *hostOrder) (snap clusterSnap, complete bool) {
	complete = true
	jobName := func(id string) string {
		n, ok := name(id)
		complete = complete && ok
		return n
	}
	views := make([]api.AgentView, 0, len(agents))
	sig := newSigHash()
	for i := range agents {
		a := &agents[i]
		v := api.AgentView{
			ID: a.ID, Hostname: a.Hostname, Attributes: a.Attributes,
			CPUs: a.CPUs, MemMB: a.MemMB, FreeCPUs: a.FreeCPUs, FreeMemMB: a.FreeMemMB,
			PricePerHour: a.PricePerHour, InstanceType: a.Attributes["instance_type"],
			Location: string(a.Location), State: "idle", Reservations: []api.AgentReservationView{}, Drivers: []api.AgentDriverView{},
		}
		if a.HasOurWork() {
			v.State = "active"
			snap.active++
		}
		if a.Gone {
			v.State = "off"
		}
		sig.str(a.ID)
		sig.float(a.FreeCPUs)
		sig.float(a.FreeMemMB)
		for _, h := range a.Holdings {
			v.Reservations = append(v.Reservations, api.AgentReservationView{JobID: h.JobID, JobName: jobName(h.JobID), Executors: h.Executors, CPUs: h.CPUs, MemMB: h.MemMB})
			sig.str(h.JobID)
			sig.float(float64(h.Executors))
		}
		for _, d := range a.Drivers {
			v.Drivers = append(v.Drivers, api.AgentDriverView{JobID: d.JobID, JobName: jobName(d.JobID), CPUs: d.CPUs, MemMB: d.MemMB})
			sig.str("driver:")
			sig.str(d.JobID)
		}
		sig.str(";")
		views = append(views, v)
	}
	snap.agents, snap.sig = hosts.sorted(views), uint64(sig)
	return snap, complete
}

// sigHash is FNV-1a (64 bits) over the view's strings and numbers, fed
// without allocating (hash/fnv takes a []byte: a conversion per string).
type sigHash uint64

func newSigHash() sigHash { return 14695981039346656037 }

func (h *sigHash) str(s string) {
	for i := 0; i < len(s); i++ {
		*h = (*h ^ sigHash(s[i])) * 1099511628211
	}
}

func (h *sigHash) float(f float64) {
	u := math.Float64bits(f)
	for i := 0; i < 8; i++ {
		*h = (*h ^ sigHash(byte(u>>(8*i)))) * 1099511628211
	}
}

// clusterViewGap is the least time between two builds of the cluster view:
// the cluster changes many times a second while jobs start and end, and a
// build at 30,000 agents allocates about 12 MiB (its agents' states and
// views). A view is at most this (plus a build) older than the cluster,
// the dashboard's refresh a quarter of a second late at most; the builds
// take at most a fifth of a core.
func clusterViewGap(took time.Duration) time.Duration {
	return max(250*time.Millisecond, 4*took)
}

// agentPower is the power state the cluster view shows for an agent in
// state (idle, active, off): none for an agent gone without power
// management (lost), that is shown off while power management has it on.
// But an agent power management turned on after the view was built
// (cameOnAfterView: it registered again after a boot, the view is up to
// clusterViewGap older) is on: its power state stays shown from booting
// to on while the view catches up.
func agentPower(s power.State, state string, cameOnAfterView bool) string {
	if state == "off" && s == power.StateOn && !cameOnAfterView {
		return ""
	}
	return string(s)
}

// cameOnAfter tells which agents power management turned on after a
// given cluster view was built: it counts power state changes, and keeps
// the count at each agent's last change to on. A view notes the count
// before it reads the agents (its powerSeq); an agent turned on at a
// higher count may be shown gone by that view only because the view is
// older. Entries no view in use can need are dropped as views are
// published (published).
type cameOnAfter struct {
	mu  sync.Mutex
	seq uint64
	on  map[string]uint64
	// prev is the count of the newest view published (see published).
	prev uint64
}

// published notes that the view built at count seq is published. A request
// reads the newest view, or the one before while a new one is published:
// an entry at or before the count of the view before this one is at or
// before either view's, so since is false for it whether it is kept or
// not, and it is dropped. So the map holds the agents turned on over the
// last two views, not every agent id ever turned on (a machine that comes
// back under a new agent id adds an id per power cycle).
func (c *cameOnAfter) published(seq uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for id, at := range c.on {
		if at <= c.prev {
			delete(c.on, id)
		}
	}
	c.prev = max(c.prev, seq)
}

// changed counts a power state change (power management's OnChange).
func (c *cameOnAfter) changed(r power.Record) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seq++
	if r.State == power.StateOn {
		if c.on == nil {
			c.on = map[string]uint64{}
		}
		c.on[r.AgentID] = c.seq
	}
}

// now is the count of changes so far.
func (c *cameOnAfter) now() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.seq
}

// since reports whether the agent's last change to on came after count seq.
func (c *cameOnAfter) since(id string, seq uint64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.on[id] > seq
}
