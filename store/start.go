package store

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/sparkpack/sparkpack/scheduler"
)

// StartPlaced implements scheduler.Store: a queued job's start in one
// transaction (one round of locks, one commit): QUEUED -> PLACING ->
// RESERVING, each move with its event, and the plan. The job is locked
// and checked as in Transition; when it is not QUEUED nothing is written
// (scheduler.ErrStale).
func (s *Store) StartPlaced(ctx context.Context, p scheduler.Placed) (scheduler.Job, error) {
	for _, mv := range [][2]scheduler.State{{scheduler.Queued, scheduler.Placing}, {scheduler.Placing, scheduler.Reserving}} {
		if err := scheduler.CheckTransition(mv[0], mv[1]); err != nil {
			return scheduler.Job{}, fmt.Errorf("job %s: %w", p.ID, err)
		}
	}
	var out scheduler.Job
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		j, err := lockJob(ctx, tx, p.ID)
		if err != nil {
			return err
		}
		if j.State != scheduler.Queued {
			return fmt.Errorf("job %s is %s, not %s: %w", p.ID, j.State, scheduler.Queued, scheduler.ErrStale)
		}
		now := s.timestamp()
		queued, placing := scheduler.Queued, scheduler.Placing
		j = applyTransition(j, p.ID, scheduler.Placing, now, p.Mutate)
		if err := appendEvent(ctx, tx, p.ID, now, &queued, scheduler.Placing, p.PlacingReason); err != nil {
			return err
		}
		if err := savePlacement(ctx, tx, p.ID, p.Plan, now); err != nil {
			return err
		}
		j = applyTransition(j, p.ID, scheduler.Reserving, now, nil)
		if err := appendEvent(ctx, tx, p.ID, now, &placing, scheduler.Reserving, p.ReservingReason); err != nil {
			return err
		}
		if err := updateJob(ctx, tx, j, now); err != nil {
			return err
		}
		out = j
		return nil
	})
	return out, err
}
