package teams

import "fmt"

// Usage is what a team's jobs hold (or a job asks for): cpus and memory
// in MiB.
type Usage struct {
	CPUs  float64
	MemMB float64
}

// Add returns u + v.
func (u Usage) Add(v Usage) Usage { return Usage{u.CPUs + v.CPUs, u.MemMB + v.MemMB} }

// DominantShare is the team's weighted dominant share of a cluster of
// total: the larger of its shares of cpus and of memory, divided by its
// weight (dominant-resource fairness). Zero on an empty cluster.
func (t *Team) DominantShare(u, total Usage) float64 {
	s := 0.0
	if total.CPUs > 0 {
		s = u.CPUs / total.CPUs
	}
	if total.MemMB > 0 {
		s = max(s, u.MemMB/total.MemMB)
	}
	w := t.Weight
	if w <= 0 {
		w = 1
	}
	return s / w
}

// GuaranteeFill is how much of its guarantee the team uses: the larger of
// its cpus and memory against the guaranteed amounts (resources without a
// guarantee are left out); below 1 the team is below its guarantee.
// Teams without a guarantee are never below it (+Inf is not used: 1).
func (t *Team) GuaranteeFill(u Usage) float64 {
	if !t.HasGuarantee() {
		return 1
	}
	f := 0.0
	if t.GuaranteedCPUs > 0 {
		f = u.CPUs / t.GuaranteedCPUs
	}
	if t.GuaranteedMemMB > 0 {
		f = max(f, u.MemMB/t.GuaranteedMemMB)
	}
	return f
}

// BelowGuarantee reports whether the team uses less than its guarantee.
func (t *Team) BelowGuarantee(u Usage) bool { return t.GuaranteeFill(u) < 1 }

// WithinGuarantee reports whether the team, holding u, still holds no
// more than its guarantee with job added (false without a guarantee).
func (t *Team) WithinGuarantee(u, job Usage) bool {
	if !t.HasGuarantee() {
		return false
	}
	n := u.Add(job)
	return (t.GuaranteedCPUs <= 0 || n.CPUs <= t.GuaranteedCPUs+1e-9) &&
		(t.GuaranteedMemMB <= 0 || n.MemMB <= t.GuaranteedMemMB+1e-9)
}

// Room is what is left of the team's guarantee while it holds u (zero
// when it is at or above it; zero on a resource without a guarantee).
func (t *Team) Room(u Usage) Usage {
	return Usage{max(t.GuaranteedCPUs-u.CPUs, 0), max(t.GuaranteedMemMB-u.MemMB, 0)}
}

// OverMax says which maximum a job asking for job would take the team,
// holding u, past: "cpu", "memory" or "" (within its maximum).
func (t *Team) OverMax(u, job Usage) string {
	n := u.Add(job)
	switch {
	case t.MaxCPUs > 0 && n.CPUs > t.MaxCPUs+1e-9:
		return "cpu"
	case t.MaxMemMB > 0 && n.MemMB > t.MaxMemMB+1e-9:
		return "memory"
	}
	return ""
}

// LimitReason is a waiting job's reason when its team is at its maximum
// of resource ("cpu" or "memory"): "team analytics at its cpu limit".
func LimitReason(team, resource string) string {
	return fmt.Sprintf("team %s at its %s limit", Label(team), resource)
}

// Label is how messages name a team ("" is the default team).
func Label(team string) string {
	if team == "" {
		return "(default)"
	}
	return team
}
