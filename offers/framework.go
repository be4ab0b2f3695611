package offers

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/sirupsen/logrus"

	"github.com/sparkpack/sparkpack/internal/retry"
)

// FrameworkConfig configures the framework's subscription.
type FrameworkConfig struct {
	Name            string // default "sparkpack"
	Role            string // sparkpack's own role, where drivers run (default "sparkpack")
	User            string // default "root"
	Principal       string // sent in FrameworkInfo and for HTTP basic auth
	Hostname        string
	WebUIURL        string
	FailoverTimeout time.Duration // default one week
	// RefuseSeconds is the decline filter for offers sparkpack does not need (default 30 s).
	RefuseSeconds float64
	// OfferHold is the longest an unused offer is kept before it is declined (default 5 s).
	OfferHold time.Duration
	// OfferStock is how many unused offers with room for a driver are
	// kept (each at most OfferHold) beyond one per waiting launch, so that
	// the next driver starts at once; the others are declined with
	// RefuseSeconds as they come (default 4). On a cluster of thousands of
	// agents a REVIVE brings an offer from nearly every agent.
	OfferStock int
	// RoomWait bounds how long a launch waits for an offer on the agent
	// its room was kept on, when that is one of the job's own agents or
	// another active one (DriverLaunch.RoomKind), before it goes to
	// another agent, or to an idle one (default 5 s: the master offers the
	// agent again within an allocation cycle, about a second, after the
	// reservation, and a REVIVE goes out every second while a driver
	// waits).
	RoomWait time.Duration
	// ReconcileEvery is how often the driver tasks are reconciled besides
	// after every subscription (default 10 minutes).
	ReconcileEvery time.Duration
	// Observer, if set, hears about offers and launches (metrics).
	Observer Observer
}

// Observer hears what the framework does with offers; *metrics.Metrics
// implements it. Its methods must not block.
type Observer interface {
	// ObserveOffers: n offers arrived.
	ObserveOffers(n int)
	// ObserveDeclines: n offers were declined.
	ObserveDeclines(n int)
	// ObserveAccept: an offer was accepted, held that long since it arrived.
	ObserveAccept(held time.Duration)
	// ObserveDriverLaunch: an ACCEPT with a driver's LAUNCH was sent.
	ObserveDriverLaunch()
	// ObserveConnected: the framework runs and holds a subscription
	// (true) or lost it, or has none yet (false).
	ObserveConnected(connected bool)
	// ObserveStopped: the framework stopped running.
	ObserveStopped()
}

type nopObserver struct{}

func (nopObserver) ObserveOffers(int)           {}
func (nopObserver) ObserveDeclines(int)         {}
func (nopObserver) ObserveAccept(time.Duration) {}
func (nopObserver) ObserveDriverLaunch()        {}
func (nopObserver) ObserveConnected(bool)       {}
func (nopObserver) ObserveStopped()             {}

// IDStore keeps the framework id durably (package store implements it).
type IDStore interface {
	FrameworkID(ctx context.Context) (string, error)
	SetFrameworkID(ctx context.Context, id string) error
}

// StatusSink hears the driver's task status. It must persist what it
// learns before returning nil: only then is the update acknowledged, so a
// crash never turns a FINISHED into a LOST.
type StatusSink interface {
	DriverStatus(ctx context.Context, jobID string, st mesos.TaskStatus) error
}

// DriverLaunch asks for a driver task for a job.
type DriverLaunch struct {
	JobID  string
	TaskID string
	CPUs   float64
	MemMB  float64
	Argv   []string
	Env    map[string]string
	Labels map[string]string
	// Prefer lists the job's own agents: its reservations were just made
	// there, so offers there received before Launch are stale; offers
	// there are kept; they count as active (driverplace.go).
	Prefer []string
	// Room is the agent the cluster's driver-room overlay kept the
	// driver's room on ("" when none had room): offers there are taken
	// first, and kept while the launch waits.
	Room string
	// RoomKind is the kind of agent Room is. On the job's own agents
	// (RoomOnPlan) the launch waits, at most FrameworkConfig.RoomWait, for
	// the fresh offer there that follows the reservation rather than going
	// to another agent at once; on another active agent (RoomActive) it
	// waits as long for that agent's offer (chooseDriverOffer).
	RoomKind RoomKind
	// waitUntil ends that wait (set by Launch).
	waitUntil time.Time
	// Sending, if set, is called with the chosen agent just before the
	// ACCEPT with the LAUNCH goes out; it records that the launch may reach
	// Mesos from now on. An error keeps the launch queued (and the offer
	// held); ErrLaunchWithdrawn drops the launch (the job no longer wants
	// it: killed, withdrawn, placed again).
	Sending func(agentID string) error
	// Sent, if set, is called once the ACCEPT call has returned, with its
	// error (the launch is then queued again for the next offer).
	Sent func(agentID string, err error)
}

