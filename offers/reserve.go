package offers

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/mesos/mesos-go/api/v1/lib/master"
	"github.com/sirupsen/logrus"

	"github.com/sparkpack/sparkpack/placement"
	"github.com/sparkpack/sparkpack/scheduler"
)

// Journal keeps reservation records durably, so that a restart knows what
// was asked of Mesos. The store package implements it.
type Journal interface {
	PutReservation(ctx context.Context, r scheduler.Reservation) error
	Reservations(ctx context.Context, jobID string, states ...scheduler.ReservationState) ([]scheduler.Reservation, error)
}

// Reserver pins a job's executors with operator-API reservations and
// releases them, following MESOS_PROTOCOL.md's strict pinning recipe:
// quota limit first, then labelled reservations, confirmed by GET_AGENTS.
type Reserver struct {
	Op        *Operator
	Journal   Journal
	Principal string
	Log       logrus.FieldLogger
	// ConfirmTimeout bounds the wait for GET_AGENTS to show a change
	// (default DefaultReserveTimeout; serve's --reserve-timeout).
	ConfirmTimeout time.Duration
	// Poll is the GET_AGENTS polling interval while confirming (default 200 ms).
	Poll time.Duration
	// TeardownGrace is how long Release lets Mesos refuse an unreserve
	// (409: tasks still use the resources; Spark normally stops its
	// executors itself) before it tears down the job role's frameworks
	// that are not connected (DriverlessFrameworks), and then how long
	// between two such looks (default 15 s, at most half ConfirmTimeout
	// so that one Release gets there).
	TeardownGrace time.Duration
	// fromOffers: the reads of an OfferReserver, which can unreserve only
	// on agents that are offered (unreservable).
	fromOffers bool
}

// DefaultReserveTimeout bounds one reservation or release, in either mode,
// unless set (Reserver.ConfirmTimeout, OfferReserver.Timeout).
const DefaultReserveTimeout = 30 * time.Second

// ErrReserveConflict means an agent no longer had the free resources the
// plan counted on (Mesos answered 409): the caller re-plans.
var ErrReserveConflict = errors.New("not enough unallocated resources on an agent for the plan")

// JobAmounts is what one executor of the job needs from an agent.
func JobAmounts(j scheduler.Job) (cpus, memMB float64) {
	return float64(j.ExecutorCores), float64(j.ExecutorTotalMemMB())
}

// FromOffers implements Pinner: the operator API reserves without offers.
func (r *Reserver) FromOffers() bool { return false }

func (r *Reserver) teardownGrace() time.Duration {
	c, _ := r.timeouts()
	g := r.TeardownGrace
	if g <= 0 {
		g = 15 * time.Second
	}
	return min(g, c/2)
}

func (r *Reserver) timeouts() (time.Duration, time.Duration) {
	c, p := r.ConfirmTimeout, r.Poll
	if c <= 0 {
		c = DefaultReserveTimeout
	}
	if p <= 0 {
		p = 200 * time.Millisecond
	}
	return c, p
}

