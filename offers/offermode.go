package offers

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/master"
	"github.com/sirupsen/logrus"

	"github.com/sparkpack/sparkpack/placement"
	"github.com/sparkpack/sparkpack/scheduler"
)

// Pinner makes and releases a job's reservations. Reserver does it with
// the operator API (the default); OfferReserver from offers, for masters
// where sparkpack has no operator credentials.
type Pinner interface {
	Reserve(ctx context.Context, j scheduler.Job, plan placement.Plan) error
	Release(ctx context.Context, jobID string) error
	Orphans(ctx context.Context, keep func(jobID string) bool) ([]string, error)
	// DropStrays unreserves reservations of the job on agents its plan
	// does not name (an earlier plan's, left by a release that missed a
	// disconnected agent: offPlanStrays finds them in a GET_AGENTS view)
	// and returns the agents where they are gone. It is best effort: what
	// is left is logged, and the leak sweep tries again.
	DropStrays(ctx context.Context, jobID string, strays []Reserved) []string
	// FromOffers reports whether reservations are made from offers in the
	// job's role: offers kept in sparkpack's role for the driver would
	// then hold those very resources, so the driver's launch is announced
	// only once the reservations are made. A wrapper (metrics) passes it
	// on: the adapter asks, it never looks at the concrete type.
	FromOffers() bool
}

var (
	_ Pinner = (*Reserver)(nil)
	_ Pinner = (*OfferReserver)(nil)
)

// OfferReserver reserves from offers (MESOS_PROTOCOL.md, "without operator
// credentials"): the framework takes on the job's role with
// UPDATE_FRAMEWORK, ACCEPTs a labelled RESERVE with an operation id on each
// planned agent's offer, waits for OPERATION_FINISHED, and gives the role
// up again before the driver is launched; to release, it takes the role
// again and UNRESERVEs from the offers that carry the reservation.
//
// Without operator credentials there is no quota limit either: Spark may
// then be offered unreserved resources in the job's role beyond the
// reservations (see docs/framework.md). GET_AGENTS (a read) is still used
// to confirm and to find leaked reservations.
type OfferReserver struct {
	Framework *Framework
	Op        *Operator // reads only (GET_AGENTS)
	Journal   Journal
	Principal string
	Log       logrus.FieldLogger
	// Timeout bounds one Reserve or Release (default
	// DefaultReserveTimeout; serve's --reserve-timeout): an agent whose
	// offers never hold the planned amount is a conflict.
	Timeout time.Duration
	// reads reuse the operator-mode helpers
	once  sync.Once
	reads *Reserver
	turns roleTurns
}

// roleTurns lets one run at a time hold a job role: two would share its
// offers through one handler, and the first to end would drop the role
// under the other (the leak sweep dropping a running job's strays while
// the job's release begins).
type roleTurns struct {
	mu      sync.Mutex
	held    map[string]chan struct{} // role -> closed when given back
	waiting int                      // runs waiting for a turn
}

// take waits for the role's turn until ctx ends or stop fires; give ends
// the turn.
func (t *roleTurns) take(ctx context.Context, role string, stop <-chan time.Time) (give func(), err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for t.held[role] != nil {
		busy := t.held[role]
		t.waiting++
		t.mu.Unlock()
		select {
		case <-busy:
		case <-ctx.Done():
			err = ctx.Err()
		case <-stop:
			err = errors.New("another operation held it")
		}
		t.mu.Lock()
		t.waiting--
		if err != nil {
			return nil, err
		}
	}
	if t.held == nil {
		t.held = map[string]chan struct{}{}
	}
	done := make(chan struct{})
	t.held[role] = done
	return func() {
		t.mu.Lock()
		delete(t.held, role)
		t.mu.Unlock()
		close(done)
	}, nil
}

// FromOffers implements Pinner: reservations are made from offers.
func (r *OfferReserver) FromOffers() bool { return true }

func (r *OfferReserver) timeout() time.Duration {
	if r.Timeout <= 0 {
		return DefaultReserveTimeout
	}
	return r.Timeout
}

