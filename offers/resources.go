package offers

import (
	"sort"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
)

// LabelKey marks every reservation sparkpack makes; its value is the job id.
const LabelKey = "sparkpack-job"

// ReservationResources returns cpus and mem resources dynamically reserved
// for role with the sparkpack-job=<jobID> label, in the
// RESERVATION_REFINEMENT format the operator API uses.
func ReservationResources(role, principal, jobID string, cpus, memMB float64) []mesos.Resource {
	mk := func(name string, v float64) mesos.Resource {
		ri := mesos.Resource_ReservationInfo{
			Type:   mesos.Resource_ReservationInfo_DYNAMIC.Enum(),
			Role:   &role,
			Labels: &mesos.Labels{Labels: []mesos.Label{{Key: LabelKey, Value: &jobID}}},
		}
		if principal != "" {
			p := principal
			ri.Principal = &p
		}
		return mesos.Resource{
			Name:         name,
			Type:         mesos.SCALAR.Enum(),
			Scalar:       &mesos.Value_Scalar{Value: v},
			Reservations: []mesos.Resource_ReservationInfo{ri},
		}
	}
	var out []mesos.Resource
	if cpus > 0 {
		out = append(out, mk("cpus", cpus))
	}
	if memMB > 0 {
		out = append(out, mk("mem", memMB))
	}
	return out
}

// Reserved is what one label's reservation holds on one agent.
type Reserved struct {
	AgentID string
	Role    string
	JobID   string
	CPUs    float64
	MemMB   float64
	// Resources are the reserved resources exactly as Mesos reports them,
	// ready to be passed back to UNRESERVE.
	Resources []mesos.Resource
	// InUse: tasks use some of it (offPlanStrays sets it from the agent's
	// allocated resources), so it cannot be unreserved until they end.
	InUse bool
}

// jobLabel returns the sparkpack-job label of the resource's innermost
// reservation, and its role.
func jobLabel(r mesos.Resource) (jobID, role string, ok bool) {
	if len(r.Reservations) == 0 {
		return "", "", false
	}
	ri := r.Reservations[len(r.Reservations)-1]
	if ri.Labels == nil {
		return "", "", false
	}
	for _, l := range ri.Labels.Labels {
		if l.Key == LabelKey && l.Value != nil {
			return *l.Value, ri.GetRole(), true
		}
	}
	return "", "", false
}

// LabelledReservations groups an agent's resources by sparkpack job label.
func LabelledReservations(agentID string, total []mesos.Resource) []Reserved {
	by := map[string]*Reserved{}
	for _, r := range total {
		id, role, ok := jobLabel(r)
		if !ok || r.Scalar == nil {
			continue
		}
		key := id + "\x00" + role
		res := by[key]
		if res == nil {
			res = &Reserved{AgentID: agentID, Role: role, JobID: id}
			by[key] = res
		}
		switch r.Name {
		case "cpus":
			res.CPUs += r.Scalar.Value
		case "mem":
			res.MemMB += r.Scalar.Value
		}
		res.Resources = append(res.Resources, r)
	}
	out := make([]Reserved, 0, len(by))
	for _, r := range by {
		out = append(out, *r)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].JobID != out[j].JobID {
			return out[i].JobID < out[j].JobID
		}
		return out[i].Role < out[j].Role
	})
	return out
}

// scalar sums the named scalar resource.
func scalar(res []mesos.Resource, name string) float64 {
	v := 0.0
	for _, r := range res {
		if r.Name == name && r.Scalar != nil {
			v += r.Scalar.Value
		}
	}
	return v
}

// unreserved returns the sum of the named scalar not reserved for anyone.
func unreserved(res []mesos.Resource, name string) float64 {
	v := 0.0
	for _, r := range res {
		if r.Name == name && r.Scalar != nil && len(r.Reservations) == 0 && (r.Role == nil || *r.Role == "*") {
			v += r.Scalar.Value
		}
	}
	return v
}
