package offers

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/sirupsen/logrus"

	"github.com/sparkpack/sparkpack/placement"
	"github.com/sparkpack/sparkpack/scheduler"
	"github.com/sparkpack/sparkpack/sparksubmit"
)

// JobStore is what the Mesos cluster adapter needs of the durable store
// (package store implements it).
type JobStore interface {
	GetJob(ctx context.Context, id string) (scheduler.Job, error)
	Unfinished(ctx context.Context) ([]scheduler.Job, error)
	Plan(ctx context.Context, id string) (placement.Plan, error)
	PutDriver(ctx context.Context, d scheduler.DriverRecord) error
	Driver(ctx context.Context, jobID string) (scheduler.DriverRecord, error)
	// CountFailedRun counts a failed application run once per driver task
	// and returns the job's failed runs so far.
	CountFailedRun(ctx context.Context, jobID, taskID string) (int, error)
	Note(ctx context.Context, id, reason string) error
}

// Reporter is the part of the scheduler core the adapter reports to.
type Reporter interface {
	Report(ctx context.Context, id string, to scheduler.State, reason string) error
	ClusterChanged()
}

// maxLostLaunches bounds how often, in one application attempt, a driver
// launch that Mesos lost before the driver started (TASK_UNKNOWN,
// TASK_LOST, TASK_DROPPED, TASK_GONE) is launched again before the job
// fails. Such relaunches never use up the job's retries, and a launch that
// provably never reached Mesos (recorded before its ACCEPT was sent) is
// not counted at all.
const maxLostLaunches = 5

// LaunchSent is the driver state recorded just before the ACCEPT with the
// driver's LAUNCH goes out: from then on the launch may have reached Mesos.
const LaunchSent = "LAUNCH_SENT"

// DurationLabel is the driver task label carrying the job's estimated
// duration in seconds. Real Mesos ignores it; the emulator
// (mesossim) runs the simulated Spark driver that long.
const DurationLabel = "sparkpack.sim/duration-seconds"

// ClusterConfig configures the Mesos cluster adapter.
type ClusterConfig struct {
	Operator *Operator
	// Reserver makes the reservations: *Reserver (operator API, the
	// default) or *OfferReserver (from offers).
	Reserver  Pinner
	Framework *Framework
	Store     JobStore
	// Prices gives the hourly price of agents without a price attribute.
	Prices PriceTable
	// Submit holds the cluster-wide parts of the spark-submit command
	// (the Mesos master URL Spark connects to, paths, images).
	Submit sparksubmit.Options
	// Refresh is how often GET_AGENTS is read (default 2 s).
	Refresh time.Duration
	// Sweep is how often labelled reservations of ended jobs are looked
	// for and released (default 30 s; also once at start).
	Sweep time.Duration
	// Retry is the pause before a failed step is tried again (default 1 s).
	Retry time.Duration
	// LaunchTimeout: a driver that found no offer with room for this long
	// is withdrawn and the job placed again (default 2 minutes).
	LaunchTimeout time.Duration
	// AgentWait bounds how long a plan waits for one of its agents to be
	// registered with Mesos (an agent being powered on) before the job is
	// placed again without it (default 5 minutes).
	AgentWait time.Duration
	// Unavailable, if set, names agents that new plans must not use
	// (power management is taking them out of service): the snapshot
	// shows them with nothing free.
	Unavailable func(agentID string) bool
	// AgentFailed, if set, reports that an agent a plan waits for will not
	// come (its power-on was given up): the job is placed again at once.
	AgentFailed func(agentID string) bool
	Log         logrus.FieldLogger
}

// phase is where the adapter is with a job.
type phase int

const (
	phaseReserving phase = iota
	phaseLaunching
	phaseRunning
	phaseReleasing // the driver ended or the job was stopped: give back
	phaseDone      // everything given back; the outcome was reported
)

// liveJob is a job the adapter is making real.
type liveJob struct {
	job    scheduler.Job
	plan   placement.Plan
	phase  phase
	driver scheduler.DriverRecord // this generation's driver task; zero until named
	kill   bool                   // a user asked to stop it (durable: the job's KillRequested)
	// preempt, when not empty, is why the core evicts the job (durable:
	// the job's PreemptRequested): stop it and send it back to the queue.
	preempt string
	lost    string // an agent of the plan was lost
	// queued: the driver's launch is queued with the framework in this
	// process; sending: its ACCEPT is on the way (decisions wait for it).
	queued   bool
	sending  bool
	queuedAt time.Time       // when the current driver launch was queued
	waitFrom time.Time       // when the plan started waiting for an unregistered agent
	outcome  scheduler.State // set when phaseReleasing starts
	reason   string
	signal   chan struct{}
	done     chan struct{} // closed when the follower ends
	stop     context.CancelFunc
}

func (l *liveJob) poke() {
	select {
	case l.signal <- struct{}{}:
	default:
	}
}

// Cluster is the Mesos side of the scheduler core (scheduler.Cluster and
// scheduler.Killer) and the framework's StatusSink. For every plan it
// follows the job through the steps of MESOS_PROTOCOL.md: quota limit,
// labelled reservations confirmed by GET_AGENTS, the driver launched in
// sparkpack's role, RUNNING, and, once the driver ended and Spark's
// executors are gone, unreserve, quota cleared, the final state. Each step
// is written to the store before the next, so a restart resumes (Start
// reads the unfinished jobs) and a crash leaks nothing.
type Cluster struct {
	cfg ClusterConfig
	log logrus.FieldLogger

	repMu sync.RWMutex
	rep   Reporter

	mu       sync.Mutex
	ctx      context.Context
	agents   []Agent
	index    map[string]int // agent id -> position in agents
	statuses []AgentStatus  // every agent GET_AGENTS lists, whatever its state
	loaded   bool
	missing  map[string]int // agent id -> refreshes it has been missing
	seen     map[string]Agent
	gone     map[string]Agent // seen before, not in GET_AGENTS now (off or lost)
	jobs     map[string]*liveJob
	wg       sync.WaitGroup
	kickCh   chan struct{}
	sweeping bool
}

