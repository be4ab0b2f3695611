package mesossim

import (
	"sort"
	"strconv"
	"sync"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"

	"github.com/sparkpack/sparkpack/clusterspec"
)

// defaultAgentPort is the port the emulated agents advertise when no
// agents' listener runs (Handler used alone, as in unit tests).
const defaultAgentPort = 5051

type agent struct {
	spec       clusterspec.Agent
	id         string
	base       Res // the agent's own resources (agent_info.resources)
	total      Res // base with reservations applied
	used       Res // held by tasks and executors
	offered    Res
	tasks      map[*task]bool
	offers     map[string]*offer
	attrs      []mesos.Attribute
	registered time.Time
	poweredOff bool
	// Power and deactivation (power.go).
	reregistered time.Time
	offAt        time.Time // when its machine stopped
	unreachable  bool      // off longer than UnreachableAfter: not listed
	booting      *timerEntry
	deactivated  bool
	drain        *mesos.DrainInfo

	// crashed is set while the agent's process is dead and the agent not
	// yet unreachable (listed inactive, no offers, KILLs wait for it): the
	// timer that marks it unreachable after UnreachableAfter.
	crashed *timerEntry
	// recovery is set while the agent's process is dead: the timer after
	// which its executors give up (AgentRecoveryTimeout).
	recovery *timerEntry

	// checkpoint is what the agent's process checkpointed, kept from the
	// first operator (un)reserve while it is disconnected (powered off or
	// crashed, still listed): a real 1.12 master answers 202 and shows the
	// change, but the agent re-registers with its checkpointed resources
	// and the change is lost (restoreCheckpoint).
	checkpoint    Res
	checkpointSet bool

	// Renderings kept for GET_AGENTS (operator.go).
	info     *mesos.AgentInfo
	totalSrc Res
	totalPB  []mesos.Resource
}

// disconnected: the agent's process is not connected (its machine is off,
// or it crashed and is not yet unreachable).
func (a *agent) disconnected() bool { return a.poweredOff || a.crashed != nil }

// restoreCheckpoint is the agent's re-registration: it brings the
// resources it checkpointed, undoing what operators changed meanwhile.
func (a *agent) restoreCheckpoint() {
	if a.checkpointSet {
		a.total, a.checkpoint, a.checkpointSet = a.checkpoint, nil, false
	}
}

func (a *agent) available() Res {
	if len(a.used) == 0 && len(a.offered) == 0 {
		return a.total // an idle agent, the common case in a large cluster (shared: Res values are never modified in place)
	}
	return a.total.minus(a.used).minus(a.offered)
}

// unallocated is what an operator may (un)reserve: resources not used by
// tasks (offers are rescinded to make room).
func (a *agent) unallocated() Res { return a.total.minus(a.used) }

func (a *agent) agentID() mesos.AgentID { return mesos.AgentID{Value: a.id} }

func (a *agent) pid(port int) string { return "slave(1)@127.0.0.1:" + strconv.Itoa(port) }

func (a *agent) describe(port int) string {
	return a.id + " at slave(1)@127.0.0.1:" + strconv.Itoa(port) + " (" + a.spec.Hostname + ")"
}

func attributesFor(spec clusterspec.Agent) []mesos.Attribute {
	all := spec.AllAttributes()
	keys := make([]string, 0, len(all))
	for k := range all {
		keys = append(keys, k)
	}
	order := map[string]int{"instance_type": 0, "price": 1, "location": 2}
	sort.Slice(keys, func(i, j int) bool {
		oi, iok := order[keys[i]]
		oj, jok := order[keys[j]]
		switch {
		case iok && jok:
			return oi < oj
		case iok != jok:
			return iok
		}
		return keys[i] < keys[j]
	})
	out := make([]mesos.Attribute, 0, len(keys))
	for _, k := range keys {
		v := all[k]
		if f, err := strconv.ParseFloat(v, 64); err == nil {
			out = append(out, mesos.Attribute{Name: k, Type: mesos.SCALAR, Scalar: &mesos.Value_Scalar{Value: f}})
			continue
		}
		vv := v
		out = append(out, mesos.Attribute{Name: k, Type: mesos.TEXT, Text: &mesos.Value_Text{Value: vv}})
	}
	return out
}

