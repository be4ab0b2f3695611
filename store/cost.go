package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"time"
)

// CostTotal is the cost meter's total as last saved (0 when never saved).
func (s *Store) CostTotal(ctx context.Context) (float64, error) {
	var usd float64
	err := s.db.QueryRowContext(ctx, `SELECT total_usd FROM cost_meter WHERE id = 1`).Scan(&usd)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read the cost meter: %w", err)
	}
	return usd, nil
}

// CostSaved is the cost meter's total as last saved and when it was saved
// (the stored checkpoint; zero time when never saved).
func (s *Store) CostSaved(ctx context.Context) (float64, time.Time, error) {
	var usd float64
	var at time.Time
	err := s.db.QueryRowContext(ctx, `SELECT total_usd, updated_at FROM cost_meter WHERE id = 1`).Scan(&usd, &at)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, time.Time{}, nil
	}
	if err != nil {
		return 0, time.Time{}, fmt.Errorf("read the cost meter: %w", err)
	}
	return usd, at.UTC(), nil
}

// SaveCostTotal stores the cost meter's total. It never lowers it (a
// deposed leader's late save cannot undo the new leader's), and is a
// leader-only write (fenced).
func (s *Store) SaveCostTotal(ctx context.Context, usd float64) error {
	if math.IsNaN(usd) || math.IsInf(usd, 0) || usd < 0 {
		return fmt.Errorf("save the cost meter: %v is not an amount", usd)
	}
	err := s.exec(ctx, `INSERT INTO cost_meter (id, total_usd, updated_at) VALUES (1, $1, $2)
		ON CONFLICT (id) DO UPDATE SET total_usd = greatest(cost_meter.total_usd, EXCLUDED.total_usd),
			updated_at = CASE WHEN EXCLUDED.total_usd >= cost_meter.total_usd THEN EXCLUDED.updated_at ELSE cost_meter.updated_at END`,
		usd, s.timestamp())
	if err != nil {
		return fmt.Errorf("save the cost meter: %w", err)
	}
	return nil
}
