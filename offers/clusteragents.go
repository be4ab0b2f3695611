package offers

import (
	"context"
	"math"
	"slices"
	"sort"
	"time"

	"github.com/mesos/mesos-go/api/v1/lib/master"
	"github.com/sirupsen/logrus"

	"github.com/sparkpack/sparkpack/internal/failurelog"
	"github.com/sparkpack/sparkpack/offers/lifecycle"
	"github.com/sparkpack/sparkpack/placement"
	"github.com/sparkpack/sparkpack/scheduler"
)

// ---- agents ---------------------------------------------------------------

func (c *Cluster) kick() {
	select {
	case c.kickCh <- struct{}{}:
	default:
	}
}

// refresh reads GET_AGENTS, notices lost agents and tells the core when
// free capacity or the set of agents changed.
func (c *Cluster) refresh(ctx context.Context) error {
	f, err := c.cfg.Operator.agentsSince(ctx, time.Now())
	if err != nil {
		if ctx.Err() == nil {
			c.mu.Lock()
			c.readErr = err
			c.mu.Unlock()
		}
		return err
	}
	// Only the agents that changed since the last refresh are converted.
	c.convMu.Lock()
	agents, warnings, statuses, next := convertReusing(f.agents, f.sums, c.cfg.Prices, c.converted)
	c.converted = next
	c.convMu.Unlock()
	for _, w := range warnings {
		c.log.Debug(w)
	}
	c.mu.Lock()
	c.statuses = statuses
	c.recovered = f.recovered
	c.readAt, c.readErr = f.start, nil
	c.changedLocked()
	changed := !c.loaded || !sameCapacity(c.agents, agents)
	present := map[string]bool{}
	for _, a := range agents {
		present[a.ID] = true
		delete(c.missing, a.ID)
	}
	recovered := make(map[string]bool, len(f.recovered))
	for _, id := range f.recovered {
		recovered[id] = true
	}
	for _, a := range c.agents {
		if !present[a.ID] {
			if recovered[a.ID] {
				c.heldRecovered[a.ID] = true
				continue
			}
			c.missing[a.ID]++
		}
	}
	for id := range c.heldRecovered {
		switch {
		case present[id]:
			delete(c.heldRecovered, id)
		case !recovered[id]:
			// Neither re-registered nor recovered any more: gone now.
			delete(c.heldRecovered, id)
			c.missing[id]++
		}
	}
	c.agents, c.loaded = agents, true
	c.index = nil
	c.indexLocked()
	if c.gone == nil {
		c.gone = map[string]Agent{}
	}
	if c.firstAt == nil {
		c.firstAt, c.lastAt = map[string]uint64{}, map[string]uint64{}
	}
	c.refreshes++
	// hosts: by hostname, the latest refresh that first listed an agent
	// there that is listed now.
	hosts := make(map[string]uint64, len(agents))
	newest := make(map[string]string, len(agents)) // by hostname, the agent hosts counts
	onHost := make(map[string]int, len(agents))
	for _, a := range agents {
		delete(c.gone, a.ID)
		c.seen[a.ID] = a
		if c.firstAt[a.ID] == 0 {
			c.firstAt[a.ID] = c.refreshes
		}
		c.lastAt[a.ID] = c.refreshes
		if c.firstAt[a.ID] >= hosts[a.Hostname] {
			hosts[a.Hostname], newest[a.Hostname] = c.firstAt[a.ID], a.ID
		}
		onHost[a.Hostname]++
	}
	replaced := replacedInListing(statuses)
	for id, rp := range replaced {
		// The "new" agent was listed active beside the old one: another
		// agent on a shared hostname, not its machine back (the old one
		// may only be restarting under its id).
		if c.lastAt[id] != 0 && c.firstAt[rp.by] != 0 && c.firstAt[rp.by] <= c.lastAt[id] {
			delete(replaced, id)
		}
	}
	for id, a := range c.seen {
		if present[id] {
			continue
		}
		if a.Hostname != "" && hosts[a.Hostname] > c.lastAt[id] {
			// Its machine is back under a new agent id (an agent whose
			// work dir was wiped registers as a new agent; Mesos removed
			// the old one and its reservations): not a second, lost agent,
			// also once the machine is off again (forgotten). An agent on
			// the hostname that was listed before this one went is not
			// that: two agents share the hostname, and this one is gone.
			// With one agent on the hostname, a plan that names this one
			// is placed again (replaced.go).
			if onHost[a.Hostname] == 1 {
				if replaced == nil {
					replaced = map[string]replacement{}
				}
				replaced[id] = replacement{by: newest[a.Hostname], host: a.Hostname}
			}
			delete(c.gone, id)
			delete(c.seen, id)
			delete(c.firstAt, id)
			delete(c.lastAt, id)
			continue
		}
		if recovered[id] {
			continue // re-registering after a master failover, not gone
		}
		c.gone[id] = a
	}
	now := time.Now()
	c.noteReplacedLocked(replaced, present, now)
	for _, lj := range c.jobs {
		st := lj.st
		if st.Phase != lifecycle.Running && st.Phase != lifecycle.Launching || st.Lost != "" {
			continue
		}
		agents := make([]string, 0, len(st.Plan.Assignments)+1)
		for _, as := range st.Plan.Assignments {
			agents = append(agents, as.AgentID)
		}
		if st.Driver.AgentID != "" && !st.Driver.Ended {
			agents = append(agents, st.Driver.AgentID)
		}
		for _, id := range agents {
			if !present[id] && c.missing[id] > 0 && !slices.Contains(lj.st.LostExecutors, id) && lj.st.Lost == "" {
				// The machine tells the driver's agent (the job stops)
				// from one that held only executors (recorded).
				c.log.WithFields(logrus.Fields{"job": st.Job.ID, "agent": c.nameLocked(id), "agent_id": id, "driver_agent": id == st.Driver.AgentID}).Warn("an agent of the job (executors or driver) is gone")
				c.postLocked(lj, lifecycle.Event{Kind: lifecycle.EvAgentLost, At: now, Agent: id, Name: c.nameLocked(id)})
			}
		}
	}
	c.mu.Unlock()
	if changed {
		if rep := c.reporter(); rep != nil {
			rep.ClusterChanged()
		}
	}
	return nil
}

