package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/sparkpack/sparkpack/power"
)

// PowerRecords implements power.Store: every agent's power record.
func (s *Store) PowerRecords(ctx context.Context) ([]power.Record, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT agent_id, hostname, attributes, cpus, mem_mb, price, state, since,
		requested, failures, last_error, avoid_until, registered_at, replaced_by FROM agent_power ORDER BY agent_id`)
	if err != nil {
		return nil, fmt.Errorf("read agent power records: %w", err)
	}
	defer rows.Close()
	var out []power.Record
	for rows.Next() {
		var r power.Record
		var attrs []byte
		var state string
		var avoid, reg sql.NullTime
		if err := rows.Scan(&r.AgentID, &r.Hostname, &attrs, &r.CPUs, &r.MemMB, &r.PricePerHour, &state, &r.Since,
			&r.Requested, &r.Failures, &r.LastError, &avoid, &reg, &r.ReplacedBy); err != nil {
			return nil, fmt.Errorf("read agent power records: %w", err)
		}
		if err := json.Unmarshal(attrs, &r.Attributes); err != nil {
			return nil, fmt.Errorf("agent %s: stored attributes: %w", r.AgentID, err)
		}
		r.State, r.Since = power.State(state), r.Since.UTC()
		if avoid.Valid {
			r.AvoidUntil = avoid.Time.UTC()
		}
		if reg.Valid {
			r.RegisteredAt = reg.Time.UTC()
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// PutPowerRecord implements power.Store: it writes an agent's record.
func (s *Store) PutPowerRecord(ctx context.Context, r power.Record) error {
	attrs, err := json.Marshal(nonNil(r.Attributes))
	if err != nil {
		return err
	}
	var avoid, reg any
	if !r.AvoidUntil.IsZero() {
		avoid = r.AvoidUntil
	}
	if !r.RegisteredAt.IsZero() {
		reg = r.RegisteredAt
	}
	err = s.exec(ctx, `INSERT INTO agent_power (agent_id, hostname, attributes, cpus, mem_mb, price, state, since,
			requested, failures, last_error, avoid_until, registered_at, updated_at, replaced_by)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)
		ON CONFLICT (agent_id) DO UPDATE SET hostname = $2, attributes = $3, cpus = $4, mem_mb = $5, price = $6, state = $7,
			since = $8, requested = $9, failures = $10, last_error = $11, avoid_until = $12, registered_at = $13, updated_at = $14,
			replaced_by = $15`,
		r.AgentID, r.Hostname, attrs, r.CPUs, r.MemMB, r.PricePerHour, string(r.State), r.Since, r.Requested, r.Failures,
		r.LastError, avoid, reg, s.timestamp(), r.ReplacedBy)
	if err != nil {
		return fmt.Errorf("record agent %s as %s: %w", r.AgentID, r.State, err)
	}
	return nil
}

// DeletePowerRecord implements power.RecordDeleter: it forgets an agent
// id whose machine came back under a new agent id, once nothing can refer
// to it any more.
func (s *Store) DeletePowerRecord(ctx context.Context, agentID string) error {
	if err := s.exec(ctx, `DELETE FROM agent_power WHERE agent_id = $1`, agentID); err != nil {
		return fmt.Errorf("forget agent %s's power record: %w", agentID, err)
	}
	return nil
}

var (
	_ power.Store         = (*Store)(nil)
	_ power.RecordDeleter = (*Store)(nil)
)
