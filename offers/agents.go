package offers

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/master"

	"github.com/sparkpack/sparkpack/placement"
)

// PriceTable maps an agent's instance_type attribute to its price in
// dollars per hour, for agents that carry no price attribute.
type PriceTable map[string]float64

// ParsePriceTable reads "type=price,type=price" (e.g. "m5.xlarge=0.192").
func ParsePriceTable(s string) (PriceTable, error) {
	t := PriceTable{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		k, v, ok := strings.Cut(part, "=")
		p, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if !ok || k == "" || err != nil || p < 0 || math.IsNaN(p) || math.IsInf(p, 0) {
			return nil, fmt.Errorf("price table entry %q: want instance_type=dollars_per_hour", part)
		}
		t[strings.TrimSpace(k)] = p
	}
	return t, nil
}

// Agent is one Mesos agent as sparkpack sees it.
type Agent struct {
	ID         string
	Hostname   string
	Attributes map[string]string
	CPUs       float64 // total
	MemMB      float64
	// FreeCPUs and FreeMemMB are unreserved and not used by any task:
	// what a new reservation may take.
	FreeCPUs     float64
	FreeMemMB    float64
	PricePerHour float64
	Location     placement.Location
	// Reservations made by sparkpack on this agent, by job.
	Reservations []Reserved
	// Drivers are the Spark drivers sparkpack launched here that have not
	// ended (Cluster fills them in; GET_AGENTS does not say whose task is
	// whose). They run on unreserved resources in sparkpack's role.
	Drivers []DriverTask
	// allocByRole sums, by allocation role, the unreserved resources
	// GET_AGENTS shows allocated to tasks: [cpus, mem].
	allocByRole map[string][2]float64
}

// DriverTask is one of sparkpack's Spark drivers on an agent.
type DriverTask struct {
	JobID  string
	TaskID string
	CPUs   float64
	MemMB  float64
}

// HasOurWork reports whether the agent holds anything of sparkpack's: a
// reservation or a driver. Such an agent is active: it costs money, must
// not be powered off, and placing more on it costs nothing extra.
func (a Agent) HasOurWork() bool { return len(a.Reservations) > 0 || len(a.Drivers) > 0 }

// attributes flattens Mesos attributes to strings.
func attributes(attrs []mesos.Attribute) map[string]string {
	m := make(map[string]string, len(attrs))
	for _, a := range attrs {
		switch {
		case a.Text != nil:
			m[a.Name] = a.Text.Value
		case a.Scalar != nil:
			m[a.Name] = strconv.FormatFloat(a.Scalar.Value, 'f', -1, 64)
		case a.Ranges != nil:
			var parts []string
			for _, r := range a.Ranges.Range {
				parts = append(parts, fmt.Sprintf("%d-%d", r.Begin, r.End))
			}
			m[a.Name] = "[" + strings.Join(parts, ",") + "]"
		case a.Set != nil:
			m[a.Name] = "{" + strings.Join(a.Set.Item, ",") + "}"
		}
	}
	return m
}