// AgentsRead says how current AgentStatuses is: when the GET_AGENTS call
// it comes from was sent (zero: none has answered yet), and the error of
// the last call if it failed (the statuses are then those of at). Power
// management takes no power-off decision on a view that is not current
// (power.View).
func (c *Cluster) AgentsRead() (at time.Time, lastErr error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.readAt, c.readErr
}

// readSpacing is the time between the starts of two periodic reads of
// GET_AGENTS (refreshLoop) after a read that took took: refresh, or 8
// times what the read cost on a large cluster.
func readSpacing(refresh, took time.Duration) time.Duration {
	return max(refresh, 8*took)
}

// ReadEvery is how long the refresh loop waits between two reads of
// GET_AGENTS when no kick hurries it (readSpacing of the last read; the
// configured refresh before the loop's first read). A view of the agents
// is as old as that, and a little more, just before the next read
// answers: power management does not take it for stale then
// (power.View.Every).
func (c *Cluster) ReadEvery() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return max(c.readEvery, c.cfg.Refresh)
}

// AgentsView is AgentStatuses, the ids GET_AGENTS listed in
// recovered_agents and AgentsRead, all of the same GET_AGENTS answer.
// recovered: after a master failover, the agents of its registry that have
// not re-registered yet (up to agent_reregister_timeout, 10 minutes by
// default); AgentStatuses does not list them, and they have not left
// Mesos. Read apart, an agent that re-registered between two reads was in
// neither list, gone (power management powered off a draining one).
func (c *Cluster) AgentsView() (statuses []AgentStatus, recovered []string, at time.Time, lastErr error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.agentStatusesLocked(), append([]string(nil), c.recovered...), c.readAt, c.readErr
}

func sameCapacity(a, b []Agent) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].ID != b[i].ID || math.Abs(a[i].FreeCPUs-b[i].FreeCPUs) > 1e-9 || math.Abs(a[i].FreeMemMB-b[i].FreeMemMB) > 1e-9 || a[i].CPUs != b[i].CPUs {
			return false
		}
	}
	return true
}

// refreshLoop reads GET_AGENTS every Refresh, and soon after a kick
// (reservations made or given back). On a large cluster every GET_AGENTS is
// megabytes that the master builds and sparkpack decodes (about 0.3 s of a
// core for 30,000 agents), so refreshes are spaced by what they cost: the
// periodic one at least 8 times, a kicked one at least twice its last
// duration after the previous one (and kicked ones at least 500 ms apart,
// as kicks come in bursts when many jobs start or end at once).
func (c *Cluster) refreshLoop(ctx context.Context) {
	gap := min(c.cfg.Refresh/4, 500*time.Millisecond)
	for {
		last := time.Now()
		// After a failed look, ZooKeeper naming a leader (or another
		// one) is a reason to look again at once, whatever the last look
		// cost: one that waited 15 s for ZooKeeper to name a leader put
		// the next 2 minutes off, and a master registering meanwhile was
		// not read until then. (Not for a list of masters: its failovers
		// are the failed look's own doing.)
		moved := c.cfg.Operator.ep.Changed()
		err := c.refresh(ctx)
		if ctx.Err() == nil {
			c.noteRefresh(err, false)
		}
		took := time.Since(last)
		period := readSpacing(c.cfg.Refresh, took)
		c.mu.Lock()
		c.readEvery = period
		c.mu.Unlock()
		kickGap := max(gap, 2*took)
		timer := time.NewTimer(period - took)
		if err == nil || c.cfg.Operator.ep.spec.ZK == nil {
			moved = nil
		}
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case <-moved:
			timer.Stop()
			select {
			case <-ctx.Done():
				return
			case <-time.After(gap):
			}
		case <-timer.C:
		case <-c.kickCh:
			timer.Stop()
			if wait := kickGap - time.Since(last); wait > 0 {
				select {
				case <-ctx.Done():
					return
				case <-time.After(wait):
				}
			}
		}
	}
}