// ErrLaunchWithdrawn is what DriverLaunch.Sending returns when the launch
// must not go out any more.
var ErrLaunchWithdrawn = errors.New("driver launch withdrawn")

// Framework is sparkpack's Mesos scheduler: it holds the subscription,
// launches drivers from offers in its own role, declines and suppresses
// what it does not need, and passes task status on.
type Framework struct {
	cfg   FrameworkConfig
	Sched *SchedClient
	ids   IDStore
	sink  StatusSink
	log   logrus.FieldLogger

	mu      sync.Mutex
	offers  map[string]heldOffer // by offer id
	pending map[string]*DriverLaunch
	// expected are jobs whose driver launch comes soon (reserving):
	// offers are kept in stock for them.
	expected map[string]expectation
	// touched: when a reservation was last started on an agent. An offer
	// on that agent received before is about to be rescinded (the master
	// takes the resources of a reserve out of outstanding offers): a
	// launch from it would be dropped ("offer no longer valid").
	touched map[string]time.Time
	// yielding: agents being reserved from offers in a job's role (offer
	// mode): sparkpack's role must not hold their offers meanwhile, or the
	// job's role is never offered the resources. Counted per job.
	yielding   map[string]int
	taskJob    map[string]string // task id -> job id
	suppressed bool
	connected  bool
	// removed: the master refused the stored framework id because it
	// removed the framework (its failover timeout passed, or an operator
	// tore it down); the next Info forgets the id and subscribes anew.
	removed   bool
	lastOffer time.Time
	revivedAt time.Time
	// lastExpect is when the last launch was announced; trimLater is set
	// when the stock was not trimmed because announcements were still
	// coming in (see expectBurst).
	lastExpect time.Time
	trimLater  bool
	// extraRoles are job roles added for offer-mode reservations, with
	// the handler that gets their offers and operation updates.
	extraRoles map[string]RoleHandler
	// rolesMu serialises UPDATE_FRAMEWORK calls from reading the roles to
	// the master's answer, so that the last call sent carries the last
	// role set: unserialised, two jobs ending together could send their
	// updates out of order, and the stale one left an ended job's role
	// on the framework.
	rolesMu sync.Mutex
	// rsMu serialises REVIVE and SUPPRESS calls.
	rsMu sync.Mutex
	// agentRooms, if set, reports the given agents as the cluster's
	// overlay shows them (SetAgentRooms).
	agentRooms func(agentIDs []string) []AgentRoom
	// updates, while Run runs, queues task status updates for
	// recordUpdates; nil otherwise (Event then handles them itself).
	updates *updateQueue
}

// updateQueue holds task status updates in the order they came.
type updateQueue struct {
	q    []mesos.TaskStatus
	wake chan struct{}
}

type heldOffer struct {
	offer mesos.Offer
	since time.Time
	// cpus and mem a driver may take from it (unreserved, in
	// sparkpack's role), computed once when it arrives.
	cpus, mem float64
	// active: its agent held running work or reservations when it
	// arrived (SetAgentRooms): the stock keeps such offers first.
	active bool
}