func (r *OfferReserver) reader() *Reserver {
	r.once.Do(func() { r.reads = &Reserver{Op: r.Op, Journal: r.Journal, Log: r.Log, fromOffers: true} })
	return r.reads
}

// roleWork is what is to be done in a job role's offers.
type roleWork struct {
	mu      sync.Mutex
	role    string
	jobID   string
	princ   string
	want    map[string][2]float64 // agent -> cpus, mem still to reserve
	release bool                  // unreserve everything labelled for the job
	only    map[string]bool       // with release: on these agents only (nil: every agent)
	pending map[string]string     // operation id -> agent
	done    map[string]bool       // agents finished
	failed  string
	seq     int
	changed chan struct{}
}

func (w *roleWork) poke() {
	select {
	case w.changed <- struct{}{}:
	default:
	}
}

// Offer implements RoleHandler.
func (w *roleWork) Offer(o mesos.Offer) []mesos.Offer_Operation {
	w.mu.Lock()
	defer w.mu.Unlock()
	agent := o.AgentID.Value
	for _, a := range w.pending {
		if a == agent {
			return nil // an operation on this agent is under way
		}
	}
	w.seq++
	opID := fmt.Sprintf("sparkpack-%s-%s-%d", map[bool]string{true: "unreserve", false: "reserve"}[w.release], agent, w.seq)
	if w.release {
		if w.only != nil && !w.only[agent] {
			return nil
		}
		var res []mesos.Resource
		for _, x := range o.Resources {
			if id, _, ok := jobLabel(x); ok && id == w.jobID {
				res = append(res, x) // as offered, with its allocation info
			}
		}
		if len(res) == 0 {
			return nil
		}
		w.pending[opID] = agent
		return []mesos.Offer_Operation{{Type: mesos.Offer_Operation_UNRESERVE, ID: &mesos.OperationID{Value: opID},
			Unreserve: &mesos.Offer_Operation_Unreserve{Resources: res}}}
	}
	need, ok := w.want[agent]
	if !ok || w.done[agent] {
		return nil
	}
	if unreserved(o.Resources, "cpus")+1e-9 < need[0] || unreserved(o.Resources, "mem")+1e-9 < need[1] {
		return nil // not enough here now; a later offer may hold more
	}
	res := ReservationResources(w.role, w.princ, w.jobID, need[0], need[1])
	for i := range res {
		role := w.role
		res[i].AllocationInfo = &mesos.Resource_AllocationInfo{Role: &role}
	}
	w.pending[opID] = agent
	return []mesos.Offer_Operation{{Type: mesos.Offer_Operation_RESERVE, ID: &mesos.OperationID{Value: opID},
		Reserve: &mesos.Offer_Operation_Reserve{Resources: res}}}
}

// OperationStatus implements RoleHandler.
func (w *roleWork) OperationStatus(st mesos.OperationStatus) {
	if st.OperationID == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	agent, ok := w.pending[st.OperationID.Value]
	if !ok {
		return
	}
	delete(w.pending, st.OperationID.Value)
	switch st.GetState() {
	case mesos.OPERATION_FINISHED:
		w.done[agent] = true
	case mesos.OPERATION_PENDING:
		w.pending[st.OperationID.Value] = agent
	default:
		if !w.release {
			w.failed = fmt.Sprintf("reserve on agent %s: %s %s", agent, st.GetState(), st.GetMessage())
		}
	}
	w.poke()
}