func (m *Master) addAgentLocked(spec clusterspec.Agent) *agent {
	a := &agent{
		spec:       spec,
		id:         spec.ID,
		base:       agentTotal(spec.CPUs, spec.MemMB, spec.DiskMB),
		tasks:      map[*task]bool{},
		offers:     map[string]*offer{},
		attrs:      attributesFor(spec),
		registered: time.Now(),
	}
	a.total = a.base.clone()
	m.billOpenLocked(a, a.registered)
	m.agents[a.id] = a
	m.agentOrder = append(m.agentOrder, a.id)
	sort.Strings(m.agentOrder)
	return a
}

type framework struct {
	id             string
	info           mesos.FrameworkInfo
	roles          []string
	multiRole      bool
	refinement     bool
	partitionAware bool
	killingState   bool // TASK_KILLING_STATE: kills go through TASK_KILLING

	stream       *stream
	connected    bool
	recovered    bool
	removed      bool
	registered   time.Time
	reregistered time.Time
	unregistered time.Time

	tasks map[string]*task
	// completedTasks are the framework's ended and acknowledged tasks
	// (and those ended by its removal), newest last, as GET_TASKS lists
	// them (Mesos keeps the last --max_completed_tasks_per_framework).
	completedTasks []*task
	offers         map[string]*offer
	suppressed     map[string]bool
	filters        filterSet
	failover       *timerEntry
	opUpdates      []*opStatus

	// spark is set for the simulated Spark framework: its events go to Go
	// code instead of an HTTP stream.
	spark *sparkJob
}

func (fw *framework) hasRole(r string) bool {
	for _, x := range fw.roles {
		if x == r {
			return true
		}
	}
	return false
}

func (fw *framework) offerFormat() resFormat {
	if fw.refinement {
		return fmtRefined
	}
	return fmtLegacy
}

func (fw *framework) setInfo(fi mesos.FrameworkInfo) {
	// The master shows the fields that have defaults with their default.
	if fi.Checkpoint == nil {
		f := false
		fi.Checkpoint = &f
	}
	if fi.FailoverTimeout == nil {
		z := 0.0
		fi.FailoverTimeout = &z
	}
	fw.info = fi
	fw.multiRole, fw.refinement, fw.partitionAware, fw.killingState = false, false, false, false
	for _, c := range fi.Capabilities {
		switch c.Type {
		case mesos.FrameworkInfo_Capability_MULTI_ROLE:
			fw.multiRole = true
		case mesos.FrameworkInfo_Capability_RESERVATION_REFINEMENT:
			fw.refinement = true
		case mesos.FrameworkInfo_Capability_PARTITION_AWARE:
			fw.partitionAware = true
		case mesos.FrameworkInfo_Capability_TASK_KILLING_STATE:
			fw.killingState = true
		}
	}
	if fw.multiRole {
		fw.roles = append([]string(nil), fi.Roles...)
	} else {
		fw.roles = []string{fi.GetRole()}
	}
}

// send delivers an event to the framework if it is connected.
func (m *Master) sendLocked(fw *framework, ev *scheduler.Event) {
	if fw.spark != nil {
		if fw.connected {
			m.sparkEventLocked(fw.spark, ev)
		}
		return
	}
	if fw.stream != nil {
		fw.stream.send(ev)
	}
}

// stream is one SUBSCRIBE response. Events are queued under the stream's own
// lock and written by the handler goroutine.
type stream struct {
	id       string
	fw       *framework
	media    string
	recordio bool

	mu     sync.Mutex
	q      []*scheduler.Event
	notify chan struct{}
	done   chan struct{}
	once   sync.Once
}

func newStream(media string, recordio bool) *stream {
	return &stream{id: newUUID(), media: media, recordio: recordio, notify: make(chan struct{}, 1), done: make(chan struct{})}
}

func (s *stream) send(ev *scheduler.Event) {
	s.mu.Lock()
	s.q = append(s.q, ev)
	s.mu.Unlock()
	select {
	case s.notify <- struct{}{}:
	default:
	}
}

func (s *stream) take() []*scheduler.Event {
	s.mu.Lock()
	q := s.q
	s.q = nil
	s.mu.Unlock()
	return q
}

func (s *stream) close() { s.once.Do(func() { close(s.done) }) }