// NewFramework builds the framework on a scheduler API client.
func NewFramework(cfg FrameworkConfig, sched *SchedClient, ids IDStore, sink StatusSink, log logrus.FieldLogger) *Framework {
	if cfg.Name == "" {
		cfg.Name = "sparkpack"
	}
	if cfg.Role == "" {
		cfg.Role = "sparkpack"
	}
	if cfg.User == "" {
		cfg.User = "root"
	}
	if cfg.FailoverTimeout <= 0 {
		cfg.FailoverTimeout = 7 * 24 * time.Hour
	}
	if cfg.RefuseSeconds <= 0 {
		cfg.RefuseSeconds = 30
	}
	if cfg.OfferHold <= 0 {
		cfg.OfferHold = 5 * time.Second
	}
	if cfg.OfferStock <= 0 {
		cfg.OfferStock = 4
	}
	if cfg.RoomWait <= 0 {
		cfg.RoomWait = 5 * time.Second
	}
	if cfg.ReconcileEvery <= 0 {
		cfg.ReconcileEvery = 10 * time.Minute
	}
	if cfg.Observer == nil {
		cfg.Observer = nopObserver{}
	}
	return &Framework{cfg: cfg, Sched: sched, ids: ids, sink: sink, log: log,
		offers: map[string]heldOffer{}, pending: map[string]*DriverLaunch{}, expected: map[string]expectation{}, touched: map[string]time.Time{}, yielding: map[string]int{}, taskJob: map[string]string{}}
}

// Info returns the FrameworkInfo to subscribe with: MULTI_ROLE,
// RESERVATION_REFINEMENT, checkpointing, a week's failover timeout and the
// stored framework id. It fails when the stored id cannot be read:
// subscribing without it would register a second framework, and the
// first one's drivers would run on out of sparkpack's sight.
func (f *Framework) Info(ctx context.Context) (mesos.FrameworkInfo, error) {
	checkpoint := true
	fo := f.cfg.FailoverTimeout.Seconds()
	info := mesos.FrameworkInfo{
		User:            f.cfg.User,
		Name:            f.cfg.Name,
		Roles:           f.roles(),
		Checkpoint:      &checkpoint,
		FailoverTimeout: &fo,
		Capabilities: []mesos.FrameworkInfo_Capability{
			{Type: mesos.FrameworkInfo_Capability_MULTI_ROLE},
			{Type: mesos.FrameworkInfo_Capability_RESERVATION_REFINEMENT},
			{Type: mesos.FrameworkInfo_Capability_PARTITION_AWARE},
		},
	}
	if f.cfg.Principal != "" {
		p := f.cfg.Principal
		info.Principal = &p
	}
	if f.cfg.Hostname != "" {
		h := f.cfg.Hostname
		info.Hostname = &h
	}
	if f.cfg.WebUIURL != "" {
		u := f.cfg.WebUIURL
		info.WebUiURL = &u
	}
	f.mu.Lock()
	removed := f.removed
	f.mu.Unlock()
	if removed {
		// Mesos will never take this id again: its tasks were killed when
		// the framework was removed. Subscribing as a new framework lets
		// reconciliation end (and retry) the jobs whose drivers were lost;
		// the reservations, held by the jobs' roles, are untouched.
		if err := f.ids.SetFrameworkID(ctx, ""); err != nil {
			return info, fmt.Errorf("forget the framework id Mesos removed: %w", err)
		}
		f.mu.Lock()
		f.removed = false
		f.mu.Unlock()
		f.log.Error("Mesos removed sparkpack's framework (its failover timeout passed, or an operator tore it down) and killed its drivers; subscribing as a new framework")
	}
	id, err := f.ids.FrameworkID(ctx)
	if err != nil {
		return info, fmt.Errorf("read the stored framework id (needed to subscribe as the same framework): %w", err)
	}
	if id != "" {
		info.ID = &mesos.FrameworkID{Value: id}
	}
	return info, nil
}

// Run subscribes until ctx ends, holding offers no longer than OfferHold
// and reconciling the driver tasks every ReconcileEvery.
func (f *Framework) Run(ctx context.Context, o RunOptions) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	f.cfg.Observer.ObserveConnected(false)
	defer f.cfg.Observer.ObserveStopped()
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); f.expireOffers(ctx) }()
	go func() { defer wg.Done(); f.recordUpdates(ctx) }()
	err := f.Sched.Run(ctx, func() (mesos.FrameworkInfo, error) { return f.Info(ctx) }, f, o)
	cancel()
	wg.Wait()
	return err
}

