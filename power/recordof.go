package power

// RecordOf is a copy of one agent's record (ok false when power management
// has none): since when it is in its state and its last error, for the
// cluster view, without copying every record.
func (m *Manager) RecordOf(agentID string) (Record, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if r := m.recs[agentID]; r != nil {
		return *r, true
	}
	return Record{}, false
}