// noteRefresh logs a GET_AGENTS that failed the first time, then once a
// period while it goes on failing, and when it answers again.
func (c *Cluster) noteRefresh(err error, atStart bool) {
	var v failurelog.Verdict
	c.refreshFails, v = c.refreshFails.Step(time.Now(), err != nil)
	switch v.Kind {
	case failurelog.First:
		msg := "GET_AGENTS failed; the cluster view may be stale, retrying (is the Mesos master reachable? check it and --mesos-master)"
		if atStart {
			msg = "GET_AGENTS failed at start; retrying in the background (is the Mesos master reachable? check it and --mesos-master)"
		}
		c.log.WithError(err).WithField("retry_every", c.cfg.Refresh.String()).Warn(msg)
	case failurelog.Still:
		c.log.WithError(err).WithFields(logrus.Fields{"failures": v.Failures, "failing_for": time.Since(v.Since).Round(time.Second).String()}).
			Warn("GET_AGENTS still fails; the cluster view is stale, retrying (is the Mesos master reachable? check it and --mesos-master)")
	case failurelog.Recovered:
		c.log.WithFields(logrus.Fields{"failures": v.Failures, "failed_for": time.Since(v.Since).Round(time.Millisecond).String()}).
			Info("GET_AGENTS answers again; the cluster view is current")
	}
}