// NewCluster builds the adapter; SetReporter and Start must follow.
func NewCluster(cfg ClusterConfig) *Cluster {
	if cfg.Refresh <= 0 {
		cfg.Refresh = 2 * time.Second
	}
	if cfg.Sweep <= 0 {
		cfg.Sweep = 30 * time.Second
	}
	if cfg.Retry <= 0 {
		cfg.Retry = time.Second
	}
	if cfg.LaunchTimeout <= 0 {
		cfg.LaunchTimeout = 2 * time.Minute
	}
	if cfg.AgentWait <= 0 {
		cfg.AgentWait = 5 * time.Minute
	}
	if cfg.Log == nil {
		cfg.Log = logrus.StandardLogger()
	}
	return &Cluster{cfg: cfg, log: cfg.Log.WithField("component", "mesos-cluster"),
		jobs: map[string]*liveJob{}, missing: map[string]int{}, seen: map[string]Agent{}, gone: map[string]Agent{}, kickCh: make(chan struct{}, 1)}
}

// SetReporter names the core that hears about job progress.
func (c *Cluster) SetReporter(r Reporter) {
	c.repMu.Lock()
	c.rep = r
	c.repMu.Unlock()
}

func (c *Cluster) reporter() Reporter {
	c.repMu.RLock()
	defer c.repMu.RUnlock()
	return c.rep
}

// Start runs the adapter's loops until ctx ends (Wait waits for them): it
// resumes the unfinished jobs of the store, refreshes the agents and
// releases labelled reservations that belong to no unfinished job.
func (c *Cluster) Start(ctx context.Context) error {
	c.mu.Lock()
	c.ctx = ctx
	c.mu.Unlock()
	if err := c.resume(ctx); err != nil {
		return err
	}
	// A first look at the agents, so that views and the first placement
	// see the cluster at once (refreshLoop keeps trying if it fails).
	if err := c.refresh(ctx); err != nil {
		c.log.WithError(err).Warn("GET_AGENTS failed at start; retrying in the background (is the Mesos master reachable?)")
	}
	c.wg.Add(2)
	go func() { defer c.wg.Done(); c.refreshLoop(ctx) }()
	go func() { defer c.wg.Done(); c.sweepLoop(ctx) }()
	return nil
}

// Wait returns when every goroutine of the adapter has ended (after the
// context given to Start is done).
func (c *Cluster) Wait() { c.wg.Wait() }

// ---- scheduler.Cluster ----------------------------------------------------

