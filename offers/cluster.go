package offers

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/sparkpack/sparkpack/internal/failurelog"

	"github.com/sparkpack/sparkpack/offers/lifecycle"
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
	// ReportRan is Report of the end of a job whose driver ran though the
	// job was never reported RUNNING, or of RUNNING with the run's start
	// (run.Ran; scheduler.Core.ReportRan).
	ReportRan(ctx context.Context, id string, to scheduler.State, reason string, run scheduler.RunStart) error
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
const LaunchSent = lifecycle.LaunchSent

// DurationLabel is the driver task label carrying the job's estimated
// duration in seconds. Real Mesos ignores it; the emulator
// (mesossim) runs the simulated Spark driver that long.
const DurationLabel = "sparkpack.sim/duration-seconds"

// ClusterConfig configures the Mesos cluster adapter.
type ClusterConfig struct {
	Operator *Operator
	// Reserver makes the reservations: *Reserver (operator API, the
	// default) or *OfferReserver (from offers), possibly wrapped.
	Reserver  Pinner
	Framework *Framework
	Store     JobStore
	// Prices gives the hourly price of agents without a price attribute.
	Prices PriceTable
	// Submit holds the cluster-wide parts of the spark-submit command
	// (the Mesos master URL Spark connects to, paths, images).
	Submit sparksubmit.Options
	// SparkMaster, if set, gives Submit.Master at each launch: the
	// leading master at that moment (Endpoint.SparkMaster).
	SparkMaster func() string
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
	// placed again without it (default 5 minutes). An agent whose machine
	// came back under a new agent id is not waited for (replaced.go).
	AgentWait time.Duration
	// Unavailable, if set, names agents that new plans must not use
	// (power management is taking them out of service): the snapshot
	// shows them with nothing free.
	Unavailable func(agentID string) bool
	// AgentFailed, if set, reports that an agent a plan waits for will not
	// come (its power-on was given up): the job is placed again at once.
	AgentFailed func(agentID string) bool
	Log         logrus.FieldLogger
	// OnChange, if set, is called whenever Version moves, with the
	// adapter's lock held: it must return at once and not call the
	// adapter (a non-blocking kick of whoever rebuilds views from Agents).
	OnChange func()
}

// liveJob is a job the adapter is making real: its lifecycle state (read
// and stepped under Cluster.mu) and the actions decided by events from
// other goroutines, which its follower performs.
type liveJob struct {
	st      lifecycle.State
	pending []lifecycle.Action
	signal  chan struct{}
	done    chan struct{} // closed when the follower ends
	stop    context.CancelFunc
	// stepFails remembers the job's failing steps (its follower alone
	// touches it): a step retried every second while the master is away
	// is logged once, then every stepFailLogEvery, not at every try.
	stepFails failurelog.State
}

// stepFailLogEvery is how often a job's step that keeps failing is logged
// again (per job: with many jobs waiting on a master that is away, one
// line each every few minutes).
const stepFailLogEvery = 5 * time.Minute

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
// executors are gone, unreserve, quota cleared, the final state. What to do
// next is decided by the pure state machine of package lifecycle; the
// Cluster performs its actions (follow.go). Each step is written to the
// store before the next, so a restart resumes (Start reads the unfinished
// jobs) and a crash leaks nothing.
type Cluster struct {
	cfg ClusterConfig
	log logrus.FieldLogger

	repMu sync.RWMutex
	rep   Reporter

	// refreshFails remembers GET_AGENTS failures, so that a master away
	// for an hour costs a handful of warnings, not one a refresh (only
	// Start, then refreshLoop, touch it).
	refreshFails failurelog.State

	mu       sync.Mutex
	ctx      context.Context
	agents   []Agent
	index    map[string]int // agent id -> position in agents
	statuses []AgentStatus  // every agent GET_AGENTS lists, whatever its state
	// readAt: when the GET_AGENTS call of statuses was sent; readErr: the
	// last call's error, nil once one answers (AgentsRead).
	readAt  time.Time
	readErr error
	// readEvery: the refresh loop's spacing of periodic reads after its
	// last read (readSpacing; ReadEvery).
	readEvery time.Duration
	// recovered: the agents GET_AGENTS lists in recovered_agents (a master
	// that failed over, before they re-register), not in statuses.
	recovered []string
	loaded    bool
	missing   map[string]int // agent id -> > 0 while an agent a refresh listed is missing (only > 0 is read)
	// heldRecovered: agents a refresh listed that a later one lists only
	// in recovered_agents (a master failover; they re-register within
	// agent_reregister_timeout): not missing, so no job hears it lost,
	// until a refresh lists them neither as agents nor as recovered.
	heldRecovered map[string]bool
	seen          map[string]Agent
	gone          map[string]Agent // seen before, not in GET_AGENTS now (off or lost)

	// refreshes counts refreshes; firstAt and lastAt are, by agent id, the
	// refresh that first and last listed it active (refresh: a gone
	// agent's hostname taken by an agent first listed after it went).
	refreshes       uint64
	firstAt, lastAt map[string]uint64
	// replaced: agent ids whose machine came back under a new agent id,
	// that a plan may still name (replaced.go).
	replaced map[string]replacement

	jobs     map[string]*liveJob
	wg       sync.WaitGroup
	kickCh   chan struct{}
	sweeping bool
	// version counts changes of what the snapshot and the views show (a
	// refresh, a job's step, a job started or forgotten); the views and
	// the overlay are built once per version (clusterviews.go).
	version uint64
	viewVer uint64
	view    []AgentState
	// snapBase is Snapshot(snapOf), snapOf the agents of the last refresh;
	// snapHold its holdings (what each job holds per agent, for the cost
	// meter's attribution).
	snapBase []placement.Agent
	snapHold map[string][]placement.Holding
	snapOf   []Agent
	// ov is the overlay built at version ovVer over the agents ovOf
	// (overlayPatchLocked): every reader of one version shares it.
	ov    *overlay
	ovVer uint64
	ovOf  []Agent

	// converted: the agents of the last refresh by sum, reused by the next
	// (convertReusing); convMu serialises refreshes' use of it.
	convMu    sync.Mutex
	converted map[uint64]convertedAgent
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
	c := &Cluster{cfg: cfg, log: cfg.Log.WithField("component", "mesos-cluster"),
		jobs: map[string]*liveJob{}, missing: map[string]int{}, heldRecovered: map[string]bool{}, seen: map[string]Agent{}, gone: map[string]Agent{}, kickCh: make(chan struct{}, 1)}
	if cfg.Framework != nil {
		// A driver that cannot go where its room was kept goes to an
		// active agent with room to spare rather than an idle one, and
		// never takes room the overlay keeps for others (driverplace.go).
		cfg.Framework.SetAgentRooms(c.agentRooms)
	}
	return c
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
	// see the cluster at once (refreshLoop keeps trying if it fails),
	// when the master is known. With zk:// and no leader named yet, the
	// look would wait for ZooKeeper (up to 15 s for one that accepts and
	// never answers) and hold the term's start, the scheduler and its
	// views with it: the refresh loop makes it in the background instead
	// (a scheduling pass before its answer fails at once and is retried,
	// Snapshot).
	if c.cfg.Operator.ep.LeaderKnown() {
		c.noteRefresh(c.refresh(ctx), true)
	} else {
		c.log.WithField("mesos_master", c.cfg.Operator.ep.Masters()).Info("waiting for ZooKeeper to name the leading Mesos master; " +
			"the API and dashboard serve meanwhile, jobs are placed once GET_AGENTS answers (check that ZooKeeper answers and the masters register under this path)")
	}
	c.wg.Add(2)
	go func() { defer c.wg.Done(); c.refreshLoop(ctx) }()
	go func() { defer c.wg.Done(); c.sweepLoop(ctx) }()
	return nil
}

