package offers

import (
	"context"
	"errors"
	"fmt"
	"sort"
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
	// Prefer lists agents to launch on when an offer there has room (the
	// job's own agents, where the cluster kept room for the driver).
	Prefer []string
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
	lastOffer  time.Time
	revivedAt  time.Time
	// extraRoles are job roles added for offer-mode reservations, with
	// the handler that gets their offers and operation updates.
	extraRoles map[string]RoleHandler
	// rsMu serialises REVIVE and SUPPRESS calls.
	rsMu sync.Mutex
}

type heldOffer struct {
	offer mesos.Offer
	since time.Time
	// cpus and mem a driver may take from it (unreserved, in
	// sparkpack's role), computed once when it arrives.
	cpus, mem float64
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
	wg.Add(1)
	go func() { defer wg.Done(); f.expireOffers(ctx) }()
	err := f.Sched.Run(ctx, func() (mesos.FrameworkInfo, error) { return f.Info(ctx) }, f, o)
	cancel()
	wg.Wait()
	return err
}

// Connected reports whether a subscription is open.
func (f *Framework) Connected() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.connected
}

// Subscribed implements Handler: store the id, then reconcile every known
// driver task explicitly and all tasks implicitly.
func (f *Framework) Subscribed(ctx context.Context, ev *scheduler.Event_Subscribed) {
	f.cfg.Observer.ObserveConnected(true)
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
			f.log.WithError(err).Warn("explicit reconciliation failed")
		}
	}
	if err := f.Sched.Call(ctx, &scheduler.Call{Type: scheduler.Call_RECONCILE, Reconcile: &scheduler.Call_Reconcile{}}); err != nil {
		f.log.WithError(err).Warn("implicit reconciliation failed")
	}
}