// Reserve makes the plan's reservations for the job. It is idempotent: it
// reserves on each agent only what GET_AGENTS does not show already for the
// job's label (reservations with one label add up in Mesos). On a 409 it
// returns ErrReserveConflict after releasing what it reserved.
func (r *Reserver) Reserve(ctx context.Context, j scheduler.Job, plan placement.Plan) error {
	role := scheduler.Role(j.ID)
	cpu1, mem1 := JobAmounts(j)
	want := map[string][2]float64{}
	host := map[string]string{} // agents are named by hostname to people
	var totalCPU, totalMem float64
	for _, a := range plan.Assignments {
		if a.Executors <= 0 {
			continue
		}
		host[a.AgentID] = a.AgentID
		if a.Hostname != "" {
			host[a.AgentID] = a.Hostname
		}
		c, m := cpu1*float64(a.Executors), mem1*float64(a.Executors)
		want[a.AgentID] = [2]float64{c, m}
		totalCPU += c
		totalMem += m
		if err := r.Journal.PutReservation(ctx, scheduler.Reservation{JobID: j.ID, AgentID: a.AgentID, Role: role, CPUs: c, MemMB: m, State: scheduler.ResReserving}); err != nil {
			return err
		}
	}
	// The quota limit must be in place before the reservations, so the
	// role never sees unreserved resources beyond the plan.
	if err := r.Op.SetQuotaLimit(ctx, role, totalCPU, totalMem, true); err != nil {
		return err
	}
	view, err := r.Op.GetAgents(ctx)
	if err != nil {
		return err
	}
	have := labelledFor(view, j.ID)
	// Reservations of the job on agents the plan does not name are an
	// earlier plan's (a release that missed a disconnected agent): the
	// job's follower runs one plan at a time, so they are strays.
	dropped := r.DropStrays(ctx, j.ID, offPlanStrays(view, map[string]map[string][2]float64{j.ID: want}, false))
	for agent, amt := range want {
		dc := amt[0] - have[agent][0]
		dm := amt[1] - have[agent][1]
		if dc <= 1e-9 && dm <= 1e-9 {
			continue
		}
		res := ReservationResources(role, r.Principal, j.ID, math.Max(dc, 0), math.Max(dm, 0))
		if err := r.Op.Reserve(ctx, agent, res); err != nil {
			if IsConflict(err) {
				// Agents are named by hostname to people, in Mesos' words
				// too. Not a warning: the agent's free resources changed
				// since the plan (a race the caller handles by placing the
				// job again, recorded in its timeline); nothing to do.
				r.Log.WithFields(logrus.Fields{"job": j.ID, "agent": host[agent], "error": strings.ReplaceAll(err.Error(), agent, host[agent])}).Info("reservation refused (the agent's free resources changed since the plan); rolling back, the job is placed again")
				if rerr := r.Release(ctx, j.ID); rerr != nil {
					return fmt.Errorf("%w (and rolling back failed: %v)", ErrReserveConflict, rerr)
				}
				return fmt.Errorf("agent %s: %w", host[agent], ErrReserveConflict)
			}
			return err
		}
	}
	if err := r.waitFor(ctx, j.ID, func(have map[string][2]float64) bool {
		for agent, amt := range want {
			if have[agent][0]+1e-9 < amt[0] || have[agent][1]+1e-9 < amt[1] {
				return false
			}
		}
		for _, agent := range dropped {
			if _, ok := have[agent]; ok {
				return false
			}
		}
		return true
	}); err != nil {
		return fmt.Errorf("confirm reservations of job %s: %w", j.ID, err)
	}
	for agent, amt := range want {
		if err := r.Journal.PutReservation(ctx, scheduler.Reservation{JobID: j.ID, AgentID: agent, Role: role, CPUs: amt[0], MemMB: amt[1], State: scheduler.ResReserved}); err != nil {
			return err
		}
	}
	r.Log.WithFields(logrus.Fields{"job": j.ID, "agents": len(want), "cpus": totalCPU, "mem_mb": totalMem}).Info("reservations confirmed")
	return nil
}

// DropStrays implements Pinner with the operator API: it unreserves
// each stray reservation of the job and returns the agents where Mesos
// took the unreserve (202, or the agent is no longer registered). One in
// use is not tried (Mesos refuses it).
func (r *Reserver) DropStrays(ctx context.Context, jobID string, strays []Reserved) []string {
	var done []string
	for _, res := range strays {
		if res.InUse {
			strayGone(ctx, r.Journal, r.Log, res, errStrayInUse)
			continue
		}
		journalStray(ctx, r.Journal, res, scheduler.ResUnreserving)
		err := r.Op.Unreserve(ctx, res.AgentID, forUnreserve(res.Resources))
		if IsAgentUnknown(err) {
			err = nil // removed since the view was read: its reservations went with it
		}
		if strayGone(ctx, r.Journal, r.Log, res, err) {
			done = append(done, res.AgentID)
		}
	}
	return done
}

// journalStray records a stray reservation of a job in state st.
func journalStray(ctx context.Context, j Journal, res Reserved, st scheduler.ReservationState) {
	_ = j.PutReservation(ctx, scheduler.Reservation{JobID: res.JobID, AgentID: res.AgentID, Role: res.Role, CPUs: res.CPUs, MemMB: res.MemMB, State: st})
}

// errStrayInUse: a stray reservation that tasks use (Reserved.InUse) is
// not tried; Mesos would refuse it (409), and from offers it is never
// offered, so the drop would wait out its whole timeout.
var errStrayInUse = errors.New("tasks use it")