// sweepLoop releases labelled reservations that no plan holds (sweep).
func (c *Cluster) sweepLoop(ctx context.Context) {
	t := time.NewTicker(c.cfg.Sweep)
	defer t.Stop()
	for {
		if err := c.sweep(ctx); err != nil && ctx.Err() == nil {
			c.log.WithError(err).Warn("looking for leaked reservations failed; will try again")
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// sweep releases every labelled reservation whose job no plan holds: a
// job that is over or unknown, and a job back in the queue (QUEUED or
// SUBMITTED in the store) that the adapter does not follow. The last is a
// release that missed an agent (disconnected then, back with the
// reservation since) or a crash between the two; whatever the reason, a
// job in the queue has no plan, so its reservations are strays. The store
// and the labels Mesos shows are all it reads, so it holds after a crash.
func (c *Cluster) sweep(ctx context.Context) error {
	unfinished, err := c.cfg.Store.Unfinished(ctx)
	if err != nil {
		return err
	}
	keep, queued := sweepKeeps(unfinished)
	c.mu.Lock()
	for id := range c.jobs {
		keep[id] = true
	}
	c.mu.Unlock()
	orphans, err := c.cfg.Reserver.Orphans(ctx, func(id string) bool {
		if keep[id] {
			return true
		}
		// A job started while the agents were read (its reservations
		// may be in the view) is followed by now.
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.jobs[id] != nil
	})
	if err != nil {
		return err
	}
	sort.Strings(orphans)
	for _, id := range orphans {
		if queued[id] {
			c.releaseQueued(id)
			continue
		}
		c.log.WithField("job", id).Warn("releasing reservations of a job that is over (left by a crash or a lost agent)")
		if err := c.cfg.Reserver.Release(ctx, id); err != nil {
			c.log.WithError(err).WithField("job", id).Warn("releasing leaked reservations failed; will try again")
		}
	}
	dropped := c.sweepOffPlan(ctx)
	if len(orphans) > 0 || dropped > 0 {
		c.kick()
	}
	return nil
}

// sweepOffPlan unreserves the reservations of jobs the adapter follows,
// launching or running, on agents their plan does not name: an earlier
// plan's, on an agent that came back (its release missed it while it was
// disconnected) after the new plan was reserved. It returns how many it
// unreserved. The reserver unreserves (Pinner.DropStrays), with the
// operator API or from the job role's offers.
func (c *Cluster) sweepOffPlan(ctx context.Context) int {
	if c.cfg.Operator == nil || c.cfg.Reserver == nil {
		return 0
	}
	// The plans first, then the view: a job launching or running has its
	// plan's reservations confirmed, and any earlier generation of it is
	// gone (startLocked), so the view shows what the plan reserved.
	c.mu.Lock()
	plans := map[string]map[string][2]float64{}
	gen := map[string]*liveJob{}
	for id, lj := range c.jobs {
		// A job without a plan (resumed with none stored) is left alone:
		// what its reservations are for is not known.
		if p := planAgents(lj.st.Plan); len(p) > 0 && (lj.st.Phase == lifecycle.Launching || lj.st.Phase == lifecycle.Running) {
			plans[id], gen[id] = p, lj
		}
	}
	c.mu.Unlock()
	if len(plans) == 0 {
		return 0
	}
	view, err := c.cfg.Operator.GetAgents(ctx)
	if err != nil {
		c.log.WithError(err).Warn("looking for reservations of earlier plans failed; will try again")
		return 0
	}
	strays := offPlanStrays(view, plans, c.cfg.Reserver.FromOffers())
	n := 0
	for len(strays) > 0 {
		// offPlanStrays lists them by job: one job's at a time.
		k := 1
		for k < len(strays) && strays[k].JobID == strays[0].JobID {
			k++
		}
		job, mine := strays[0].JobID, strays[:k]
		strays = strays[k:]
		c.mu.Lock()
		lj := c.jobs[job]
		still := lj == gen[job] && (lj.st.Phase == lifecycle.Launching || lj.st.Phase == lifecycle.Running)
		c.mu.Unlock()
		if !still {
			continue // releasing now, or placed again: its follower sees to it
		}
		c.log.WithFields(logrus.Fields{"job": job, "reservations": len(mine)}).Info("a launching or running job holds reservations on agents its plan does not name (an agent came back after the job was placed again); unreserving them")
		n += len(c.cfg.Reserver.DropStrays(ctx, job, mine))
	}
	return n
}

// planAgents is what the plan reserves, by agent id.
func planAgents(p placement.Plan) map[string][2]float64 {
	out := map[string][2]float64{}
	for _, a := range p.Assignments {
		if a.Executors > 0 {
			out[a.AgentID] = [2]float64{}
		}
	}
	return out
}

// offPlanStrays decides, from a GET_AGENTS view, the labelled reservations
// of the given jobs (their plans by agent id) on agents that can be
// unreserved now (from offers, or with the operator API: unreservable)
// and that their plan does not name, by job then agent. One that tasks
// use (the agent's allocated resources carry its label: executors of an
// earlier run) is marked InUse: it cannot be unreserved until they end,
// and DropStrays leaves it to a later sweep. (A real 1.12 master lists an
// agent back with a task on a labelled reservation so:
// mesossim/testdata/real/probe.json, "agent back".)
func offPlanStrays(view []master.Response_GetAgents_Agent, plans map[string]map[string][2]float64, fromOffers bool) []Reserved {
	var out []Reserved
	for _, a := range view {
		if a.AgentInfo.ID == nil || !unreservable(a, fromOffers) {
			continue // looked at again once it is back
		}
		var used []Reserved // computed for the agents that hold strays only
		for _, res := range LabelledReservations(a.AgentInfo.ID.Value, a.TotalResources) {
			plan, followed := plans[res.JobID]
			if _, named := plan[res.AgentID]; !followed || named {
				continue
			}
			if used == nil {
				used = LabelledReservations(a.AgentInfo.ID.Value, a.AllocatedResources)
			}
			res.InUse = slices.ContainsFunc(used, func(u Reserved) bool { return u.JobID == res.JobID && u.Role == res.Role })
			out = append(out, res)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].JobID != out[j].JobID {
			return out[i].JobID < out[j].JobID
		}
		return out[i].AgentID < out[j].AgentID
	})
	return out
}

// sweepKeeps decides, from the store's unfinished jobs, whose labelled
// reservations the sweep keeps (the jobs that hold or are making a plan)
// and which are waiting in the queue (no plan: their reservations are
// strays unless the adapter follows the job again).
func sweepKeeps(unfinished []scheduler.Job) (keep, queued map[string]bool) {
	keep, queued = map[string]bool{}, map[string]bool{}
	for _, j := range unfinished {
		if j.State.Waiting() {
			queued[j.ID] = true
			continue
		}
		keep[j.ID] = true
	}
	return keep, queued
}

// releaseQueued gives back the stray reservations of a job in the queue
// that the adapter does not follow. It follows the job in its releasing
// phase (giving back is retried until it succeeds), so that a new plan of
// the job placed meanwhile waits for it (startLocked) instead of having
// its fresh reservations unreserved under it; a job followed again since
// the sweep looked is left to its follower.
func (c *Cluster) releaseQueued(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.jobs[id] != nil || c.ctx == nil {
		return
	}
	c.log.WithField("job", id).Warn("releasing stray reservations of a job back in the queue (a release missed a disconnected agent, or a crash)")
	c.startLocked(scheduler.Job{Spec: scheduler.Spec{ID: id}}, placement.Plan{}, lifecycle.Releasing, scheduler.DriverRecord{}, nil)
}