// Disconnected implements Handler: outstanding offers are void.
func (f *Framework) Disconnected(err error) {
	f.cfg.Observer.ObserveConnected(false)
	f.mu.Lock()
	f.connected = false
	f.offers = map[string]heldOffer{}
	f.mu.Unlock()
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
		if ev.Update != nil {
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

// RoleHandler receives what Mesos sends for a job role the framework took
// on for offer-mode reservations. Offer returns the operations to ACCEPT
// the offer with (none: it is declined). Both are called from the event
// goroutine and must not block.
type RoleHandler interface {
	Offer(o mesos.Offer) []mesos.Offer_Operation
	OperationStatus(st mesos.OperationStatus)
}

func (f *Framework) roles() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := []string{f.cfg.Role}
	for r := range f.extraRoles {
		out = append(out, r)
	}
	sort.Strings(out[1:])
	return out
}

// AddRole subscribes the framework to a job role too (UPDATE_FRAMEWORK),
// sending that role's offers and operation updates to h, and revives it.
func (f *Framework) AddRole(ctx context.Context, role string, h RoleHandler) error {
	f.mu.Lock()
	if f.extraRoles == nil {
		f.extraRoles = map[string]RoleHandler{}
	}
	f.extraRoles[role] = h
	f.mu.Unlock()
	if err := f.updateFramework(ctx); err != nil {
		return err
	}
	return f.Sched.Call(ctx, &scheduler.Call{Type: scheduler.Call_REVIVE, Revive: &scheduler.Call_Revive{Roles: []string{role}}})
}

// Yield makes sparkpack's role give back, and not hold, offers on agents
// while a job's role reserves there from offers (offer mode); the returned
// function ends it.
func (f *Framework) Yield(ctx context.Context, agents []string) (done func()) {
	f.mu.Lock()
	for _, a := range agents {
		f.yielding[a]++
	}
	f.mu.Unlock()
	f.declineUnneeded(ctx, true)
	return func() {
		f.mu.Lock()
		for _, a := range agents {
			if f.yielding[a]--; f.yielding[a] <= 0 {
				delete(f.yielding, a)
			}
		}
		f.mu.Unlock()
	}
}

// RemoveRole drops a job role from the framework (UPDATE_FRAMEWORK).
func (f *Framework) RemoveRole(ctx context.Context, role string) error {
	f.mu.Lock()
	delete(f.extraRoles, role)
	f.mu.Unlock()
	return f.updateFramework(ctx)
}

func (f *Framework) updateFramework(ctx context.Context) error {
	info, _ := f.Info(ctx) // without the stored id, the subscribed one
	if info.ID == nil {
		id := f.Sched.FrameworkID()
		if id == "" {
			return errors.New("not subscribed to Mesos yet")
		}
		info.ID = &mesos.FrameworkID{Value: id}
	}
	return f.Sched.Call(ctx, &scheduler.Call{Type: scheduler.Call_UPDATE_FRAMEWORK, UpdateFramework: &scheduler.Call_UpdateFramework{FrameworkInfo: info}})
}

// roleOffers hands offers of job roles to their handlers; it returns the
// offers of sparkpack's own role. received is when they arrived.
func (f *Framework) roleOffers(ctx context.Context, offers []mesos.Offer, received time.Time) []mesos.Offer {
	var own []mesos.Offer
	var decline []mesos.OfferID
	for _, o := range offers {
		role := f.cfg.Role
		if o.AllocationInfo != nil {
			role = o.AllocationInfo.GetRole()
		}
		if role == f.cfg.Role {
			own = append(own, o)
			continue
		}
		f.mu.Lock()
		h := f.extraRoles[role]
		f.mu.Unlock()
		var ops []mesos.Offer_Operation
		if h != nil {
			ops = h.Offer(o)
		}
		if len(ops) == 0 {
			decline = append(decline, o.ID)
			continue
		}
		refuse := 1.0
		call := &scheduler.Call{Type: scheduler.Call_ACCEPT, Accept: &scheduler.Call_Accept{
			OfferIDs: []mesos.OfferID{o.ID}, Operations: ops, Filters: &mesos.Filters{RefuseSeconds: &refuse}}}
		if err := f.Sched.Call(ctx, call); err != nil {
			f.log.WithError(err).WithField("role", role).Warn("ACCEPT in a job role failed; it will be retried with the next offer")
		} else {
			f.cfg.Observer.ObserveAccept(time.Since(received))
		}
	}
	if len(decline) > 0 {
		refuse := 1.0
		if err := f.Sched.Call(ctx, &scheduler.Call{Type: scheduler.Call_DECLINE, Decline: &scheduler.Call_Decline{OfferIDs: decline, Filters: &mesos.Filters{RefuseSeconds: &refuse}}}); err == nil {
			f.cfg.Observer.ObserveDeclines(len(decline))
		}
	}
	return own
}

// Launch queues a driver launch; it is sent with the next offer in
// sparkpack's role that holds the driver's cpus and memory.
//
// The task is reconciled (tracked) only once its ACCEPT was sent: Mesos
// cannot know a task before, and an answer saying so would be noise.
func (f *Framework) Launch(ctx context.Context, l *DriverLaunch) {
	now := time.Now()
	f.mu.Lock()
	f.pending[l.JobID] = l
	delete(f.expected, l.JobID)
	// The job's reservations were just made on its agents: offers there
	// received until now may be rescinded for them (and the RESCIND not
	// read yet); only later offers there are used.
	for _, a := range l.Prefer {
		f.touched[a] = now
	}
	f.mu.Unlock()
	f.tryLaunch(ctx)              // an offer kept in stock may have room
	f.declineUnneeded(ctx, false) // and those on the job's agents are given back to come again
	f.reviveIfWaiting(ctx)
}

// CancelLaunch forgets a queued launch (the job was killed first).
func (f *Framework) CancelLaunch(jobID string) {
	f.mu.Lock()
	delete(f.pending, jobID)
	delete(f.expected, jobID)
	f.mu.Unlock()
}

// expectFor bounds how long an announced launch keeps offers in stock.
const expectFor = 2 * time.Minute

type expectation struct {
	at     time.Time
	agents []string
}

// Expect announces that a job's driver launch comes soon (its reservations
// are being made on agents): offers stay unsuppressed, offers on those
// agents are kept (they are where the cluster keeps room for the driver;
// declining them would filter them out until a REVIVE), and a few others
// are kept in stock, so that the driver starts as soon as Launch is
// called. Launch or CancelLaunch ends the announcement.
func (f *Framework) Expect(ctx context.Context, jobID string, agents []string) {
	now := time.Now()
	f.mu.Lock()
	f.expected[jobID] = expectation{at: now, agents: agents}
	for _, a := range agents {
		f.touched[a] = now
	}
	for a, at := range f.touched {
		if now.Sub(at) > expectFor {
			delete(f.touched, a)
		}
	}
	f.mu.Unlock()
	f.reviveOrSuppress(ctx)
}

// waitingLocked counts the launches offers are wanted for: queued and
// announced ones. f.mu is held.
func (f *Framework) waitingLocked() int {
	for id, e := range f.expected {
		if time.Since(e.at) > expectFor {
			delete(f.expected, id)
		}
	}
	return len(f.pending) + len(f.expected)
}

// wantedAgentsLocked are the agents that waiting or announced launches
// prefer. f.mu is held.
func (f *Framework) wantedAgentsLocked() map[string]bool {
	out := map[string]bool{}
	for _, l := range f.pending {
		for _, a := range l.Prefer {
			out[a] = true
		}
	}
	for _, e := range f.expected {
		for _, a := range e.agents {
			out[a] = true
		}
	}
	return out
}

// Kill asks Mesos to kill a task.
func (f *Framework) Kill(ctx context.Context, taskID, agentID string) error {
	k := &scheduler.Call_Kill{TaskID: mesos.TaskID{Value: taskID}}
	if agentID != "" {
		k.AgentID = &mesos.AgentID{Value: agentID}
	}
	return f.Sched.Call(ctx, &scheduler.Call{Type: scheduler.Call_KILL, Kill: k})
}

func (f *Framework) handleOffers(ctx context.Context, offers []mesos.Offer) {
	now := time.Now()
	f.cfg.Observer.ObserveOffers(len(offers))
	offers = f.roleOffers(ctx, offers, now)
	f.mu.Lock()
	f.lastOffer = now
	for _, o := range offers {
		ho := heldOffer{offer: o, since: now}
		ho.cpus, ho.mem = f.driverRoom(o)
		f.offers[o.ID.Value] = ho
	}
	f.mu.Unlock()
	f.tryLaunch(ctx)
	f.declineUnneeded(ctx, false)
}

// driverRoom is what a driver may take from an offer: unreserved cpus and
// mem allocated to sparkpack's role.
func (f *Framework) driverRoom(o mesos.Offer) (cpus, mem float64) {
	for _, r := range o.Resources {
		if r.Scalar == nil || len(r.Reservations) > 0 || r.Reservation != nil ||
			r.AllocationInfo == nil || r.AllocationInfo.GetRole() != f.cfg.Role {
			continue
		}
		switch r.Name {
		case "cpus":
			cpus += r.Scalar.Value
		case "mem":
			mem += r.Scalar.Value
		}
	}
	return cpus, mem
}

// pickLocked chooses the first waiting launch (by job id) that a held
// offer has room for, and the offer: one on an agent the launch prefers,
// else the one with the most cpus free. f.mu is held.
func (f *Framework) pickLocked() (*DriverLaunch, heldOffer, bool) {
	if len(f.pending) == 0 || len(f.offers) == 0 {
		return nil, heldOffer{}, false
	}
	ids := make([]string, 0, len(f.pending))
	for id := range f.pending {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	fits := func(ho heldOffer, l *DriverLaunch) bool {
		return ho.cpus+1e-9 >= l.CPUs && ho.mem+1e-9 >= l.MemMB && !ho.since.Before(f.touched[ho.offer.AgentID.Value])
	}
	for _, id := range ids {
		l := f.pending[id]
		if len(l.Prefer) > 0 {
			prefer := make(map[string]bool, len(l.Prefer))
			for _, a := range l.Prefer {
				prefer[a] = true
			}
			var best heldOffer
			found := false
			for _, ho := range f.offers {
				if prefer[ho.offer.AgentID.Value] && fits(ho, l) && (!found || roomier(ho, best)) {
					best, found = ho, true
				}
			}
			if found {
				return l, best, true
			}
		}
		var best heldOffer
		found := false
		for _, ho := range f.offers {
			if fits(ho, l) && (!found || roomier(ho, best)) {
				best, found = ho, true
			}
		}
		if found {
			return l, best, true
		}
	}
	return nil, heldOffer{}, false
}

// roomier orders offers by cpus, then mem, then id (deterministic).
func roomier(a, b heldOffer) bool {
	if a.cpus != b.cpus {
		return a.cpus > b.cpus
	}
	if a.mem != b.mem {
		return a.mem > b.mem
	}
	return a.offer.ID.Value < b.offer.ID.Value
}

// driverResources picks cpus and mem for a driver from an offer's
// resources allocated to sparkpack's role that are not reserved for a job.
func (f *Framework) driverResources(o mesos.Offer, cpus, mem float64) ([]mesos.Resource, bool) {
	var out []mesos.Resource
	need := map[string]float64{"cpus": cpus, "mem": mem}
	for _, r := range o.Resources {
		want := need[r.Name]
		if want <= 0 || r.Scalar == nil || len(r.Reservations) > 0 || r.Reservation != nil {
			continue
		}
		if r.AllocationInfo == nil || r.AllocationInfo.GetRole() != f.cfg.Role {
			continue
		}
		take := want
		if r.Scalar.Value < take {
			take = r.Scalar.Value
		}
		c := r
		c.Scalar = &mesos.Value_Scalar{Value: take}
		c.Role = nil
		out = append(out, c)
		need[r.Name] -= take
	}
	return out, need["cpus"] <= 1e-9 && need["mem"] <= 1e-9
}

func (f *Framework) tryLaunch(ctx context.Context) {
	for {
		f.mu.Lock()
		l, chosen, ok := f.pickLocked()
		var res []mesos.Resource
		if ok {
			res, ok = f.driverResources(chosen.offer, l.CPUs, l.MemMB)
		}
		if !ok {
			f.mu.Unlock()
			return
		}
		delete(f.pending, l.JobID)
		delete(f.offers, chosen.offer.ID.Value)
		f.mu.Unlock()
		agent := chosen.offer.AgentID.Value
		if l.Sending != nil {
			if err := l.Sending(agent); err != nil {
				f.mu.Lock()
				f.offers[chosen.offer.ID.Value] = chosen // declined in time like any unused offer
				if !errors.Is(err, ErrLaunchWithdrawn) {
					if _, again := f.pending[l.JobID]; !again {
						f.pending[l.JobID] = l
					}
				}
				f.mu.Unlock()
				if errors.Is(err, ErrLaunchWithdrawn) {
					continue
				}
				f.log.WithError(err).WithField("job", l.JobID).Warn("could not record the driver launch; it waits for the next offer")
				return
			}
		}
		err := f.acceptLaunch(ctx, chosen.offer, l, res)
		if err == nil {
			f.cfg.Observer.ObserveAccept(time.Since(chosen.since))
			f.cfg.Observer.ObserveDriverLaunch()
			f.mu.Lock()
			f.taskJob[l.TaskID] = l.JobID
			f.mu.Unlock()
		} else {
			f.log.WithError(err).WithField("job", l.JobID).Warn("driver launch failed; retrying with the next offer")
			f.mu.Lock()
			if _, again := f.pending[l.JobID]; !again {
				f.pending[l.JobID] = l
			}
			f.mu.Unlock()
		}
		if l.Sent != nil {
			l.Sent(agent, err)
		}
		if err != nil {
			return
		}
	}
}

func (f *Framework) acceptLaunch(ctx context.Context, o mesos.Offer, l *DriverLaunch, res []mesos.Resource) error {
	if len(l.Argv) == 0 {
		return errors.New("empty driver command")
	}
	shell := false
	cmd := &mesos.CommandInfo{Shell: &shell, Value: &l.Argv[0], Arguments: l.Argv}
	if len(l.Env) > 0 {
		keys := make([]string, 0, len(l.Env))
		for k := range l.Env {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		env := &mesos.Environment{}
		for _, k := range keys {
			v := l.Env[k]
			env.Variables = append(env.Variables, mesos.Environment_Variable{Name: k, Value: &v})
		}
		cmd.Environment = env
	}
	labels := &mesos.Labels{}
	lk := make([]string, 0, len(l.Labels))
	for k := range l.Labels {
		lk = append(lk, k)
	}
	sort.Strings(lk)
	for _, k := range lk {
		v := l.Labels[k]
		labels.Labels = append(labels.Labels, mesos.Label{Key: k, Value: &v})
	}
	task := mesos.TaskInfo{
		Name:      "sparkpack driver " + l.JobID,
		TaskID:    mesos.TaskID{Value: l.TaskID},
		AgentID:   o.AgentID,
		Resources: res,
		Command:   cmd,
		Labels:    labels,
	}
	refuse := f.cfg.RefuseSeconds
	call := &scheduler.Call{Type: scheduler.Call_ACCEPT, Accept: &scheduler.Call_Accept{
		OfferIDs:   []mesos.OfferID{o.ID},
		Operations: []mesos.Offer_Operation{{Type: mesos.Offer_Operation_LAUNCH, Launch: &mesos.Offer_Operation_Launch{TaskInfos: []mesos.TaskInfo{task}}}},
		Filters:    &mesos.Filters{RefuseSeconds: &refuse},
	}}
	if err := f.Sched.Call(ctx, call); err != nil {
		return fmt.Errorf("launch driver of job %s on agent %s: %w", l.JobID, o.Hostname, err)
	}
	f.log.WithFields(logrus.Fields{"job": l.JobID, "agent": o.Hostname, "agent_id": o.AgentID.Value, "task": l.TaskID}).Info("driver launched")
	return nil
}

// declineUnneeded declines the offers held longer than OfferHold and, unless
// expiredOnly, those beyond the stock: one per waiting launch plus
// OfferStock, keeping the roomiest. Offers on agents a waiting or announced
// launch prefers are kept (at most expectFor). Declines carry a RefuseSeconds filter,
// so that the master does not offer the same resources again at once; a
// REVIVE (reviveIfWaiting) clears the filters when a driver finds no room.
func (f *Framework) declineUnneeded(ctx context.Context, expiredOnly bool) {
	f.mu.Lock()
	var ids, stale []mesos.OfferID
	now := time.Now()
	var keep []heldOffer
	var yield []mesos.OfferID
	wanted := f.wantedAgentsLocked()
	for id, ho := range f.offers {
		if ho.cpus <= 0 || ho.mem <= 0 {
			ids = append(ids, ho.offer.ID)
			delete(f.offers, id)
			continue
		}
		if f.yielding[ho.offer.AgentID.Value] > 0 {
			yield = append(yield, ho.offer.ID)
			delete(f.offers, id)
			continue
		}
		if ho.since.Before(f.touched[ho.offer.AgentID.Value]) {
			// Received before a reservation on its agent: it is about
			// to be rescinded, or, if not, it is given back without a
			// filter so that the master offers the agent again.
			stale = append(stale, ho.offer.ID)
			delete(f.offers, id)
			continue
		}
		if wanted[ho.offer.AgentID.Value] && now.Sub(ho.since) < expectFor {
			continue // kept for the launch that prefers its agent
		}
		if now.Sub(ho.since) >= f.cfg.OfferHold {
			ids = append(ids, ho.offer.ID)
			delete(f.offers, id)
			continue
		}
		keep = append(keep, ho)
	}
	if stock := f.waitingLocked() + f.cfg.OfferStock; !expiredOnly && len(keep) > stock {
		sort.Slice(keep, func(i, j int) bool { return roomier(keep[i], keep[j]) })
		for _, ho := range keep[stock:] {
			ids = append(ids, ho.offer.ID)
			delete(f.offers, ho.offer.ID.Value)
		}
	}
	f.mu.Unlock()
	if len(yield) > 0 {
		// A short filter: the job's role is offered the agent meanwhile.
		short := 2.0
		call := &scheduler.Call{Type: scheduler.Call_DECLINE, Decline: &scheduler.Call_Decline{OfferIDs: yield, Filters: &mesos.Filters{RefuseSeconds: &short}}}
		if err := f.Sched.Call(ctx, call); err != nil {
			f.log.WithError(err).Debug("decline failed")
		} else {
			f.cfg.Observer.ObserveDeclines(len(yield))
		}
	}
	if len(stale) > 0 {
		var none float64
		call := &scheduler.Call{Type: scheduler.Call_DECLINE, Decline: &scheduler.Call_Decline{OfferIDs: stale, Filters: &mesos.Filters{RefuseSeconds: &none}}}
		if err := f.Sched.Call(ctx, call); err != nil {
			f.log.WithError(err).Debug("decline failed")
		} else {
			f.cfg.Observer.ObserveDeclines(len(stale))
		}
	}
	if len(ids) == 0 {
		return
	}
	refuse := f.cfg.RefuseSeconds
	call := &scheduler.Call{Type: scheduler.Call_DECLINE, Decline: &scheduler.Call_Decline{OfferIDs: ids, Filters: &mesos.Filters{RefuseSeconds: &refuse}}}
	if err := f.Sched.Call(ctx, call); err != nil {
		f.log.WithError(err).Debug("decline failed")
	} else {
		f.cfg.Observer.ObserveDeclines(len(ids))
	}
	f.reviveOrSuppress(ctx)
}

// reviveOrSuppress keeps offers flowing only while a driver waits or is
// expected (Expect). Calls
// are serialised and decided just before sending, so a SUPPRESS can never
// overtake a later REVIVE.
func (f *Framework) reviveOrSuppress(ctx context.Context) {
	f.rsMu.Lock()
	defer f.rsMu.Unlock()
	f.mu.Lock()
	want := f.waitingLocked() > 0
	change := want == f.suppressed
	f.mu.Unlock()
	if !change {
		return
	}
	f.sendReviveOrSuppress(ctx, want)
}

// sendReviveOrSuppress sends REVIVE (want) or SUPPRESS; f.rsMu is held.
func (f *Framework) sendReviveOrSuppress(ctx context.Context, want bool) {
	var err error
	t := scheduler.Call_SUPPRESS
	if want {
		t = scheduler.Call_REVIVE
		err = f.Sched.Call(ctx, &scheduler.Call{Type: t, Revive: &scheduler.Call_Revive{Roles: []string{f.cfg.Role}}})
	} else {
		err = f.Sched.Call(ctx, &scheduler.Call{Type: t, Suppress: &scheduler.Call_Suppress{Roles: []string{f.cfg.Role}}})
	}
	if err != nil {
		f.log.WithError(err).Debug(t.String() + " failed; trying again later")
		return
	}
	f.mu.Lock()
	f.suppressed = !want
	if want {
		f.revivedAt = time.Now()
	}
	f.mu.Unlock()
}

// reviveEvery bounds how often REVIVE is sent while drivers wait for room.
const reviveEvery = time.Second

// reviveIfWaiting sends REVIVE when a driver waits and no held offer has
// room, at most every reviveEvery: it also clears the decline filters of
// sparkpack's role, so every agent with room is offered again (a lost
// REVIVE or filters the master kept are covered too, as Mesos advises).
func (f *Framework) reviveIfWaiting(ctx context.Context) {
	f.rsMu.Lock()
	defer f.rsMu.Unlock()
	f.mu.Lock()
	since := time.Since(f.revivedAt)
	waiting := f.connected && (len(f.pending) > 0 && (f.suppressed || since >= reviveEvery) ||
		// announced launches get a fresh stock once the last one was declined
		f.waitingLocked() > 0 && len(f.offers) == 0 && (f.suppressed || since >= f.cfg.OfferHold))
	f.mu.Unlock()
	if waiting {
		f.sendReviveOrSuppress(ctx, true)
	}
}

func (f *Framework) expireOffers(ctx context.Context) {
	t := time.NewTicker(min(f.cfg.OfferHold/2, reviveEvery/2))
	defer t.Stop()
	rec := time.NewTicker(f.cfg.ReconcileEvery)
	defer rec.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-rec.C:
			if f.Connected() {
				f.mu.Lock()
				tasks := make([]string, 0, len(f.taskJob))
				for t := range f.taskJob {
					tasks = append(tasks, t)
				}
				f.mu.Unlock()
				sort.Strings(tasks)
				f.Reconcile(ctx, tasks)
			}
		case <-t.C:
			f.declineUnneeded(ctx, true)
			f.reviveIfWaiting(ctx)
		}
	}
}