// strayGone logs the outcome err of unreserving a stray reservation of a
// job (DropStrays, in either mode) and journals it released when it is
// gone (err nil). A failure is only logged: the plan does not need those
// resources, and the leak sweep (or the job's release at its end) tries
// again.
func strayGone(ctx context.Context, j Journal, log logrus.FieldLogger, res Reserved, err error) bool {
	l := log.WithFields(logrus.Fields{"job": res.JobID, "agent": res.AgentID, "cpus": res.CPUs, "mem_mb": res.MemMB})
	switch {
	case IsConflict(err) || errors.Is(err, errStrayInUse):
		// Tasks of an earlier run still use it (executors that survived
		// with their agent).
		l.Info("a reservation of an earlier plan of the job is still used by tasks; the next leak sweep tries again")
		return false
	case err != nil:
		l.WithError(err).Warn("unreserving a reservation of an earlier plan of the job failed; the next leak sweep tries again (check the Mesos master if this repeats)")
		return false
	}
	journalStray(ctx, j, res, scheduler.ResReleased)
	l.Info("unreserved a reservation of an earlier plan of the job (its plan does not name the agent: a release missed it while the agent was disconnected)")
	return true
}

// labelledFor sums, per agent, what the view shows reserved with the job's label.
func labelledFor(agents []master.Response_GetAgents_Agent, jobID string) map[string][2]float64 {
	return labelledWhere(agents, jobID, nil)
}

// labelledWhere is labelledFor on the agents keep takes (all when nil).
func labelledWhere(agents []master.Response_GetAgents_Agent, jobID string, keep func(master.Response_GetAgents_Agent) bool) map[string][2]float64 {
	out := map[string][2]float64{}
	for _, a := range agents {
		if a.AgentInfo.ID == nil || keep != nil && !keep(a) {
			continue
		}
		for _, res := range LabelledReservations(a.AgentInfo.ID.Value, a.TotalResources) {
			if res.JobID == jobID {
				cur := out[res.AgentID]
				out[res.AgentID] = [2]float64{cur[0] + res.CPUs, cur[1] + res.MemMB}
			}
		}
	}
	return out
}