// AgentsFromMesos converts a GET_AGENTS answer. An agent's price comes from
// its price attribute, else from prices by instance_type, else 0 (and a
// warning is returned naming it). Deactivated or draining agents are left out.
func AgentsFromMesos(in []master.Response_GetAgents_Agent, prices PriceTable) ([]Agent, []string) {
	var out []Agent
	var warnings []string
	for _, a := range in {
		if !a.Active || a.GetDeactivated() {
			continue
		}
		ag, warn := convertAgent(a, prices)
		if warn != "" {
			warnings = append(warnings, warn)
		}
		out = append(out, ag)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, warnings
}

func convertAgent(a master.Response_GetAgents_Agent, prices PriceTable) (Agent, string) {
	info := a.AgentInfo
	id := ""
	if info.ID != nil {
		id = info.ID.Value
	}
	attrs := attributes(info.Attributes)
	ag := Agent{
		ID:         id,
		Hostname:   info.Hostname,
		Attributes: attrs,
		CPUs:       scalar(a.TotalResources, "cpus"),
		MemMB:      scalar(a.TotalResources, "mem"),
		Location:   placement.LocationCloud,
	}
	if ag.CPUs == 0 && ag.MemMB == 0 {
		ag.CPUs, ag.MemMB = scalar(info.Resources, "cpus"), scalar(info.Resources, "mem")
	}
	if attrs["location"] == string(placement.LocationLocal) {
		ag.Location = placement.LocationLocal
	}
	warn := ""
	if p, err := strconv.ParseFloat(attrs["price"], 64); err == nil && p >= 0 {
		ag.PricePerHour = p
	} else if p, ok := prices[attrs["instance_type"]]; ok {
		ag.PricePerHour = p
	} else {
		warn = fmt.Sprintf("agent %s (%s) has no price attribute and its instance_type %q is not in the price table; counting it as free", id, info.Hostname, attrs["instance_type"])
	}
	// Unreserved capacity not allocated to tasks. Offered resources are
	// not in use: the master rescinds offers to make room for a reserve.
	ag.FreeCPUs = math.Max(0, unreserved(a.TotalResources, "cpus")-unreserved(a.AllocatedResources, "cpus"))
	ag.FreeMemMB = math.Max(0, unreserved(a.TotalResources, "mem")-unreserved(a.AllocatedResources, "mem"))
	ag.Reservations = LabelledReservations(id, a.TotalResources)
	for _, r := range a.AllocatedResources {
		if r.Scalar == nil || len(r.Reservations) > 0 || (r.Role != nil && *r.Role != "*") || r.AllocationInfo == nil {
			continue
		}
		i := -1
		switch r.Name {
		case "cpus":
			i = 0
		case "mem":
			i = 1
		}
		if i < 0 {
			continue
		}
		if ag.allocByRole == nil {
			ag.allocByRole = map[string][2]float64{}
		}
		v := ag.allocByRole[r.AllocationInfo.GetRole()]
		v[i] += r.Scalar.Value
		ag.allocByRole[r.AllocationInfo.GetRole()] = v
	}
	return ag, warn
}

// AgentStatus is everything GET_AGENTS shows of an agent, whatever its
// state: what power management needs.
type AgentStatus struct {
	Agent
	// Active: connected and not deactivated (GET_AGENTS' active).
	Active bool
	// Deactivated and Drained come from deactivated and drain_info.
	Deactivated bool
	Drained     bool
	// Busy: any reserved resource of any role, or resources allocated to
	// tasks (of any framework).
	Busy bool
	// RegisteredAt is the master's time of the agent's last
	// (re-)registration: it moves when a powered-off agent comes back.
	RegisteredAt time.Time
	// Reregistered: GET_AGENTS shows a reregistered_time. An agent that
	// registered anew (a new agent id) has none; one back under its id
	// has, also after it was marked unreachable or after a master
	// failover, when the master sets its registered_time anew as well
	// (replaced.go).
	Reregistered bool
}

// StatusesFromMesos converts every agent of a GET_AGENTS answer.
func StatusesFromMesos(in []master.Response_GetAgents_Agent, prices PriceTable) []AgentStatus {
	out := make([]AgentStatus, 0, len(in))
	for _, a := range in {
		st, _ := statusOf(a, prices)
		out = append(out, st)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// convertedAgent is one agent of a GET_AGENTS answer converted, with the
// price warning AgentsFromMesos gives for it.
type convertedAgent struct {
	st   AgentStatus
	warn string
}

// convertReusing converts a GET_AGENTS answer as StatusesFromMesos and
// AgentsFromMesos do, in one pass: an agent whose sum (see
// decodeAgentsReusing) is in prev is not converted again. It returns what
// the next call reuses. The agents share their reservations and
// attributes with the statuses (neither is modified).
func convertReusing(in []master.Response_GetAgents_Agent, sums []uint64, prices PriceTable, prev map[uint64]convertedAgent) ([]Agent, []string, []AgentStatus, map[uint64]convertedAgent) {
	statuses := make([]AgentStatus, 0, len(in))
	warnOf := make(map[string]string)
	next := make(map[uint64]convertedAgent, len(in))
	for i, a := range in {
		ca, ok := convertedAgent{}, false
		if sums != nil {
			ca, ok = prev[sums[i]]
		}
		if !ok {
			ca.st, ca.warn = statusOf(a, prices)
		}
		if sums != nil {
			next[sums[i]] = ca
		}
		statuses = append(statuses, ca.st)
		if ca.warn != "" {
			warnOf[ca.st.ID] = ca.warn
		}
	}
	sort.Slice(statuses, func(i, j int) bool { return statuses[i].ID < statuses[j].ID })
	var agents []Agent
	var warnings []string
	for _, st := range statuses {
		if !st.Active {
			continue
		}
		agents = append(agents, st.Agent)
		if w := warnOf[st.ID]; w != "" {
			warnings = append(warnings, w)
		}
	}
	return agents, warnings, statuses, next
}

// statusOf converts one agent.
func statusOf(a master.Response_GetAgents_Agent, prices PriceTable) (AgentStatus, string) {
	ag, warn := convertAgent(a, prices)
	st := AgentStatus{Agent: ag, Active: a.Active && !a.GetDeactivated(), Deactivated: a.GetDeactivated()}
	if di := a.GetDrainInfo(); di != nil && di.State == mesos.DrainState_DRAINED {
		st.Drained = true
	}
	for _, r := range a.TotalResources {
		if len(r.Reservations) > 0 || (r.Role != nil && *r.Role != "*" && *r.Role != "") {
			st.Busy = true
		}
	}
	for _, r := range a.AllocatedResources {
		if r.Scalar != nil && r.Scalar.Value > 0 && (r.Name == "cpus" || r.Name == "mem") {
			st.Busy = true
		}
	}
	st.Reregistered = a.GetReregisteredTime() != nil
	for _, t := range []*mesos.TimeInfo{a.GetRegisteredTime(), a.GetReregisteredTime()} {
		if t != nil {
			if at := time.Unix(0, t.Nanoseconds).UTC(); at.After(st.RegisteredAt) {
				st.RegisteredAt = at
			}
		}
	}
	return st, warn
}

// Snapshot converts agents to the placement engine's view. An agent is
// active while it holds any sparkpack reservation or driver (Agent.HasOurWork):
// the cost model's "any reservation or task of ours".
func Snapshot(agents []Agent) placement.Snapshot {
	s := placement.Snapshot{Agents: make([]placement.Agent, 0, len(agents))}
	for _, a := range agents {
		s.Agents = append(s.Agents, snapshotAgent(a))
		for _, h := range holdingsOf(a) {
			if s.Holdings == nil {
				s.Holdings = map[string][]placement.Holding{}
			}
			s.Holdings[a.ID] = append(s.Holdings[a.ID], h)
		}
	}
	return s
}

func snapshotAgent(a Agent) placement.Agent {
	return placement.Agent{
		ID:                   a.ID,
		Hostname:             a.Hostname,
		Attributes:           a.Attributes,
		CPUs:                 a.CPUs,
		MemMB:                a.MemMB,
		FreeCPUs:             a.FreeCPUs,
		FreeMemMB:            a.FreeMemMB,
		PriceMicroUSDPerHour: int64(math.Round(a.PricePerHour * 1e6)),
		Location:             a.Location,
		Active:               a.HasOurWork(),
	}
}

// holdingsOf sums what each job holds on the agent: its reservations and
// its driver (in the order they are listed).
func holdingsOf(a Agent) []placement.Holding {
	if !a.HasOurWork() {
		return nil
	}
	var out []placement.Holding
	at := map[string]int{}
	add := func(job string, cpus, mem float64) {
		i, ok := at[job]
		if !ok {
			i = len(out)
			at[job] = i
			out = append(out, placement.Holding{JobID: job})
		}
		out[i].CPUs += cpus
		out[i].MemMB += mem
	}
	for _, r := range a.Reservations {
		add(r.JobID, r.CPUs, r.MemMB)
	}
	for _, d := range a.Drivers {
		add(d.JobID, d.CPUs, d.MemMB)
	}
	return out
}

// forUnreserve returns reserved resources as UNRESERVE wants them: the
// reservations array only, without the legacy role and reservation fields
// that GET_AGENTS adds for old clients.
func forUnreserve(res []mesos.Resource) []mesos.Resource {
	out := make([]mesos.Resource, 0, len(res))
	for _, r := range res {
		c := r
		c.Role = nil
		c.Reservation = nil
		c.AllocationInfo = nil
		out = append(out, c)
	}
	return out
}