func (s *stream) closed() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

type offer struct {
	id      string
	fw      *framework
	agent   *agent
	role    string
	res     Res
	created time.Time
}

// offerProtoLocked renders an offer. Like the real master, an offer sent
// to a framework without MULTI_ROLE carries no allocation_info (neither on
// the offer nor on its resources); operator endpoints (toFramework false)
// always show it. Resources come in the real master's order: ranges
// (ports) first, then reservations, then unreserved scalars.
func (m *Master) offerProtoLocked(o *offer, f resFormat, toFramework bool) mesos.Offer {
	a := o.agent
	host := a.spec.Hostname
	ip := "127.0.0.1"
	path := "/slave(1)"
	role := o.role
	allocRole := o.role
	var alloc *mesos.Resource_AllocationInfo
	if toFramework && !o.fw.multiRole {
		allocRole = ""
	} else {
		alloc = &mesos.Resource_AllocationInfo{Role: &role}
	}
	out := mesos.Offer{
		ID:          mesos.OfferID{Value: o.id},
		FrameworkID: mesos.FrameworkID{Value: o.fw.id},
		AgentID:     a.agentID(),
		Hostname:    host,
		URL: &mesos.URL{Scheme: "http", Address: mesos.Address{Hostname: &host, IP: &ip, Port: int32(m.agentPort)},
			Path: &path},
		Resources:      o.res.offerOrder().proto(f, allocRole),
		Attributes:     append([]mesos.Attribute(nil), a.attrs...),
		AllocationInfo: alloc,
	}
	if toFramework {
		// The framework's executors running on the agent.
		seen := map[string]bool{}
		for t := range a.tasks {
			if t.fw == o.fw && t.info.Executor != nil && !t.released && !seen[t.executorID] {
				seen[t.executorID] = true
				out.ExecutorIDs = append(out.ExecutorIDs, mesos.ExecutorID{Value: t.executorID})
			}
		}
		sort.Slice(out.ExecutorIDs, func(i, j int) bool { return out.ExecutorIDs[i].Value < out.ExecutorIDs[j].Value })
	}
	return out
}

type filter struct {
	role    string
	agentID string
	res     Res
	until   time.Time
}

type quotaConfig struct {
	role       string
	guarantees map[string]int64
	limits     map[string]int64
}

// opStatus is an operation status update that waits for an acknowledgement.
type opStatus struct {
	opID    string
	agentID string
	uuid    []byte
	state   mesos.OperationState
	delay   time.Duration
	retry   *timerEntry
}

type task struct {
	id          string
	fw          *framework
	agent       *agent
	info        mesos.TaskInfo
	res         Res
	role        string
	executorID  string
	containerID string
	executorPID uint32 // a made-up pid of the executor process
	launched    time.Time

	state  mesos.TaskState   // the master's view: the last update forwarded
	status *mesos.TaskStatus // that update
	// statuses are the updates forwarded so far (GET_TASKS shows them).
	statuses []mesos.TaskStatus
	actual   mesos.TaskState // the agent's view
	// pending are status updates the agent has not had acknowledged yet;
	// only the first has been forwarded.
	pending  []*mesos.TaskStatus
	retry    *timerEntry
	delay    time.Duration
	timers   []*timerEntry
	released bool
	// unreachable: the task's agent crashed; it comes back with the agent.
	unreachable     bool
	killAfterReturn bool          // a KILL arrived while the agent was unreachable
	gaveUp          bool          // its executor gave up waiting for its crashed agent
	finishAt        time.Time     // when its simulated run ends
	remaining       time.Duration // run time left when its agent crashed
	spark           *sparkJob     // set when this task is a simulated Spark driver
	executor        *sparkJob     // set when this task is an executor of a simulated Spark job
}

func (t *task) cancelTimers() {
	for _, e := range t.timers {
		e.cancel()
	}
	t.timers = nil
}

func isTerminal(s mesos.TaskState) bool {
	switch s {
	case mesos.TASK_FINISHED, mesos.TASK_FAILED, mesos.TASK_KILLED, mesos.TASK_LOST, mesos.TASK_ERROR,
		mesos.TASK_DROPPED, mesos.TASK_GONE, mesos.TASK_GONE_BY_OPERATOR:
		return true
	}
	return false
}