// waitFor polls GET_AGENTS until done holds. Each poll asks for a view
// newer than the last one seen, so jobs confirming at the same time share
// the calls (Operator.AgentsSince).
func (r *Reserver) waitFor(ctx context.Context, jobID string, done func(map[string][2]float64) bool) error {
	timeout, poll := r.timeouts()
	deadline := time.Now().Add(timeout)
	since := time.Now()
	for {
		agents, seen, err := r.Op.AgentsSince(ctx, since)
		if err == nil && done(labelledFor(agents, jobID)) {
			return nil
		}
		if err == nil {
			since = seen.Add(time.Nanosecond)
		}
		if time.Now().After(deadline) {
			if err != nil {
				return err
			}
			return fmt.Errorf("GET_AGENTS did not show the change within %s", timeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(poll):
		}
	}
}

// releaseLookback is how old a view Release's first look may use.
const releaseLookback = time.Second

// Release unreserves everything Mesos shows reserved with the job's label
// (exactly what was reserved, as GET_AGENTS reports it), retrying while
// tasks still use it (409), confirms it is gone, then clears the role's
// quota. It is idempotent. Refused for TeardownGrace, it tears down the
// frameworks of the job's role whose driver is gone (tearDownDriverless):
// their executors would hold the reservations for ever.
func (r *Reserver) Release(ctx context.Context, jobID string) error {
	role := scheduler.Role(jobID)
	timeout, poll := r.timeouts()
	grace := r.teardownGrace()
	deadline := time.Now().Add(timeout)
	var refusedSince, lookedAt time.Time // the first 409 of this call; the last teardown look
	// The first look may be a view up to releaseLookback old, shared with
	// other callers (jobs often end together); only a view sent after the
	// release began can show that nothing is left.
	began := time.Now()
	since := began.Add(-releaseLookback)
	for {
		agents, seen, err := r.Op.AgentsSince(ctx, since)
		if err != nil {
			return err
		}
		since = seen.Add(time.Nanosecond) // the next look needs a newer view
		if since.Before(began) {
			since = began
		}
		pending, refused := 0, 0
		for _, a := range agents {
			if a.AgentInfo.ID == nil || !reachable(a) {
				// A disconnected agent (powered off, lost) cannot be
				// unreserved now; what it keeps comes back with it and
				// the leak sweep releases it then.
				continue
			}
			for _, res := range LabelledReservations(a.AgentInfo.ID.Value, a.TotalResources) {
				if res.JobID != jobID {
					continue
				}
				pending++
				_ = r.Journal.PutReservation(ctx, scheduler.Reservation{JobID: jobID, AgentID: res.AgentID, Role: res.Role, CPUs: res.CPUs, MemMB: res.MemMB, State: scheduler.ResUnreserving})
				if err := r.Op.Unreserve(ctx, res.AgentID, forUnreserve(res.Resources)); IsAgentUnknown(err) {
					// Removed since the view was read (a machine back under
					// a new agent id, an agent gone for good): nothing left
					// to unreserve there; the next view no longer lists it.
					r.Log.WithFields(logrus.Fields{"job": jobID, "agent": res.AgentID}).Info("the agent is no longer registered with the Mesos master; its reservations went with it")
				} else if err != nil && !IsConflict(err) {
					return err
				} else if err != nil {
					refused++
					r.Log.WithFields(logrus.Fields{"job": jobID, "agent": res.AgentID}).Debug("unreserve refused while tasks use the resources; retrying")
				}
			}
		}
		if refused > 0 {
			now := time.Now()
			if refusedSince.IsZero() {
				refusedSince = now
			}
			if now.Sub(refusedSince) >= grace && now.Sub(lookedAt) >= grace {
				lookedAt = now
				r.tearDownDriverless(ctx, jobID, role)
			}
		}
		if pending == 0 && !seen.Before(began) {
			break
		}
		if pending == 0 {
			continue // an older view showed nothing: look at a fresh one at once
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("release job %s: reservations still present after %s (tasks still running on them?)", jobID, timeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(poll):
		}
	}
	if err := markReleased(ctx, r.Journal, jobID); err != nil {
		return err
	}
	if err := r.Op.ClearQuota(ctx, role); err != nil {
		return err
	}
	r.Log.WithField("job", jobID).Info("reservations released")
	return nil
}

// tearDownDriverless tears down the frameworks of the job's role that
// are not connected (DriverlessFrameworks decides). A failure is logged:
// Release looks again after TeardownGrace.
func (r *Reserver) tearDownDriverless(ctx context.Context, jobID, role string) {
	gf, err := r.Op.GetFrameworks(ctx)
	if err != nil {
		r.Log.WithError(err).WithField("job", jobID).Warn("cannot list the frameworks holding the job's reservations; will look again")
		return
	}
	for _, f := range DriverlessFrameworks(gf, role) {
		log := r.Log.WithFields(logrus.Fields{"job": jobID, "framework": f.ID, "name": f.Name, "active": f.Active, "recovered": f.Recovered})
		if err := r.Op.Teardown(ctx, f.ID); err != nil {
			log.WithError(err).Warn("tearing down a driverless framework of the job failed; will try again")
			continue
		}
		log.Warn("tore down the job's framework: its driver is gone (not connected) and its executors held the job's reservations")
	}
}

// Orphans lists the job ids that hold sparkpack-labelled reservations in
// Mesos but for which keep returns false (ended or unknown jobs).
func (r *Reserver) Orphans(ctx context.Context, keep func(jobID string) bool) ([]string, error) {
	agents, err := r.Op.GetAgents(ctx)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var out []string
	for _, a := range agents {
		if a.AgentInfo.ID == nil || !unreservable(a, r.fromOffers) {
			continue // released when the agent is back (see Release)
		}
		for _, res := range LabelledReservations(a.AgentInfo.ID.Value, a.TotalResources) {
			if !seen[res.JobID] && !keep(res.JobID) {
				out = append(out, res.JobID)
			}
			seen[res.JobID] = true
		}
	}
	return out, nil
}

// markReleased records every reservation of the job as released.
func markReleased(ctx context.Context, j Journal, jobID string) error {
	recs, err := j.Reservations(ctx, jobID)
	if err != nil {
		return err
	}
	for _, rec := range recs {
		if rec.State != scheduler.ResReleased {
			rec.State = scheduler.ResReleased
			if err := j.PutReservation(ctx, rec); err != nil {
				return err
			}
		}
	}
	return nil
}

// reachable: a's reservations can be released now. GET_AGENTS lists an
// agent inactive both when it is disconnected and when it is deactivated
// (DEACTIVATE_AGENT: power management, an operator's drain). A real
// 1.12 master unreserves on a connected deactivated agent; on a
// disconnected one it answers 202 but the agent re-registers with what it
// checkpointed. A connected deactivated agent cannot be told apart from a
// disconnected one that was deactivated first, so both are tried: a
// release lost that way comes back with the agent, and the leak sweep
// releases it then.
func reachable(a master.Response_GetAgents_Agent) bool {
	return a.Active || a.GetDeactivated()
}

// unreservable: a's reservations can be unreserved now, with the operator
// API (reachable) or from offers (fromOffers): only an active agent
// (connected, not deactivated) is offered. What an agent that cannot be
// unreserved now holds is looked at again once it is back.
func unreservable(a master.Response_GetAgents_Agent, fromOffers bool) bool {
	if fromOffers {
		return a.Active
	}
	return reachable(a)
}
