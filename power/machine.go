package power

import "slices"

// The provider powers a machine, known by its hostname (Target), not an
// agent: what concerns the machine rather than one agent id is here.

func targetOf(r *Record) Target {
	return Target{AgentID: r.AgentID, Hostname: r.Hostname, Attributes: r.Attributes}
}

// inUseOn is another agent listed on r's hostname that is busy, and one
// that is not busy but whose power record is on (or that has none), ""
// when none. Tick's step holds tickMu.
func (m *Manager) inUseOn(r *Record) (busy, on string) {
	if r.Hostname == "" {
		return "", ""
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	var busyIDs, onIDs []string
	for id, a := range m.listed {
		if id == r.AgentID || a.Hostname != r.Hostname || !a.Listed {
			continue
		}
		switch o := m.recs[id]; {
		case a.Busy:
			busyIDs = append(busyIDs, id)
		case o == nil || o.State == StateOn:
			onIDs = append(onIDs, id)
		}
	}
	first := func(ids []string) string {
		if len(ids) == 0 {
			return ""
		}
		return slices.Min(ids)
	}
	return first(busyIDs), first(onIDs)
}