// recordUpdates records and acknowledges the task status updates Event
// queues, in their order, until ctx ends; those still queued then are
// left unacknowledged (the master sends them again). Recording one (a
// store write) and acknowledging it (a call the master may answer late
// while it allocates) took the event loop 0.15-0.3 s per update at
// 20,000 agents: offers then waited behind a driver's status updates for
// tens of seconds while drivers waited for those offers.
func (f *Framework) recordUpdates(ctx context.Context) {
	uq := &updateQueue{wake: make(chan struct{}, 1)}
	f.mu.Lock()
	f.updates = uq
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		f.updates = nil
		f.mu.Unlock()
	}()
	for {
		f.mu.Lock()
		batch := uq.q
		uq.q = nil
		f.mu.Unlock()
		for _, st := range batch {
			if ctx.Err() != nil {
				return
			}
			f.handleUpdate(ctx, st)
		}
		select {
		case <-ctx.Done():
			return
		case <-uq.wake:
		}
	}
}

// queueUpdate hands st to recordUpdates; false when it does not run.
func (f *Framework) queueUpdate(st mesos.TaskStatus) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.updates == nil {
		return false
	}
	f.updates.q = append(f.updates.q, st)
	select {
	case f.updates.wake <- struct{}{}:
	default:
	}
	return true
}

// Connected reports whether a subscription is open.
func (f *Framework) Connected() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.connected
}

// Subscribed implements Handler: store the id, then reconcile every known
// driver task explicitly and all tasks implicitly. The observer hears of
// the subscription once its id is stored: whoever sees "connected" (the
// health check, a test) may rely on the id being durable.
func (f *Framework) Subscribed(ctx context.Context, ev *scheduler.Event_Subscribed) {
	f.mu.Lock()
	f.connected = true
	f.offers = map[string]heldOffer{}
	f.suppressed = false
	tasks := make([]string, 0, len(f.taskJob))
	for t := range f.taskJob {
		tasks = append(tasks, t)
	}
	f.mu.Unlock()
	// Until it is stored, a restart would register a second framework.
	if err := retry.UntilDone(ctx, f.log, "storing the framework id", func() error {
		return f.ids.SetFrameworkID(ctx, ev.FrameworkID.Value)
	}); err != nil {
		return // ctx ended
	}
	f.cfg.Observer.ObserveConnected(true)
	f.Reconcile(ctx, tasks)
	f.reviveOrSuppress(ctx)
}

// Track tells the framework that a task belongs to a job (after a restart,
// from the persisted jobs) so that its updates reach the sink.
func (f *Framework) Track(taskID, jobID string) {
	f.mu.Lock()
	f.taskJob[taskID] = jobID
	f.mu.Unlock()
}

// Reconcile asks for the status of the given tasks, then of all tasks.
func (f *Framework) Reconcile(ctx context.Context, taskIDs []string) {
	if len(taskIDs) > 0 {
		rc := &scheduler.Call_Reconcile{}
		for _, t := range taskIDs {
			rc.Tasks = append(rc.Tasks, scheduler.Call_Reconcile_Task{TaskID: mesos.TaskID{Value: t}})
		}
		if err := f.Sched.Call(ctx, &scheduler.Call{Type: scheduler.Call_RECONCILE, Reconcile: rc}); err != nil {
			f.log.WithError(err).WithField("retry_in", f.cfg.ReconcileEvery.String()).Warn("explicit reconciliation failed; it is retried at the next reconciliation (and at every resubscription); if it keeps failing, check the Mesos master")
		}
	}
	if err := f.Sched.Call(ctx, &scheduler.Call{Type: scheduler.Call_RECONCILE, Reconcile: &scheduler.Call_Reconcile{}}); err != nil {
		f.log.WithError(err).WithField("retry_in", f.cfg.ReconcileEvery.String()).Warn("implicit reconciliation failed; it is retried at the next reconciliation (and at every resubscription); if it keeps failing, check the Mesos master")
	}
}

// Disconnected implements Handler: outstanding offers are void.
func (f *Framework) Disconnected(err error) {
	f.cfg.Observer.ObserveConnected(false)
	f.mu.Lock()
	f.connected = false
	f.offers = map[string]heldOffer{}
	if FrameworkRemoved(err) {
		f.removed = true
	}
	f.mu.Unlock()
}

// FrameworkRemoved reports whether err is the master refusing a
// subscription because it removed the framework: Mesos answers a
// SUBSCRIBE with the id of a framework it removed (failover timeout
// passed, or torn down) with an ERROR event "Framework has been removed"
// (the real 1.12 master and the emulator alike), and will never take that
// id again.
func FrameworkRemoved(err error) bool {
	return err != nil && errors.Is(err, errRefused) && strings.Contains(err.Error(), "has been removed")
}

