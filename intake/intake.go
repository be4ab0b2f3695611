package intake

import (
	"context"
	"fmt"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/sparkpack/sparkpack/internal/retry"
	"github.com/sparkpack/sparkpack/scheduler"
)

// Core is the leader's scheduler core as the intake sees it
// (*scheduler.Core implements it).
type Core interface {
	// JobSubmitted hands a waiting job to the core; a job it knows is
	// ignored.
	JobSubmitted(j scheduler.Job)
	// JobCancelled tells the core that a job was cancelled or its kill
	// requested.
	JobCancelled(j scheduler.Job, killRequested bool)
	// Unknown returns those of ids the core has not heard of.
	Unknown(ids []string) []string
}

// Store is what the intake reads (package store implements it).
type Store interface {
	// JobsByID reads the jobs that exist among ids.
	JobsByID(ctx context.Context, ids []string) ([]scheduler.Job, error)
	// Unfinished reads every job not in a terminal state.
	Unfinished(ctx context.Context) ([]scheduler.Job, error)
	// WaitingAfter returns the ids of the waiting jobs stored after seq
	// after (the order of insertion), and the largest seq among them
	// (after when none).
	WaitingAfter(ctx context.Context, after int64) (ids []string, maxSeq int64, err error)
}

// Intake hands the stored jobs to one term's core.
type Intake struct {
	core  Core
	store Store
	log   logrus.FieldLogger
	found func(n int)
}

// New returns the intake of a leader's term. found, if not nil, is told
// how many lost jobs each rescan found (for metrics).
func New(core Core, store Store, log logrus.FieldLogger, found func(n int)) *Intake {
	if log == nil {
		log = logrus.StandardLogger()
	}
	return &Intake{core: core, store: store, log: log, found: found}
}

// Submitted reads the jobs that the database announced and hands the
// waiting ones to the core; it returns how many were still waiting. A
// failed read is tried again until it succeeds or ctx (the term) ends:
// dropping the ids would leave their jobs waiting unheard of. When ctx
// ends first it returns 0 (the next term reads every waiting job).
func (in *Intake) Submitted(ctx context.Context, ids []string) int {
	var jobs []scheduler.Job
	err := retry.UntilDone(ctx, in.log, fmt.Sprintf("reading %d notified jobs", len(ids)), func() (err error) {
		jobs, err = in.store.JobsByID(ctx, ids)
		return err
	})
	if err != nil {
		return 0
	}
	n := 0
	for _, j := range jobs {
		if j.State.Waiting() {
			in.core.JobSubmitted(j)
			n++
		}
	}
	return n
}

// Cancelled passes the database's notice of a cancel or kill request on
// to the core.
func (in *Intake) Cancelled(id string, kill bool) {
	in.core.JobCancelled(scheduler.Job{Spec: scheduler.Spec{ID: id}}, kill)
}

// Resync hands every waiting job and every pending kill to the core, when
// notifications may have been missed. A failed read is tried again until
// it succeeds or ctx ends.
func (in *Intake) Resync(ctx context.Context) {
	var jobs []scheduler.Job
	err := retry.UntilDone(ctx, in.log, "resync of waiting jobs", func() (err error) {
		jobs, err = in.store.Unfinished(ctx)
		return err
	})
	if err != nil {
		return
	}
	for _, j := range jobs {
		switch {
		case j.State.Waiting():
			in.core.JobSubmitted(j)
		case j.KillRequested:
			in.core.JobCancelled(j, true)
		}
	}
}

// RescanLost is the safety net under the notifications: every period it
// runs a rescan (see rescan.step) until ctx ends. Jobs whose transaction
// stayed open longer than a period before committing may be missed here;
// the resync at a reconnection or a new term reads every waiting job.
func (in *Intake) RescanLost(ctx context.Context, period time.Duration) {
	t := time.NewTicker(period)
	defer t.Stop()
	var r rescan
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		r.step(ctx, in)
	}
}

// rescan is what one rescan leaves to the next.
type rescan struct {
	from, prevMax int64 // seq: the next read covers the jobs stored after from
	suspects      []string
}

// step hands to the core the suspects of the previous rescan that it
// still has not heard of (their notification was lost, not merely late),
// then reads the ids of the waiting jobs stored since about two rescans
// ago and keeps those the core does not know as the next suspects.
func (r *rescan) step(ctx context.Context, in *Intake) {
	if lost := in.core.Unknown(r.suspects); len(lost) > 0 {
		if n := in.Submitted(ctx, lost); n > 0 {
			if in.found != nil {
				in.found(n)
			}
			in.log.WithField("jobs", n).Warn("found stored jobs whose notification was lost; queued them now")
		}
	}
	ids, maxSeq, err := in.store.WaitingAfter(ctx, r.from)
	if err != nil {
		in.log.WithError(err).Warn("cannot read the jobs stored lately; trying at the next rescan")
		return
	}
	r.suspects = in.core.Unknown(ids)
	r.from, r.prevMax = max(r.from, r.prevMax), maxSeq
}

// Route is how a job that this instance stored reaches the leader's core.
type Route int

const (
	// ToCore: this instance leads and its lease is still valid after the
	// commit (no other term began before it): hand the job to the core
	// in-process; a later term's recovery reads it anyway.
	ToCore Route = iota
	// Announced: a follower; its group commit announced the job.
	Announced
	// Announce: leadership ended, or is in doubt, while the job was being
	// stored (perhaps by a quiet group commit that announced nothing):
	// announce it so that whoever leads hears of it. A duplicate notice
	// is harmless.
	Announce
)

// AnnounceAfterLeading is how long after its term an instance still
// announces the jobs it stores itself: longer than a group commit can take.
const AnnounceAfterLeading = time.Minute

// RouteOf decides the route of a job this instance just stored: leading
// tells whether it runs a term's core, valid whether its lease is still
// valid, sinceLed how long ago its last term ended (when not leading).
func RouteOf(leading, valid bool, sinceLed time.Duration) Route {
	switch {
	case leading && valid:
		return ToCore
	case !leading && sinceLed > AnnounceAfterLeading:
		return Announced
	}
	return Announce
}

func (r Route) String() string {
	switch r {
	case ToCore:
		return "to-core"
	case Announced:
		return "announced"
	case Announce:
		return "announce"
	}
	return fmt.Sprintf("Route(%d)", int(r))
}