// run takes on the role, waits until done() or the timeout, and gives the
// role up. It waits (within the timeout) for the role's turn (roleTurns)
// and for the subscription: a role is taken on with UPDATE_FRAMEWORK,
// which needs it, and at start (after a crash) the leak sweep and the
// resumed jobs come before it.
func (r *OfferReserver) run(ctx context.Context, w *roleWork, done func() bool) error {
	deadline := time.NewTimer(r.timeout())
	defer deadline.Stop()
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	give, err := r.turns.take(ctx, w.role, deadline.C)
	if err != nil {
		return fmt.Errorf("take on role %s within %s: %w", w.role, r.timeout(), err)
	}
	defer give()
	for !r.Framework.Connected() {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-deadline.C:
			return fmt.Errorf("take on role %s: not subscribed to the Mesos master within %s", w.role, r.timeout())
		case <-tick.C:
		}
	}
	actx, cancel := context.WithTimeout(ctx, r.timeout())
	err = r.Framework.AddRole(actx, w.role, w)
	cancel()
	if err != nil {
		return fmt.Errorf("take on role %s: %w", w.role, err)
	}
	// Given up when run returns (an AddRole that failed has given it up
	// itself); left taken, w would act on the role's offers after run
	// returned, and every later subscription would take the role on.
	defer func() {
		// Even when ctx has ended, but not for ever: the role's turn is
		// given back only after this (a master that never answers held it,
		// and every later Reserve or Release of the job waited out its
		// timeout for it).
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), r.timeout())
		defer cancel()
		if err := r.Framework.RemoveRole(rctx, w.role); err != nil {
			r.Log.WithError(err).WithField("role", w.role).Warn("could not give up the job role; the next subscription will")
		}
	}()
	for {
		w.mu.Lock()
		failed := w.failed
		w.mu.Unlock()
		if failed != "" {
			return fmt.Errorf("%s: %w", failed, ErrReserveConflict)
		}
		if done() {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-deadline.C:
			return fmt.Errorf("offers in role %s did not allow the operation within %s: %w", w.role, r.timeout(), ErrReserveConflict)
		case <-w.changed:
		case <-tick.C:
		}
	}
}

// Reserve implements Pinner.
func (r *OfferReserver) Reserve(ctx context.Context, j scheduler.Job, plan placement.Plan) error {
	role := scheduler.Role(j.ID)
	cpu1, mem1 := JobAmounts(j)
	view, err := r.Op.GetAgents(ctx)
	if err != nil {
		return err
	}
	have := labelledFor(view, j.ID)
	w := &roleWork{role: role, jobID: j.ID, princ: r.Principal, want: map[string][2]float64{}, pending: map[string]string{},
		done: map[string]bool{}, changed: make(chan struct{}, 1)}
	full := map[string][2]float64{}
	for _, a := range plan.Assignments {
		if a.Executors <= 0 {
			continue
		}
		c, m := cpu1*float64(a.Executors), mem1*float64(a.Executors)
		full[a.AgentID] = [2]float64{c, m}
		if err := r.Journal.PutReservation(ctx, scheduler.Reservation{JobID: j.ID, AgentID: a.AgentID, Role: role, CPUs: c, MemMB: m, State: scheduler.ResReserving}); err != nil {
			return err
		}
		dc, dm := math.Max(c-have[a.AgentID][0], 0), math.Max(m-have[a.AgentID][1], 0)
		if dc > 1e-9 || dm > 1e-9 {
			w.want[a.AgentID] = [2]float64{dc, dm}
		}
	}
	// Reservations of the job on agents the plan does not name are an
	// earlier plan's (a release that missed a disconnected agent).
	r.DropStrays(ctx, j.ID, offPlanStrays(view, map[string]map[string][2]float64{j.ID: full}, true))
	if len(w.want) > 0 {
		agents := make([]string, 0, len(w.want))
		for a := range w.want {
			agents = append(agents, a)
		}
		defer r.Framework.Yield(ctx, agents)()
		err := r.run(ctx, w, func() bool {
			w.mu.Lock()
			defer w.mu.Unlock()
			return len(w.done) == len(w.want)
		})
		if err != nil {
			if rerr := r.Release(context.WithoutCancel(ctx), j.ID); rerr != nil {
				return fmt.Errorf("%w (and rolling back failed: %v)", err, rerr)
			}
			return err
		}
	}
	for agent, amt := range full {
		if err := r.Journal.PutReservation(ctx, scheduler.Reservation{JobID: j.ID, AgentID: agent, Role: role, CPUs: amt[0], MemMB: amt[1], State: scheduler.ResReserved}); err != nil {
			return err
		}
	}
	r.Log.WithFields(logrus.Fields{"job": j.ID, "agents": len(full), "mode": "offers"}).Info("reservations made from offers")
	return nil
}