// Wait returns when every goroutine of the adapter has ended (after the
// context given to Start is done).
func (c *Cluster) Wait() { c.wg.Wait() }

func (c *Cluster) Apply(ctx context.Context, job scheduler.Job, plan placement.Plan) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ctx == nil {
		return errors.New("mesos cluster adapter not started")
	}
	prev := c.jobs[job.ID]
	c.startLocked(job, plan, lifecycle.Reserving, scheduler.DriverRecord{}, prev)
	return nil
}

// startLocked registers a live job and starts its follower, which first
// waits for the previous generation of the same job (a retry) to be gone.
func (c *Cluster) startLocked(job scheduler.Job, plan placement.Plan, ph lifecycle.Phase, drv scheduler.DriverRecord, prev *liveJob) *liveJob {
	ctx, cancel := context.WithCancel(c.ctx)
	lj := &liveJob{st: lifecycle.New(c.lifecycleConfig(), job, plan, ph, drv, time.Now()),
		signal: make(chan struct{}, 1), done: make(chan struct{}), stop: cancel}
	c.jobs[job.ID] = lj
	c.changedLocked()
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
		// (Releasing from the start: nothing to report.)
		c.startLocked(scheduler.Job{Spec: scheduler.Spec{ID: jobID}}, placement.Plan{}, lifecycle.Releasing, scheduler.DriverRecord{}, nil)
		return nil
	}
	if lj.st.Phase == lifecycle.Done {
		delete(c.jobs, jobID)
		c.changedLocked()
		return nil
	}
	// Giving back already (the core hearing the outcome), or the core let
	// go of a job the adapter still follows.
	c.postLocked(lj, lifecycle.Event{Kind: lifecycle.EvRelease})
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
	c.postLocked(lj, lifecycle.Event{Kind: lifecycle.EvKill})
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
	if lj == nil || lj.st.Phase == lifecycle.Releasing || lj.st.Phase == lifecycle.Done {
		return fmt.Errorf("preempt job %s: %w", jobID, scheduler.ErrNotFound)
	}
	c.postLocked(lj, lifecycle.Event{Kind: lifecycle.EvPreempt, Reason: reason})
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
		var ph lifecycle.Phase
		switch j.State {
		case scheduler.Reserving:
			ph = lifecycle.Reserving
		case scheduler.Launching:
			ph = lifecycle.Launching
		case scheduler.Running:
			ph = lifecycle.Running
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
		if ph == lifecycle.Reserving {
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

// report tells the core (with the run of a driver that ran from
// LAUNCHING, or the start of the run a RUNNING report reports: run.Ran);
// a job already in that state counts as told.
func (c *Cluster) report(ctx context.Context, id string, to scheduler.State, reason string, run scheduler.RunStart) error {
	rep := c.reporter()
	if rep == nil {
		return errors.New("mesos cluster adapter has no reporter")
	}
	var err error
	if run.Ran {
		err = rep.ReportRan(ctx, id, to, reason, run)
	} else {
		err = rep.Report(ctx, id, to, reason)
	}
	if err == nil {
		return nil
	}
	if j, gerr := c.cfg.Store.GetJob(ctx, id); gerr == nil && j.State == to {
		return nil
	}
	return err
}

// lifecycleConfig is what the lifecycle machine decides with.
func (c *Cluster) lifecycleConfig() lifecycle.Config {
	return lifecycle.Config{FromOffers: c.cfg.Reserver != nil && c.cfg.Reserver.FromOffers(), Retry: c.cfg.Retry,
		LaunchTimeout: c.cfg.LaunchTimeout, AgentWait: c.cfg.AgentWait, MaxLostLaunches: maxLostLaunches}
}