// Snapshot implements scheduler.Cluster: the agents as GET_AGENTS last
// showed them, with every plan handed to Apply and not yet given back
// counted as used even where its reservations are not made yet.
func (c *Cluster) Snapshot(ctx context.Context) (placement.Snapshot, error) {
	c.mu.Lock()
	loaded := c.loaded
	c.mu.Unlock()
	if !loaded {
		if err := c.refresh(ctx); err != nil {
			return placement.Snapshot{}, fmt.Errorf("mesos cluster snapshot: %w", err)
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	snap := Snapshot(c.overlayLocked())
	if c.cfg.Unavailable != nil {
		for i := range snap.Agents {
			if c.cfg.Unavailable(snap.Agents[i].ID) {
				snap.Agents[i].FreeCPUs, snap.Agents[i].FreeMemMB = 0, 0
			}
		}
	}
	return snap, nil
}

// AgentStatuses is every agent GET_AGENTS last listed, whatever its state,
// for power management. An agent counts as busy while GET_AGENTS shows a
// task or reservation of anyone there, or while a plan of sparkpack's
// still counts on it (its reservations may not be made yet).
func (c *Cluster) AgentStatuses() []AgentStatus {
	c.mu.Lock()
	defer c.mu.Unlock()
	planned := map[string]bool{}
	for _, lj := range c.jobs {
		if lj.phase == phaseDone {
			continue
		}
		for _, as := range lj.plan.Assignments {
			planned[as.AgentID] = true
		}
		if lj.driver.AgentID != "" && !lj.driver.Ended {
			planned[lj.driver.AgentID] = true
		}
	}
	out := make([]AgentStatus, len(c.statuses))
	for i, st := range c.statuses {
		out[i] = st
		out[i].Reservations = append([]Reserved(nil), st.Reservations...)
		if planned[st.ID] {
			out[i].Busy = true
		}
	}
	return out
}

// AgentName is the name people know an agent by: its hostname, or its
// Mesos id when the agent was never seen. Events and logs use it, as the
// dashboard and the CLI do.
func (c *Cluster) AgentName(id string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.nameLocked(id)
}

func (c *Cluster) nameLocked(id string) string {
	if a, ok := c.seen[id]; ok && a.Hostname != "" {
		return a.Hostname
	}
	return id
}

// registeredLocked reports whether GET_AGENTS lists the agent as active.
func (c *Cluster) registeredLocked(id string) bool {
	_, ok := c.indexLocked()[id]
	return ok
}

// indexLocked maps agent ids to their position in c.agents; refresh keeps
// it, and it is built again if c.agents was set without it.
func (c *Cluster) indexLocked() map[string]int {
	if len(c.index) != len(c.agents) {
		c.index = make(map[string]int, len(c.agents))
		for i, a := range c.agents {
			c.index[a.ID] = i
		}
	}
	return c.index
}

// overlayLocked returns the agents with the resources of live plans that
// GET_AGENTS does not show reserved yet taken out.
func (c *Cluster) overlayLocked() []Agent {
	out := make([]Agent, len(c.agents))
	index := c.indexLocked()
	for i, a := range c.agents {
		out[i] = a
		out[i].Reservations = append([]Reserved(nil), a.Reservations...)
	}
	for id, lj := range c.jobs {
		if lj.phase == phaseDone {
			continue
		}
		cpu1, mem1 := JobAmounts(lj.job)
		for _, as := range lj.plan.Assignments {
			i, ok := index[as.AgentID]
			if !ok || as.Executors <= 0 {
				continue
			}
			a := &out[i]
			var haveC, haveM float64
			for _, r := range a.Reservations {
				if r.JobID == id {
					haveC += r.CPUs
					haveM += r.MemMB
				}
			}
			needC, needM := cpu1*float64(as.Executors), mem1*float64(as.Executors)
			dc, dm := math.Max(needC-haveC, 0), math.Max(needM-haveM, 0)
			a.FreeCPUs = math.Max(a.FreeCPUs-dc, 0)
			a.FreeMemMB = math.Max(a.FreeMemMB-dm, 0)
			if dc > 0 || dm > 0 || haveC == 0 {
				a.Reservations = append(a.Reservations, Reserved{AgentID: a.ID, JobID: id, Role: scheduler.Role(id), CPUs: dc, MemMB: dm})
			}
		}
	}
	ids := make([]string, 0, len(c.jobs))
	for id := range c.jobs {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	c.overlayDriversLocked(out, index, ids)
	// Room for the drivers not launched yet: without it, plans could
	// reserve every cpu and leave the drivers of the reserved jobs nowhere
	// to run. It is taken on the job's own agents when they have it.
	for _, id := range ids {
		lj := c.jobs[id]
		if (lj.phase != phaseReserving && lj.phase != phaseLaunching) || lj.driver.State != "" {
			continue
		}
		d := lj.job.DriverOrDefault()
		dc, dm := d.Cores, float64(d.MemoryMB)
		best := -1
		for _, as := range lj.plan.Assignments {
			if i, ok := index[as.AgentID]; ok && out[i].FreeCPUs+1e-9 >= dc && out[i].FreeMemMB+1e-9 >= dm {
				best = i
				break
			}
		}
		if best < 0 {
			for i := range out {
				if out[i].FreeCPUs+1e-9 >= dc && out[i].FreeMemMB+1e-9 >= dm && (best < 0 || out[i].FreeCPUs > out[best].FreeCPUs) {
					best = i
				}
			}
		}
		if best >= 0 {
			out[best].FreeCPUs -= dc
			out[best].FreeMemMB -= dm
		}
	}
	return out
}

// overlayDriversLocked lists on each agent the drivers launched there that
// have not ended, and takes from its free resources what GET_AGENTS does
// not show allocated to sparkpack's role yet (a launch sent since the last
// refresh).
func (c *Cluster) overlayDriversLocked(out []Agent, index map[string]int, ids []string) {
	role := "sparkpack"
	if c.cfg.Framework != nil {
		role = c.cfg.Framework.cfg.Role
	}
	for _, id := range ids {
		lj := c.jobs[id]
		drv := lj.driver
		if lj.phase == phaseDone || drv.AgentID == "" || drv.State == "" || drv.Ended {
			continue
		}
		i, ok := index[drv.AgentID]
		if !ok {
			continue
		}
		d := lj.job.DriverOrDefault()
		out[i].Drivers = append(out[i].Drivers, DriverTask{JobID: id, TaskID: drv.TaskID, CPUs: d.Cores, MemMB: float64(d.MemoryMB)})
	}
	for i := range out {
		a := &out[i]
		if len(a.Drivers) == 0 {
			continue
		}
		var needC, needM float64
		for _, d := range a.Drivers {
			needC += d.CPUs
			needM += d.MemMB
		}
		have := a.allocByRole[role]
		a.FreeCPUs = math.Max(a.FreeCPUs-math.Max(needC-have[0], 0), 0)
		a.FreeMemMB = math.Max(a.FreeMemMB-math.Max(needM-have[1], 0), 0)
	}
}

// Apply implements scheduler.Cluster: it starts following the job and
// returns at once.
func (c *Cluster) Apply(ctx context.Context, job scheduler.Job, plan placement.Plan) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ctx == nil {
		return errors.New("mesos cluster adapter not started")
	}
	prev := c.jobs[job.ID]
	c.startLocked(job, plan, phaseReserving, scheduler.DriverRecord{}, prev)
	return nil
}

// startLocked registers a live job and starts its follower, which first
// waits for the previous generation of the same job (a retry) to be gone.
func (c *Cluster) startLocked(job scheduler.Job, plan placement.Plan, ph phase, drv scheduler.DriverRecord, prev *liveJob) *liveJob {
	ctx, cancel := context.WithCancel(c.ctx)
	lj := &liveJob{job: job, plan: plan, phase: ph, driver: drv, kill: job.KillRequested, preempt: job.PreemptRequested,
		signal: make(chan struct{}, 1), done: make(chan struct{}), stop: cancel, queuedAt: time.Now()}
	c.jobs[job.ID] = lj
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		defer close(lj.done)
		defer cancel()
		if prev != nil {
			select {
			case <-prev.done:
			case <-ctx.Done():
				return
			}
		}
		c.follow(ctx, lj)
	}()
	return lj
}

// Release implements scheduler.Cluster. When the adapter already gave the
// job's resources back (the usual end), it forgets the job; otherwise it
// starts giving them back and returns at once.
func (c *Cluster) Release(ctx context.Context, jobID string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	lj := c.jobs[jobID]
	if lj == nil {
		if c.ctx == nil {
			return nil
		}
		// Not followed (e.g. recovered without a plan): give back whatever
		// Mesos shows for it.
		lj = c.startLocked(scheduler.Job{Spec: scheduler.Spec{ID: jobID}}, placement.Plan{}, phaseReleasing, scheduler.DriverRecord{}, nil)
		lj.outcome = "" // nothing to report
		return nil
	}
	switch lj.phase {
	case phaseDone:
		delete(c.jobs, jobID)
	case phaseReleasing:
		// Already giving back; this is the core hearing the outcome.
	default:
		// The core let go of a job the adapter still follows.
		lj.phase, lj.outcome = phaseReleasing, ""
		lj.poke()
	}
	return nil
}

// Kill implements scheduler.Killer: the driver is killed (or its launch
// withdrawn); the job ends KILLED once its resources are given back.
func (c *Cluster) Kill(ctx context.Context, jobID string) error {
	c.mu.Lock()
	lj := c.jobs[jobID]
	if lj == nil {
		c.mu.Unlock()
		return fmt.Errorf("kill job %s: %w", jobID, scheduler.ErrNotFound)
	}
	lj.kill = true
	lj.poke()
	c.mu.Unlock()
	return nil
}

// Preempt implements scheduler.Preempter: the job's driver is killed (or
// its launch withdrawn), its reservations and quota given back, and the
// job reported back to QUEUED, to run again from scratch. A user's kill
// wins over an eviction; a driver that finishes meanwhile ends the job
// FINISHED.
func (c *Cluster) Preempt(ctx context.Context, jobID, reason string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	lj := c.jobs[jobID]
	if lj == nil || lj.phase == phaseReleasing || lj.phase == phaseDone {
		return fmt.Errorf("preempt job %s: %w", jobID, scheduler.ErrNotFound)
	}
	if lj.preempt == "" {
		lj.preempt = reason
	}
	lj.poke()
	return nil
}

// ---- StatusSink -----------------------------------------------------------

// DriverStatus implements StatusSink: it records the driver's task state
// before the update is acknowledged, reports RUNNING, and on a terminal
// state lets the job's follower decide: relaunch (Mesos lost the launch
// before the driver started), retry, or end the job.
func (c *Cluster) DriverStatus(ctx context.Context, jobID string, st mesos.TaskStatus) error {
	c.mu.Lock()
	lj := c.jobs[jobID]
	if lj == nil || lj.driver.TaskID != st.TaskID.Value || lj.driver.Ended || lj.driver.State == "" {
		// An older launch, a job that is over, or a task whose ACCEPT was
		// never sent (Mesos cannot know it): just acknowledge.
		c.mu.Unlock()
		return nil
	}
	state := st.GetState()
	rec := lj.driver
	rec.State = state.String()
	rec.Message = st.GetMessage()
	if st.AgentID != nil {
		rec.AgentID = st.AgentID.Value
	}
	if state == mesos.TASK_STARTING || state == mesos.TASK_RUNNING {
		rec.Started = true
	}
	// TASK_UNKNOWN is how a master answers a partition-aware framework's
	// reconciliation of a task it does not know (older masters say TASK_LOST).
	rec.Ended = isTerminal(st.State) || state == mesos.TASK_UNKNOWN
	if rec.Ended && lostBeforeStart(rec) && st.GetReason() != mesos.REASON_INVALID_OFFERS {
		// The launch may have reached an agent and been lost there. A
		// launch the master refused because its offer was no longer
		// valid (rescinded by a reservation on the agent, a failover)
		// provably never ran: it is relaunched without being counted.
		rec.LostLaunches++
	}
	ph := lj.phase
	c.mu.Unlock()

	if err := c.cfg.Store.PutDriver(ctx, rec); err != nil {
		return err
	}
	c.mu.Lock()
	if lj.driver.TaskID == rec.TaskID {
		lj.driver = rec
	}
	c.mu.Unlock()
	switch {
	case rec.Ended:
		note := fmt.Sprintf("driver %s: %s %s", rec.TaskID, rec.State, rec.Message)
		if lostBeforeStart(rec) {
			note = fmt.Sprintf("driver %s: %s before it started (Mesos lost the launch; launched again, %d of %d lost launches counted) %s", rec.TaskID, rec.State, rec.LostLaunches, maxLostLaunches, rec.Message)
		}
		_ = c.cfg.Store.Note(ctx, jobID, strings.TrimSpace(note))
		lj.poke()
	case rec.Started && ph == phaseLaunching:
		if err := c.report(ctx, jobID, scheduler.Running, "driver running on agent "+c.AgentName(rec.AgentID)); err != nil {
			return err
		}
		c.mu.Lock()
		if lj.phase == phaseLaunching {
			lj.phase = phaseRunning
		}
		c.mu.Unlock()
	}
	return nil
}

// lostBeforeStart: the driver ended without ever starting because Mesos
// lost, dropped or does not know its launch.
func lostBeforeStart(d scheduler.DriverRecord) bool {
	if !d.Ended || d.Started {
		return false
	}
	switch d.State {
	case mesos.TASK_UNKNOWN.String(), mesos.TASK_LOST.String(), mesos.TASK_DROPPED.String(),
		mesos.TASK_GONE.String(), mesos.TASK_GONE_BY_OPERATOR.String():
		return true
	}
	return false
}

// report tells the core; a job already in that state counts as told.
func (c *Cluster) report(ctx context.Context, id string, to scheduler.State, reason string) error {
	rep := c.reporter()
	if rep == nil {
		return errors.New("mesos cluster adapter has no reporter")
	}
	err := rep.Report(ctx, id, to, reason)
	if err == nil {
		return nil
	}
	if j, gerr := c.cfg.Store.GetJob(ctx, id); gerr == nil && j.State == to {
		return nil
	}
	return err
}

// ---- the follower ---------------------------------------------------------

// follow drives one job until its resources are back and its end reported.
func (c *Cluster) follow(ctx context.Context, lj *liveJob) {
	log := c.log.WithField("job", lj.job.ID)
	for ctx.Err() == nil {
		c.mu.Lock()
		ph, kill, lost, queued, sending := lj.phase, lj.kill, lj.lost, lj.queued, lj.sending
		preempt := lj.preempt
		drv := lj.driver
		c.mu.Unlock()
		stop := kill || preempt != "" // the driver must not run (on)

		var err error
		switch {
		case ph == phaseDone:
			return
		case sending:
			// The driver's ACCEPT is on its way: whatever comes next (a
			// kill, a release) must know whether it went out.
			c.waitSignal(ctx, lj, time.Second)
			continue
		case ph == phaseReleasing:
			err = c.giveBack(ctx, lj)
			if err == nil {
				return
			}
		case kill && (ph == phaseReserving || (ph == phaseLaunching && drv.State == "")):
			// Releasing first: a launch the framework is about to send
			// then withdraws itself (DriverLaunch.Sending).
			c.toReleasing(lj, scheduler.Killed, "killed on request before the driver ran")
			c.cfg.Framework.CancelLaunch(lj.job.ID)
			continue
		case preempt != "" && (ph == phaseReserving || (ph == phaseLaunching && drv.State == "")):
			c.toReleasing(lj, scheduler.Queued, "preempted before the driver ran: "+preempt)
			c.cfg.Framework.CancelLaunch(lj.job.ID)
			continue
		case lost != "" && ph == phaseLaunching && drv.State == "":
			c.toReleasing(lj, scheduler.Queued, "agent "+c.AgentName(lost)+" was lost before the driver was launched; placing again")
			c.cfg.Framework.CancelLaunch(lj.job.ID)
			continue
		case (stop || lost != "") && !drv.Ended && drv.TaskID != "" && drv.State != "":
			// Kill the driver; its terminal update moves the job on.
			if err = c.cfg.Framework.Kill(ctx, drv.TaskID, drv.AgentID); err == nil {
				log.WithField("task", drv.TaskID).Info("driver kill requested")
				c.waitSignal(ctx, lj, 10*time.Second) // Mesos re-sends; kill again if nothing came
				continue
			}
		case drv.Ended && !stop && lost == "" && lostBeforeStart(drv) && drv.LostLaunches < maxLostLaunches:
			err = c.relaunch(ctx, lj)
		case drv.Ended:
			var to scheduler.State
			var why string
			if to, why, err = c.outcome(ctx, lj, drv); err == nil {
				c.toReleasing(lj, to, why)
				continue
			}
		case ph == phaseReserving:
			err = c.reserve(ctx, lj)
		case ph == phaseLaunching && drv.TaskID == "":
			// No driver named in this generation (a job left LAUNCHING by
			// an older sparkpack): name one now.
			_, err = c.nameDriver(ctx, lj, 0)
		case ph == phaseLaunching && drv.State == "" && !queued:
			// Named but never sent (or sent by a process that is gone
			// before its ACCEPT went out): queue it; this costs no attempt.
			err = c.queueLaunch(ctx, lj)
		case ph == phaseLaunching && drv.State == "":
			// Queued with the framework, waiting for an offer with room.
			c.mu.Lock()
			waited := time.Since(lj.queuedAt)
			c.mu.Unlock()
			if waited >= c.cfg.LaunchTimeout {
				c.toReleasing(lj, scheduler.Queued, fmt.Sprintf("no offer had room for the driver within %s; placing again", c.cfg.LaunchTimeout))
				c.cfg.Framework.CancelLaunch(lj.job.ID)
				continue
			}
			c.waitSignal(ctx, lj, c.cfg.LaunchTimeout-waited)
			continue
		default:
			// launching (sent) or running: wait for status updates.
			c.waitSignal(ctx, lj, 0)
			continue
		}
		if err != nil && ctx.Err() == nil {
			log.WithError(err).Warn("step failed; retrying")
			c.waitSignal(ctx, lj, c.cfg.Retry)
		}
	}
}

func (c *Cluster) waitSignal(ctx context.Context, lj *liveJob, d time.Duration) {
	var t <-chan time.Time
	if d > 0 {
		timer := time.NewTimer(d)
		defer timer.Stop()
		t = timer.C
	}
	select {
	case <-ctx.Done():
	case <-lj.signal:
	case <-t:
	}
}

func (c *Cluster) toReleasing(lj *liveJob, to scheduler.State, why string) {
	c.mu.Lock()
	if lj.phase != phaseReleasing && lj.phase != phaseDone {
		lj.phase, lj.outcome, lj.reason = phaseReleasing, to, why
	}
	c.mu.Unlock()
}

// outcome decides what follows the driver's end: KILLED when a kill was
// requested (in this process or, durably, in the store), FINISHED, back to
// the queue without using a retry when the plan's agent was lost before
// the driver started, FAILED when Mesos lost too many launches, and
// otherwise a failed run: counted once per driver task, it sends the job
// back to the queue while the job has retries left.
func (c *Cluster) outcome(ctx context.Context, lj *liveJob, drv scheduler.DriverRecord) (scheduler.State, string, error) {
	c.mu.Lock()
	kill, lost, preempt := lj.kill, lj.lost, lj.preempt
	c.mu.Unlock()
	why := "driver " + drv.State
	if drv.Message != "" {
		why += ": " + drv.Message
	}
	if !kill {
		j, err := c.cfg.Store.GetJob(ctx, lj.job.ID)
		if err != nil {
			return "", "", fmt.Errorf("read job: %w", err)
		}
		c.mu.Lock()
		if j.KillRequested {
			kill, lj.kill = true, true
		}
		if preempt == "" && j.PreemptRequested != "" {
			preempt, lj.preempt = j.PreemptRequested, j.PreemptRequested
		}
		c.mu.Unlock()
	}
	switch {
	case kill:
		return scheduler.Killed, "killed on request (" + why + ")", nil
	case drv.State == mesos.TASK_FINISHED.String() && lost == "":
		return scheduler.Finished, why, nil
	case preempt != "":
		// Not a failed run: the application restarts from scratch.
		return scheduler.Queued, "preempted: " + preempt + " (" + why + ")", nil
	case lost != "" && !drv.Started:
		return scheduler.Queued, "agent " + c.AgentName(lost) + " was lost before the driver started (" + why + "); placing again", nil
	case lostBeforeStart(drv):
		return scheduler.Failed, fmt.Sprintf("Mesos lost %d launches of the driver before it started (last: %s)", drv.LostLaunches, why), nil
	case lost != "":
		why = "agent " + c.AgentName(lost) + " was lost (" + why + ")"
	}
	n, err := c.cfg.Store.CountFailedRun(ctx, lj.job.ID, drv.TaskID)
	if err != nil {
		return "", "", err
	}
	if n <= lj.job.Retries {
		return scheduler.Queued, why + fmt.Sprintf("; retry %d of %d", n, lj.job.Retries), nil
	}
	if lj.job.Retries > 0 {
		why += fmt.Sprintf(" (run %d of %d: no retry left)", n, lj.job.Retries+1)
	}
	return scheduler.Failed, why, nil
}

// reserve makes the plan's reservations, names the driver task, then moves
// the job to LAUNCHING. It first waits for every agent of the plan to be
// registered (an agent being powered on), at most AgentWait.
func (c *Cluster) reserve(ctx context.Context, lj *liveJob) error {
	c.mu.Lock()
	missing := ""
	for _, as := range lj.plan.Assignments {
		if !c.registeredLocked(as.AgentID) {
			missing = as.AgentID
			break
		}
	}
	if missing == "" {
		lj.waitFrom = time.Time{}
	} else if lj.waitFrom.IsZero() {
		lj.waitFrom = time.Now()
	}
	waited := time.Since(lj.waitFrom)
	c.mu.Unlock()
	if missing != "" {
		if c.cfg.AgentFailed != nil && c.cfg.AgentFailed(missing) {
			c.toReleasing(lj, scheduler.Queued, fmt.Sprintf("agent %s was not powered on; placing again without it", c.AgentName(missing)))
			return nil
		}
		if waited >= c.cfg.AgentWait {
			c.toReleasing(lj, scheduler.Queued, fmt.Sprintf("agent %s did not register with Mesos within %s; placing again", c.AgentName(missing), c.cfg.AgentWait))
			return nil
		}
		c.waitSignal(ctx, lj, min(time.Second, c.cfg.AgentWait-waited))
		return nil
	}
	expect := func() {
		if c.cfg.Framework == nil {
			return
		}
		agents := make([]string, 0, len(lj.plan.Assignments))
		for _, as := range lj.plan.Assignments {
			agents = append(agents, as.AgentID)
		}
		c.cfg.Framework.Expect(ctx, lj.job.ID, agents) // offers kept for the driver once reserved
	}
	// From offers, the reservations need the job's agents offered in the
	// job's role: offers kept in sparkpack's role would hold those very
	// resources, so the driver's offers are announced only once reserved.
	fromOffers := c.cfg.Reserver.FromOffers()
	if !fromOffers {
		expect()
	}
	err := c.cfg.Reserver.Reserve(ctx, lj.job, lj.plan)
	if errors.Is(err, ErrReserveConflict) {
		// Reserve rolled back what it made; the core plans again.
		c.toReleasing(lj, scheduler.Queued, "reservation refused ("+err.Error()+"); placing again")
		return nil
	}
	if err != nil {
		return fmt.Errorf("reserve: %w", err)
	}
	if fromOffers {
		expect()
	}
	_ = c.cfg.Store.Note(ctx, lj.job.ID, fmt.Sprintf("reserved %d executors on %d agents (quota limit set on role %s)",
		lj.plan.Executors(), len(lj.plan.Assignments), scheduler.Role(lj.job.ID)))
	c.kick()
	// The driver task is named before the job is LAUNCHING, so that the
	// stored driver record of a LAUNCHING job is always its own
	// generation's (a restart resumes exactly that launch).
	c.mu.Lock()
	named := lj.driver.TaskID != ""
	c.mu.Unlock()
	if !named {
		if _, err := c.nameDriver(ctx, lj, 0); err != nil {
			return err
		}
	}
	if err := c.report(ctx, lj.job.ID, scheduler.Launching, "reservations confirmed; launching the driver"); err != nil {
		return err
	}
	c.mu.Lock()
	if lj.phase == phaseReserving {
		lj.phase = phaseLaunching
	}
	c.mu.Unlock()
	return nil
}

// nameDriver durably names a new driver task: the next launch number of
// the job (numbers only grow, so every launch has its own task id),
// carrying lost launches of this application attempt.
func (c *Cluster) nameDriver(ctx context.Context, lj *liveJob, lost int) (scheduler.DriverRecord, error) {
	last, err := c.cfg.Store.Driver(ctx, lj.job.ID)
	if err != nil && !errors.Is(err, scheduler.ErrNotFound) {
		return scheduler.DriverRecord{}, err
	}
	c.mu.Lock()
	n := max(last.Attempt, lj.driver.Attempt) + 1
	c.mu.Unlock()
	rec := scheduler.DriverRecord{JobID: lj.job.ID, Attempt: n, TaskID: DriverTaskID(lj.job.ID, n), LostLaunches: lost}
	if err := c.cfg.Store.PutDriver(ctx, rec); err != nil {
		return scheduler.DriverRecord{}, err
	}
	c.mu.Lock()
	lj.driver, lj.queued = rec, false
	c.mu.Unlock()
	return rec, nil
}

// relaunch names a new driver task after Mesos lost the last launch before
// the driver started; the follower then queues it.
func (c *Cluster) relaunch(ctx context.Context, lj *liveJob) error {
	c.mu.Lock()
	old := lj.driver
	c.mu.Unlock()
	rec, err := c.nameDriver(ctx, lj, old.LostLaunches)
	if err != nil {
		return err
	}
	c.log.WithFields(logrus.Fields{"job": lj.job.ID, "lost_task": old.TaskID, "state": old.State, "task": rec.TaskID,
		"lost_launches": old.LostLaunches}).Info("Mesos lost the driver launch before it started; launching it again (no retry used)")
	return nil
}

// queueLaunch queues the named driver task's launch with the framework.
func (c *Cluster) queueLaunch(ctx context.Context, lj *liveJob) error {
	argv, err := sparksubmit.Command(lj.job, c.cfg.Submit)
	var fe *scheduler.FieldError
	if errors.As(err, &fe) {
		// Stored under older rules and refused by today's: never run it.
		c.toReleasing(lj, scheduler.Failed, "the driver command cannot be built: "+err.Error())
		return nil
	}
	if err != nil {
		return err
	}
	c.mu.Lock()
	rec := lj.driver
	lj.queued, lj.queuedAt = true, time.Now()
	c.mu.Unlock()
	drv := lj.job.DriverOrDefault()
	labels := map[string]string{LabelKey: lj.job.ID}
	if d := lj.job.EstimatedDurationSeconds; d > 0 {
		labels[DurationLabel] = strconv.FormatFloat(d, 'f', -1, 64)
	}
	jobID, taskID := lj.job.ID, rec.TaskID
	prefer := make([]string, 0, len(lj.plan.Assignments))
	for _, as := range lj.plan.Assignments {
		prefer = append(prefer, as.AgentID) // where the overlay kept room for the driver
	}
	c.cfg.Framework.Launch(ctx, &DriverLaunch{
		JobID: jobID, TaskID: taskID, CPUs: drv.Cores, MemMB: float64(drv.MemoryMB),
		Argv: argv, Env: lj.job.App.Environment, Labels: labels, Prefer: prefer,
		Sending: func(agentID string) error {
			c.mu.Lock()
			d := lj.driver
			if d.TaskID != taskID || d.Ended || (d.State != "" && d.State != LaunchSent) ||
				lj.kill || lj.preempt != "" || lj.lost != "" || lj.phase != phaseLaunching {
				c.mu.Unlock()
				return ErrLaunchWithdrawn
			}
			d.AgentID, d.State = agentID, LaunchSent
			lj.sending = true
			c.mu.Unlock()
			if err := c.cfg.Store.PutDriver(ctx, d); err != nil {
				c.mu.Lock()
				lj.sending = false
				c.mu.Unlock()
				lj.poke()
				return err
			}
			c.mu.Lock()
			if lj.driver.TaskID == taskID && !lj.driver.Ended {
				lj.driver = d
			}
			c.mu.Unlock()
			return nil
		},
		Sent: func(agentID string, err error) {
			c.mu.Lock()
			lj.sending = false
			c.mu.Unlock()
			lj.poke()
			if err == nil {
				_ = c.cfg.Store.Note(ctx, jobID, "driver task "+taskID+" launched on agent "+c.AgentName(agentID))
			}
		},
	})
	return nil
}

// giveBack waits until Spark's executors are gone, unreserves exactly what
// Mesos shows reserved for the job, clears its quota, then reports the
// outcome (when there is one to report).
func (c *Cluster) giveBack(ctx context.Context, lj *liveJob) error {
	c.cfg.Framework.CancelLaunch(lj.job.ID)
	c.mu.Lock()
	drv := lj.driver
	c.mu.Unlock()
	if drv.TaskID != "" && drv.State != "" && !drv.Ended {
		// The driver still runs (the core let go of the job): stop it, or
		// its executors would hold the reservations forever.
		if err := c.cfg.Framework.Kill(ctx, drv.TaskID, drv.AgentID); err != nil {
			return fmt.Errorf("kill driver %s: %w", drv.TaskID, err)
		}
	}
	if err := c.cfg.Reserver.Release(ctx, lj.job.ID); err != nil {
		return fmt.Errorf("release: %w", err)
	}
	c.mu.Lock()
	to, why := lj.outcome, lj.reason
	c.mu.Unlock()
	if to != "" {
		_ = c.cfg.Store.Note(ctx, lj.job.ID, "reservations released and quota cleared")
	}
	c.kick()
	if to != "" {
		if err := c.report(ctx, lj.job.ID, to, why); err != nil {
			// Right after a restart the core may not know the job yet:
			// try again, unless the job has ended meanwhile.
			if j, gerr := c.cfg.Store.GetJob(ctx, lj.job.ID); gerr == nil && j.State.Terminal() {
				c.log.WithError(err).WithFields(logrus.Fields{"job": lj.job.ID, "state": j.State}).Warn("the job ended meanwhile; its end was not reported again")
			} else {
				return fmt.Errorf("report %s: %w", to, err)
			}
		}
	}
	c.mu.Lock()
	lj.phase = phaseDone
	if c.jobs[lj.job.ID] == lj {
		delete(c.jobs, lj.job.ID) // the core has let go of it
	}
	c.mu.Unlock()
	if rep := c.reporter(); rep != nil {
		rep.ClusterChanged()
	}
	return nil
}

// ---- restart --------------------------------------------------------------

// resume follows again every job the store shows holding resources.
func (c *Cluster) resume(ctx context.Context) error {
	jobs, err := c.cfg.Store.Unfinished(ctx)
	if err != nil {
		return fmt.Errorf("resume jobs: %w", err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, j := range jobs {
		var ph phase
		switch j.State {
		case scheduler.Reserving:
			ph = phaseReserving
		case scheduler.Launching:
			ph = phaseLaunching
		case scheduler.Running:
			ph = phaseRunning
		default:
			continue
		}
		plan, err := c.cfg.Store.Plan(ctx, j.ID)
		if err != nil && !errors.Is(err, scheduler.ErrNotFound) {
			return fmt.Errorf("resume job %s: %w", j.ID, err)
		}
		drv, err := c.cfg.Store.Driver(ctx, j.ID)
		if err != nil && !errors.Is(err, scheduler.ErrNotFound) {
			return fmt.Errorf("resume job %s: %w", j.ID, err)
		}
		if ph == phaseReserving {
			// The driver is named only once the reservations are
			// confirmed: a record here is an earlier generation's.
			drv = scheduler.DriverRecord{}
		}
		c.startLocked(j, plan, ph, drv, nil) // with the job's durable kill and eviction requests
		if drv.TaskID != "" && drv.State != "" && !drv.Ended {
			c.cfg.Framework.Track(drv.TaskID, j.ID) // reconciled on subscription
		}
		c.log.WithFields(logrus.Fields{"job": j.ID, "state": j.State, "driver": drv.State, "task": drv.TaskID,
			"kill_requested": j.KillRequested, "preempt_requested": j.PreemptRequested}).Info("resuming job after restart")
	}
	return nil
}

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
	raw, err := c.cfg.Operator.GetAgents(ctx)
	if err != nil {
		return err
	}
	agents, warnings := AgentsFromMesos(raw, c.cfg.Prices)
	for _, w := range warnings {
		c.log.Debug(w)
	}
	statuses := StatusesFromMesos(raw, c.cfg.Prices)
	c.mu.Lock()
	c.statuses = statuses
	changed := !c.loaded || !sameCapacity(c.agents, agents)
	present := map[string]bool{}
	for _, a := range agents {
		present[a.ID] = true
		delete(c.missing, a.ID)
	}
	for _, a := range c.agents {
		if !present[a.ID] {
			c.missing[a.ID]++
		}
	}
	c.agents, c.loaded = agents, true
	c.index = nil
	c.indexLocked()
	if c.gone == nil {
		c.gone = map[string]Agent{}
	}
	for _, a := range agents {
		delete(c.gone, a.ID)
		c.seen[a.ID] = a
	}
	for id, a := range c.seen {
		if !present[id] {
			c.gone[id] = a
		}
	}
	for _, lj := range c.jobs {
		if lj.phase != phaseRunning && lj.phase != phaseLaunching || lj.lost != "" {
			continue
		}
		agents := make([]string, 0, len(lj.plan.Assignments)+1)
		for _, as := range lj.plan.Assignments {
			agents = append(agents, as.AgentID)
		}
		if lj.driver.AgentID != "" && !lj.driver.Ended {
			agents = append(agents, lj.driver.AgentID)
		}
		for _, id := range agents {
			if !present[id] && c.missing[id] > 0 {
				lj.lost = id
				c.log.WithFields(logrus.Fields{"job": lj.job.ID, "agent": c.nameLocked(id), "agent_id": id}).Warn("an agent of the job (executors or driver) is gone")
				lj.poke()
				break
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
		if err := c.refresh(ctx); err != nil && ctx.Err() == nil {
			c.log.WithError(err).Warn("GET_AGENTS failed; the cluster view may be stale (is the Mesos master reachable?)")
		}
		took := time.Since(last)
		period := max(c.cfg.Refresh, 8*took)
		kickGap := max(gap, 2*took)
		timer := time.NewTimer(period - took)
		select {
		case <-ctx.Done():
			timer.Stop()
			return
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

// sweepLoop releases reservations labelled for jobs that are over or unknown.
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

// sweep releases every labelled reservation whose job is not followed and
// not unfinished in the store.
func (c *Cluster) sweep(ctx context.Context) error {
	unfinished, err := c.cfg.Store.Unfinished(ctx)
	if err != nil {
		return err
	}
	keep := map[string]bool{}
	for _, j := range unfinished {
		keep[j.ID] = true
	}
	c.mu.Lock()
	for id := range c.jobs {
		keep[id] = true
	}
	c.mu.Unlock()
	orphans, err := c.cfg.Reserver.Orphans(ctx, func(id string) bool { return keep[id] })
	if err != nil {
		return err
	}
	sort.Strings(orphans)
	for _, id := range orphans {
		c.log.WithField("job", id).Warn("releasing reservations of a job that is over (left by a crash or a lost agent)")
		if err := c.cfg.Reserver.Release(ctx, id); err != nil {
			c.log.WithError(err).WithField("job", id).Warn("releasing leaked reservations failed; will try again")
		}
	}
	if len(orphans) > 0 {
		c.kick()
	}
	return nil
}

// ---- views ----------------------------------------------------------------

// AgentHolding is what one job holds on one agent.
type AgentHolding struct {
	JobID     string
	Executors int
	CPUs      float64
	MemMB     float64
}

// AgentState is an agent with what sparkpack's jobs hold on it.
type AgentState struct {
	Agent
	Holdings []AgentHolding
	// Gone is set for an agent seen before that GET_AGENTS no longer
	// lists (powered off, or lost).
	Gone bool
}

// Agents returns the agents as the core sees them (with plans in flight
// counted) and, per agent, the jobs holding resources there.
func (c *Cluster) Agents() []AgentState {
	c.mu.Lock()
	defer c.mu.Unlock()
	agents := c.overlayLocked()
	out := make([]AgentState, len(agents), len(agents)+len(c.gone))
	for i, a := range agents {
		out[i].Agent = a
		per := map[string]*AgentHolding{}
		var order []string
		for _, r := range a.Reservations {
			h := per[r.JobID]
			if h == nil {
				h = &AgentHolding{JobID: r.JobID}
				per[r.JobID] = h
				order = append(order, r.JobID)
			}
			h.CPUs += r.CPUs
			h.MemMB += r.MemMB
		}
		for _, id := range order {
			h := per[id]
			if lj := c.jobs[id]; lj != nil {
				for _, as := range lj.plan.Assignments {
					if as.AgentID == a.ID {
						h.Executors = as.Executors
					}
				}
			}
			out[i].Holdings = append(out[i].Holdings, *h)
		}
	}
	ids := make([]string, 0, len(c.gone))
	for id := range c.gone {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		a := c.gone[id]
		a.FreeCPUs, a.FreeMemMB, a.Reservations = 0, 0, nil
		out = append(out, AgentState{Agent: a, Gone: true})
	}
	return out
}
