package simulate

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sparkpack/sparkpack/placement"
	"github.com/sparkpack/sparkpack/scheduler"
)

// delayObserver keeps the placement policy's measured delays.
type delayObserver struct {
	scheduler.NopObserver
	delays []time.Duration
}

func (o *delayObserver) Placed(s scheduler.PlacementStat) { o.delays = append(o.delays, s.Elapsed) }

// coreStore is the MemStore as the scheduler core's Store: the batch
// calls made of one-job calls (the simulation has no round trips to
// save) and the saved plan as the core asks for it.
type coreStore struct{ *MemStore }

var _ scheduler.Store = coreStore{}

// Plan implements scheduler.Store.
func (s coreStore) Plan(_ context.Context, id string) (placement.Plan, error) {
	p, ok := s.MemStore.Plan(id)
	if !ok {
		return p, fmt.Errorf("plan of job %s: %w", id, scheduler.ErrNotFound)
	}
	return p, nil
}

// TransitionMany implements scheduler.Store: each change on its own, as
// Transition; a change that fails does not affect the others.
func (s coreStore) TransitionMany(ctx context.Context, changes []scheduler.Change) ([]scheduler.ChangeResult, error) {
	out := make([]scheduler.ChangeResult, len(changes))
	for i, ch := range changes {
		j, err := s.Transition(ctx, ch.ID, ch.From, ch.To, ch.Reason, ch.Mutate)
		out[i] = scheduler.ChangeResult{Job: j, Err: err}
	}
	return out, nil
}

// SetWaitingMany implements scheduler.Store; jobs that no longer wait are
// left alone.
func (s coreStore) SetWaitingMany(ctx context.Context, notes []scheduler.WaitingNote) error {
	for _, n := range notes {
		if err := s.SetWaiting(ctx, n.ID, n.Reason, n.AtRisk); err != nil &&
			!errors.Is(err, scheduler.ErrNotFound) && !errors.Is(err, scheduler.ErrStale) {
			return err
		}
	}
	return nil
}
