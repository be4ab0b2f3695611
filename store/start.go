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
		now := s.timestamp()
		// Why it waited last stays in its timeline (keepWaitingReasons).
		if err := keepWaitingReasons(ctx, tx, []string{p.ID}, []string{""}, now); err != nil {
			return err
		}
		j, ev, err := scheduler.ApplyTransition(j, scheduler.Queued, scheduler.Placing, p.PlacingReason, now, p.Mutate)
		if err != nil {
			return err
		}
		if err := appendEvent(ctx, tx, p.ID, ev.At, &ev.From, ev.To, ev.Reason); err != nil {
			return err
		}
		if err := savePlacement(ctx, tx, p.ID, p.Plan, now); err != nil {
			return err
		}
		j, ev, err = scheduler.ApplyTransition(j, scheduler.Placing, scheduler.Reserving, p.ReservingReason, now, nil)
		if err != nil {
			return err
		}
		if err := appendEvent(ctx, tx, p.ID, ev.At, &ev.From, ev.To, ev.Reason); err != nil {
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