// Event implements Handler.
func (f *Framework) Event(ctx context.Context, ev *scheduler.Event) {
	switch ev.GetType() {
	case scheduler.Event_OFFERS:
		if ev.Offers != nil {
			f.handleOffers(ctx, ev.Offers.Offers)
		}
	case scheduler.Event_RESCIND:
		if ev.Rescind != nil {
			f.mu.Lock()
			delete(f.offers, ev.Rescind.OfferID.Value)
			f.mu.Unlock()
		}
	case scheduler.Event_UPDATE:
		if ev.Update != nil && !f.queueUpdate(ev.Update.Status) {
			f.handleUpdate(ctx, ev.Update.Status)
		}
	case scheduler.Event_UPDATE_OPERATION_STATUS:
		if ev.UpdateOperationStatus != nil {
			st := ev.UpdateOperationStatus.Status
			f.mu.Lock()
			var handlers []RoleHandler
			for _, h := range f.extraRoles {
				handlers = append(handlers, h)
			}
			f.mu.Unlock()
			for _, h := range handlers {
				h.OperationStatus(st)
			}
			// Only updates with a uuid are acknowledged, by their
			// operation id (none comes for an operation sent without one).
			if st.UUID != nil && st.AgentID != nil && st.OperationID != nil {
				ack := &scheduler.Call_AcknowledgeOperationStatus{AgentID: st.AgentID, ResourceProviderID: st.ResourceProviderID, UUID: st.UUID.Value, OperationID: *st.OperationID}
				_ = f.Sched.Call(ctx, &scheduler.Call{Type: scheduler.Call_ACKNOWLEDGE_OPERATION_STATUS, AcknowledgeOperationStatus: ack})
			}
		}
	case scheduler.Event_FAILURE:
		if ev.Failure != nil && ev.Failure.AgentID != nil && ev.Failure.ExecutorID == nil {
			f.log.WithField("agent", ev.Failure.AgentID.Value).Warn("Mesos reports an agent lost")
		}
	}
}

func (f *Framework) handleUpdate(ctx context.Context, st mesos.TaskStatus) {
	f.mu.Lock()
	jobID, ok := f.taskJob[st.TaskID.Value]
	f.mu.Unlock()
	if !ok {
		jobID = jobOfTask(st.TaskID.Value)
	}
	if jobID != "" && f.sink != nil {
		if err := f.sink.DriverStatus(ctx, jobID, st); err != nil {
			// Not acknowledged: Mesos re-sends it, and we try again.
			f.log.WithError(err).WithFields(logrus.Fields{"job": jobID, "task": st.TaskID.Value}).Warn("could not record a task status; leaving it unacknowledged")
			return
		}
	}
	if isTerminal(st.State) || st.GetState() == mesos.TASK_UNKNOWN {
		f.mu.Lock()
		delete(f.taskJob, st.TaskID.Value)
		f.mu.Unlock()
	}
	// Only updates that carry a uuid are acknowledged (reconciliation answers carry none).
	if len(st.UUID) > 0 && st.AgentID != nil {
		ack := &scheduler.Call_Acknowledge{AgentID: *st.AgentID, TaskID: st.TaskID, UUID: st.UUID}
		if err := f.Sched.Call(ctx, &scheduler.Call{Type: scheduler.Call_ACKNOWLEDGE, Acknowledge: ack}); err != nil {
			f.log.WithError(err).Warn("acknowledge failed; Mesos will re-send the update")
		}
	}
}

func isTerminal(s *mesos.TaskState) bool {
	if s == nil {
		return false
	}
	switch *s {
	case mesos.TASK_FINISHED, mesos.TASK_FAILED, mesos.TASK_KILLED, mesos.TASK_LOST, mesos.TASK_ERROR,
		mesos.TASK_DROPPED, mesos.TASK_GONE, mesos.TASK_GONE_BY_OPERATOR:
		return true
	}
	return false
}

// DriverTaskID names the driver task of a job's attempt; jobOfTask reverses it.
func DriverTaskID(jobID string, attempt int) string {
	return "sparkpack-driver-" + jobID + "-" + strconv.Itoa(attempt)
}

func jobOfTask(taskID string) string {
	rest, ok := strings.CutPrefix(taskID, "sparkpack-driver-")
	if !ok || len(rest) < 37 {
		return ""
	}
	return rest[:36]
}