// Release implements Pinner: it unreserves, from the job role's offers,
// whatever GET_AGENTS shows labelled for the job on agents that are
// offered. What a disconnected or deactivated agent keeps is released by
// the leak sweep once it is back, as in operator mode.
func (r *OfferReserver) Release(ctx context.Context, jobID string) error {
	left, _, err := r.unreserve(ctx, jobID, nil)
	if err != nil {
		return fmt.Errorf("release job %s from offers (%d agents left; Spark's executors may still hold them): %w", jobID, len(left), err)
	}
	if err := markReleased(ctx, r.Journal, jobID); err != nil {
		return err
	}
	r.Log.WithFields(logrus.Fields{"job": jobID, "mode": "offers"}).Info("reservations released")
	return nil
}

// DropStrays implements Pinner from offers: Release's unreserving, on the
// strays' agents only. One in use is not tried: it is never offered, and
// waiting for it would hold the caller (a job's Reserve, the sweep) for
// the whole timeout.
func (r *OfferReserver) DropStrays(ctx context.Context, jobID string, strays []Reserved) []string {
	only := map[string]bool{}
	var tried []Reserved
	for _, res := range strays {
		if res.InUse {
			strayGone(ctx, r.Journal, r.Log, res, errStrayInUse)
			continue
		}
		only[res.AgentID] = true
		tried = append(tried, res)
		journalStray(ctx, r.Journal, res, scheduler.ResUnreserving)
	}
	if len(tried) == 0 {
		return nil
	}
	left, held, err := r.unreserve(ctx, jobID, only)
	var done []string
	for _, res := range tried {
		_, offered := left[res.AgentID]
		_, kept := held[res.AgentID]
		e := err
		switch {
		case held == nil: // GET_AGENTS never answered
		case kept && !offered:
			e = errors.New("its agent is not offered now (disconnected or deactivated)")
		case !kept:
			e = nil
		}
		if strayGone(ctx, r.Journal, r.Log, res, e) {
			done = append(done, res.AgentID)
		}
	}
	return done
}

// unreserve takes on the job's role and UNRESERVEs, from its offers, what
// is labelled for the job on the agents in only (every agent when nil)
// until GET_AGENTS shows none of it left there on agents that are offered
// (unreservable). From the last view it returns, by agent, what is left
// there on agents that are offered, and what is held there at all (nil
// when GET_AGENTS never answered).
func (r *OfferReserver) unreserve(ctx context.Context, jobID string, only map[string]bool) (left, held map[string][2]float64, err error) {
	look := func() error {
		view, err := r.Op.GetAgents(ctx)
		if err != nil {
			return err
		}
		named := func(a master.Response_GetAgents_Agent) bool { return only == nil || only[a.AgentInfo.ID.Value] }
		held = labelledWhere(view, jobID, named)
		left = labelledWhere(view, jobID, func(a master.Response_GetAgents_Agent) bool { return named(a) && unreservable(a, true) })
		return nil
	}
	if err := look(); err != nil || len(left) == 0 {
		return left, held, err
	}
	w := &roleWork{role: scheduler.Role(jobID), jobID: jobID, release: true, only: only, pending: map[string]string{}, done: map[string]bool{}, changed: make(chan struct{}, 1)}
	var last time.Time
	err = r.run(ctx, w, func() bool {
		if time.Since(last) < 200*time.Millisecond {
			return false
		}
		last = time.Now()
		return look() == nil && len(left) == 0
	})
	return left, held, err
}

// Orphans implements Pinner (GET_AGENTS, a read).
func (r *OfferReserver) Orphans(ctx context.Context, keep func(jobID string) bool) ([]string, error) {
	return r.reader().Orphans(ctx, keep)
}
