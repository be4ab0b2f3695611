package mesossim

import (
	"container/heap"
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	mrand "math/rand"
	"net"
	"net/http"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/sirupsen/logrus"

	"github.com/sparkpack/sparkpack/clusterspec"
	"github.com/sparkpack/sparkpack/mesossim/perftruth"
)

// Version is the Mesos version the emulator reports.
const Version = "1.12.0"

// DurationLabel is the task label that sets a task's simulated run time in
// seconds (a decimal number), e.g. sparkpack.sim/duration-seconds=42.5.
const DurationLabel = "sparkpack.sim/duration-seconds"

// DurationFunc returns how long a launched task runs (simulated time). It is
// called with the master's lock held and must not call back into the Master.
type DurationFunc func(task *mesos.TaskInfo, agent clusterspec.Agent) time.Duration

// Config configures a Master. The zero value is usable: thesis14 cluster,
// Mesos' default intervals.
type Config struct {
	// Cluster is the set of simulated agents. Empty means thesis14.
	Cluster clusterspec.Cluster
	// Hostname and Port are advertised in MasterInfo. ListenAndServe fills
	// them from the listen address when they are empty.
	Hostname string
	Port     int

	// OfferInterval is the allocation interval (Mesos default 1s). Offers
	// are also made shortly after events that free resources or revive.
	OfferInterval time.Duration
	// HeartbeatInterval is sent in SUBSCRIBED (Mesos default 15s).
	HeartbeatInterval time.Duration
	// StatusUpdateRetry is the first re-send delay of an unacknowledged
	// status update or operation status update (Mesos: 10s, then doubling:
	// 10s, 30s, 70s after the first delivery); StatusUpdateRetryMax caps the
	// delay (Mesos: 10m).
	StatusUpdateRetry    time.Duration
	StatusUpdateRetryMax time.Duration
	// DefaultRefuseSeconds is the filter used by DECLINE and ACCEPT without
	// filters (Mesos: 5s).
	DefaultRefuseSeconds float64

	// TaskStartDelay is the time from LAUNCH to TASK_STARTING; TASK_RUNNING
	// follows right after (default 100ms; the real agent took ~0.6s).
	TaskStartDelay time.Duration
	// DefaultTaskDuration is used when neither the duration label nor
	// DurationFunc gives a duration (default 10s).
	DefaultTaskDuration time.Duration
	// DurationFunc, if set, decides every task's duration unless the task
	// carries the DurationLabel.
	DurationFunc DurationFunc
	// TimeScale multiplies simulated task durations to get wall-clock time
	// (0 means 1; 0.01 runs tasks 100 times faster).
	TimeScale float64

	// TaskFailureRate and TaskLostRate are the probabilities that a task
	// ends TASK_FAILED or TASK_LOST instead of TASK_FINISHED; Seed seeds the
	// random choice (0 means 1).
	TaskFailureRate float64
	TaskLostRate    float64
	Seed            int64

	// DisableSpark turns off the simulated Spark framework (see spark.go).
	DisableSpark bool
	// PerfTruth, if set, times every simulated Spark application from the
	// placement its executors got and its signature's hidden parameters
	// (sparktruth.go, package perftruth) instead of its task's duration;
	// SparkMaxWait is how long (simulated) it waits for all its executors
	// before it starts with those it has (Spark's
	// spark.scheduler.maxRegisteredResourcesWaitingTime, default 30s).
	PerfTruth    *perftruth.Truth
	SparkMaxWait time.Duration
	// SparkExecutorStartDelay is how long the simulated Spark driver waits
	// after TASK_RUNNING before it subscribes its framework (default 200ms).
	SparkExecutorStartDelay time.Duration

	// BootTime is the simulated time from PowerOn to the agent registering
	// again (default 60s; wall time is BootTime x TimeScale).
	BootTime time.Duration
	// UnreachableAfter is how long a stopped agent stays listed (inactive)
	// by GET_AGENTS before it is marked unreachable (a real master:
	// agent_ping_timeout 15s x max_agent_ping_timeouts 5 = 75s; wall time).
	UnreachableAfter time.Duration
	// AgentsLoseWorkDir: an agent's work dir does not survive a power
	// cycle (tmpfs, or every power-on is a fresh instance from an image).
	// A powered-on agent then registers as a new agent under a new id,
	// without the reservations the old one checkpointed, and the old
	// agent is removed at once, as a real 1.12 master does when a new
	// agent registers at the same address (docs/power.md). The emulator's
	// power API still takes the machine's old ids (a provider powers a
	// machine, not an agent id). Default false: the agent keeps its id.
	AgentsLoseWorkDir bool
	// AgentRecoveryTimeout is how long the executors of a crashed agent
	// wait for it to come back before they give up (an agent's
	// --recovery_timeout, default 15 minutes; wall time): a simulated
	// Spark driver among them ends then, and its application with it.
	AgentRecoveryTimeout time.Duration

	// Logger receives the emulator's logs (default: logrus standard logger).
	Logger logrus.FieldLogger
}

func (c *Config) setDefaults() error {
	if len(c.Cluster.Agents) == 0 {
		c.Cluster = clusterspec.Thesis14()
	}
	if c.Hostname == "" {
		c.Hostname = "localhost"
	}
	if c.Port == 0 {
		c.Port = 5050
	}
	if c.OfferInterval <= 0 {
		c.OfferInterval = time.Second
	}
	if c.HeartbeatInterval <= 0 {
		c.HeartbeatInterval = 15 * time.Second
	}
	if c.StatusUpdateRetry <= 0 {
		c.StatusUpdateRetry = 10 * time.Second
	}
	if c.StatusUpdateRetryMax <= 0 {
		c.StatusUpdateRetryMax = 10 * time.Minute
	}
	if c.DefaultRefuseSeconds == 0 {
		c.DefaultRefuseSeconds = 5
	}
	if c.TaskStartDelay <= 0 {
		c.TaskStartDelay = 100 * time.Millisecond
	}
	if c.DefaultTaskDuration <= 0 {
		c.DefaultTaskDuration = 10 * time.Second
	}
	if math.IsNaN(c.TimeScale) || math.IsInf(c.TimeScale, 0) {
		// NaN passed "<= 0" and made every task's wall time NaN.
		return fmt.Errorf("mesossim: TimeScale (--time-scale) must be a finite number, got %g", c.TimeScale)
	}
	if c.TimeScale <= 0 {
		c.TimeScale = 1
	}
	if c.SparkMaxWait <= 0 {
		c.SparkMaxWait = 30 * time.Second
	}
	if c.Seed == 0 {
		c.Seed = 1
	}
	if c.SparkExecutorStartDelay <= 0 {
		c.SparkExecutorStartDelay = 200 * time.Millisecond
	}
	if c.BootTime <= 0 {
		c.BootTime = 60 * time.Second
	}
	if c.UnreachableAfter <= 0 {
		c.UnreachableAfter = 75 * time.Second
	}
	if c.AgentRecoveryTimeout <= 0 {
		c.AgentRecoveryTimeout = 15 * time.Minute
	}
	if c.Logger == nil {
		c.Logger = logrus.StandardLogger()
	}
	if !(c.TaskFailureRate >= 0) || !(c.TaskLostRate >= 0) || c.TaskFailureRate+c.TaskLostRate > 1 {
		return fmt.Errorf("mesossim: TaskFailureRate and TaskLostRate must be >= 0 and add up to at most 1")
	}
	return nil
}

// Master is an emulated Mesos 1.12 master with simulated agents.
type Master struct {
	cfg Config
	log logrus.FieldLogger

	mu     sync.Mutex
	id     string
	agents map[string]*agent
	// agentPort is the port the agents advertise (pid, agent_info.port,
	// offer URLs): the agents' listener of ListenAndServe, where their
	// files API is (sandbox.go).
	agentPort int
	// sandboxes are the executors' simulated files, by virtual path.
	sandboxes    map[string]*sandbox
	sandboxOrder []string // ended sandboxes, oldest first
	agentOrder   []string
	frameworks   map[string]*framework
	completed    []*framework
	removedIDs   map[string]bool
	offers       map[string]*offer
	quotas       map[string]*quotaConfig
	quotaOrder   []string
	nextFw       int
	nextOffer    int
	rng          *mrand.Rand
	opSubs       map[*opStream]bool
	sparkJobs    map[*task]*sparkJob
	sparkRuns    []SparkRun // timed by the performance truth (sparktruth.go)
	unavailUntil time.Time
	updateFaults UpdateFaults

	timers timerHeap
	seq    uint64

	wake chan struct{}
	kick chan struct{}
	// allocFull asks the next allocation to visit every agent;
	// allocAgents (under mu) are the agents whose resources changed since
	// the last allocation (see kickAgentLocked).
	allocFull   atomic.Bool
	allocAgents map[string]bool

	startOnce sync.Once
	closeOnce sync.Once
	ctx       context.Context
	cancel    context.CancelFunc
	wg        sync.WaitGroup
	started   bool

	bill   map[string]*billEntry   // power.go
	active map[string]*activeEntry // activebill.go
	bornAt time.Time
	// renamed: an agent id to the id its machine registered under after
	// a power-on with AgentsLoseWorkDir (power.go).
	renamed map[string]string
	// launches counts the tasks launched, by framework/task id (tests
	// check that no task was launched twice).
	launches map[string]int
}

// New creates a Master; call Start (or ListenAndServe) to run it.
func New(cfg Config) (*Master, error) {
	if err := cfg.setDefaults(); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	m := &Master{
		cfg:        cfg,
		log:        cfg.Logger.WithField("component", "mesossim"),
		id:         newUUID(),
		agents:     map[string]*agent{},
		frameworks: map[string]*framework{},
		removedIDs: map[string]bool{},
		offers:     map[string]*offer{},
		quotas:     map[string]*quotaConfig{},
		rng:        mrand.New(mrand.NewSource(cfg.Seed)),
		opSubs:     map[*opStream]bool{},
		sparkJobs:  map[*task]*sparkJob{},
		agentPort:  defaultAgentPort,
		sandboxes:  map[string]*sandbox{},
		wake:       make(chan struct{}, 1),
		kick:       make(chan struct{}, 1),
		ctx:        ctx,
		cancel:     cancel,
		bill:       map[string]*billEntry{},
		launches:   map[string]int{},
		bornAt:     time.Now(),
	}
	for _, a := range cfg.Cluster.Agents {
		if _, dup := m.agents[a.ID]; dup {
			cancel()
			return nil, fmt.Errorf("mesossim: agent id %q used twice", a.ID)
		}
		m.addAgentLocked(a)
	}
	return m, nil
}

// Start starts the allocator and the timer loop. It is idempotent.
func (m *Master) Start() {
	m.startOnce.Do(func() {
		m.mu.Lock()
		m.started = true
		m.mu.Unlock()
		m.wg.Add(2)
		go m.timerLoop()
		go m.allocatorLoop()
	})
}

// Close stops every goroutine of the Master and ends all streams.
func (m *Master) Close() error {
	m.closeOnce.Do(func() {
		m.cancel()
		m.mu.Lock()
		for _, fw := range m.frameworks {
			if fw.stream != nil {
				fw.stream.close()
			}
		}
		for s := range m.opSubs {
			s.close()
		}
		m.mu.Unlock()
		m.wg.Wait()
	})
	return nil
}

// Handler returns the HTTP handler serving /api/v1/scheduler, /api/v1,
// /health, /version and the emulator's admin endpoints under /sim/.
func (m *Master) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/api/v1/scheduler", m.handleScheduler)
	mux.HandleFunc("/api/v1", m.handleOperator)
	mux.HandleFunc("/api/v1/", m.handleOperator)
	// libprocess serves the master's endpoints under its process id too;
	// Mesos' own v1 scheduler library (mesos-execute) uses these paths.
	mux.HandleFunc("/master/api/v1/scheduler", m.handleScheduler)
	mux.HandleFunc("/master/api/v1", m.handleOperator)
	mux.HandleFunc("/health", func(w http.ResponseWriter, r *http.Request) { writeEmpty(w, http.StatusOK) })
	mux.HandleFunc("/version", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"version":%q}`, Version)
	})
	m.registerAdmin(mux)
	return mux
}

// ListenAndServe listens on addr, starts the Master and serves until ctx is
// done; then it shuts the server down and closes the Master. ready, if not
// nil, is called with the bound address once listening.
func (m *Master) ListenAndServe(ctx context.Context, addr string, ready func(net.Addr)) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	if tcp, ok := ln.Addr().(*net.TCPAddr); ok {
		m.mu.Lock()
		m.cfg.Port = tcp.Port
		if m.cfg.Hostname == "localhost" && !tcp.IP.IsLoopback() && !tcp.IP.IsUnspecified() {
			m.cfg.Hostname = tcp.IP.String()
		}
		m.mu.Unlock()
	}
	// The agents' own endpoints (their files API) on a second port of the
	// same host, as a real agent listens on its own address (5051).
	host, _, _ := net.SplitHostPort(ln.Addr().String())
	aln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		ln.Close()
		return fmt.Errorf("listen for the agents' endpoints: %w", err)
	}
	if tcp, ok := aln.Addr().(*net.TCPAddr); ok {
		m.mu.Lock()
		m.agentPort = tcp.Port
		for _, a := range m.agents {
			a.info = nil // rebuilt with the port
		}
		m.mu.Unlock()
	}
	m.Start()
	srv := &http.Server{Handler: m.Handler(), ReadHeaderTimeout: 10 * time.Second}
	asrv := &http.Server{Handler: m.AgentHandler(), ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	aerrc := make(chan error, 1)
	go func() { aerrc <- asrv.Serve(aln) }()
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = asrv.Shutdown(sctx)
		<-aerrc
	}()
	if ready != nil {
		ready(ln.Addr())
	}
	select {
	case <-ctx.Done():
	case <-m.ctx.Done():
	case err := <-errc:
		m.Close()
		return err
	}
	m.Close() // ends streaming handlers so Shutdown does not wait for them
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = srv.Shutdown(sctx)
	<-errc
	return nil
}

// ---- timers ----

type timerEntry struct {
	when      time.Time
	seq       uint64
	fn        func()
	idx       int
	cancelled bool
}

func (t *timerEntry) cancel() {
	if t != nil {
		t.cancelled = true
	}
}

type timerHeap []*timerEntry

func (h timerHeap) Len() int { return len(h) }
func (h timerHeap) Less(i, j int) bool {
	if h[i].when.Equal(h[j].when) {
		return h[i].seq < h[j].seq
	}
	return h[i].when.Before(h[j].when)
}
func (h timerHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i]; h[i].idx = i; h[j].idx = j }
func (h *timerHeap) Push(x any)   { e := x.(*timerEntry); e.idx = len(*h); *h = append(*h, e) }
func (h *timerHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return e
}
func (h timerHeap) peek() *timerEntry { return h[0] }

// afterLocked runs fn with m.mu held after d. Callers hold m.mu.
func (m *Master) afterLocked(d time.Duration, fn func()) *timerEntry {
	m.seq++
	e := &timerEntry{when: time.Now().Add(d), seq: m.seq, fn: fn}
	heap.Push(&m.timers, e)
	if m.timers.peek() == e {
		select {
		case m.wake <- struct{}{}:
		default:
		}
	}
	return e
}

func (m *Master) timerLoop() {
	defer m.wg.Done()
	t := time.NewTimer(time.Hour)
	defer t.Stop()
	for {
		m.mu.Lock()
		now := time.Now()
		for n := 0; m.timers.Len() > 0 && !m.timers.peek().when.After(now) && n < 10000; n++ {
			e := heap.Pop(&m.timers).(*timerEntry)
			if !e.cancelled {
				e.fn()
			}
		}
		wait := time.Hour
		if m.timers.Len() > 0 {
			wait = time.Until(m.timers.peek().when)
			if wait < 0 {
				wait = 0
			}
		}
		m.mu.Unlock()
		if !t.Stop() {
			select {
			case <-t.C:
			default:
			}
		}
		t.Reset(wait)
		select {
		case <-t.C:
		case <-m.wake:
		case <-m.ctx.Done():
			return
		}
	}
}

// kickAllocator asks for an allocation round over every agent soon.
func (m *Master) kickAllocator() {
	m.allocFull.Store(true)
	select {
	case m.kick <- struct{}{}:
	default:
	}
}

func (m *Master) allocatorLoop() {
	defer m.wg.Done()
	tick := time.NewTicker(m.cfg.OfferInterval)
	defer tick.Stop()
	batch := m.cfg.OfferInterval / 5
	if batch > 100*time.Millisecond {
		batch = 100 * time.Millisecond
	}
	for {
		full := false
		select {
		case <-tick.C:
			full = true // every allocation interval: every agent
		case <-m.kick:
			// batch events like the real allocator does
			select {
			case <-time.After(batch):
			case <-m.ctx.Done():
				return
			}
		case <-m.ctx.Done():
			return
		}
		m.mu.Lock()
		if m.allocFull.Swap(false) {
			full = true
		}
		agents := m.allocAgents
		m.allocAgents = nil
		switch {
		case full:
			m.allocateLocked(nil)
		case len(agents) > 0:
			m.allocateLocked(agents)
		}
		m.mu.Unlock()
	}
}

// ---- ids ----

func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = (b[6] & 0x0f) | 0x40
	b[8] = (b[8] & 0x3f) | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

func newUUIDBytes() []byte {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = (b[6] & 0x0f) | 0x40
	b[8] = (b[8] & 0x3f) | 0x80
	return b[:]
}

func (m *Master) newFrameworkID() string {
	id := fmt.Sprintf("%s-%04d", m.id, m.nextFw)
	m.nextFw++
	return id
}

func (m *Master) newOfferID() string {
	id := m.id + "-O" + strconv.Itoa(m.nextOffer)
	m.nextOffer++
	return id
}

func timeInfo(t time.Time) *mesos.TimeInfo {
	if t.IsZero() {
		return nil
	}
	return &mesos.TimeInfo{Nanoseconds: t.UnixNano()}
}

func nowSeconds() float64 { return float64(time.Now().UnixNano()) / 1e9 }

// masterInfo is what SUBSCRIBED carries. The last capability, QUOTA_V2, is
// not in mesos-go v0.0.11's enum: it is sent as number 3 in protobuf (as the
// real master does) and patched to "QUOTA_V2" in JSON (see encodeEvent).
func (m *Master) masterInfoLocked() *mesos.MasterInfo {
	port := uint32(m.cfg.Port)
	host := m.cfg.Hostname
	ip := "127.0.0.1"
	if parsed := net.ParseIP(host); parsed != nil && parsed.To4() != nil {
		ip = host
	}
	ip4 := net.ParseIP(ip).To4()
	pid := fmt.Sprintf("master@%s:%d", ip, port)
	ver := Version
	return &mesos.MasterInfo{
		ID:       m.id,
		IP:       binary.LittleEndian.Uint32(ip4),
		Port:     &port,
		PID:      &pid,
		Hostname: &host,
		Version:  &ver,
		Address:  &mesos.Address{Hostname: &host, IP: &ip, Port: int32(port)},
		Capabilities: []mesos.MasterInfo_Capability{
			{Type: mesos.MasterInfo_Capability_AGENT_UPDATE},
			{Type: mesos.MasterInfo_Capability_AGENT_DRAINING},
			{Type: mesos.MasterInfo_Capability_Type(quotaV2Capability)},
		},
	}
}

// quotaV2Capability is MasterInfo.Capability.Type QUOTA_V2 in Mesos 1.12.
const quotaV2Capability = 3

var (
	quotaV2JSONFrom = []byte(`{"type":"AGENT_DRAINING"},{"type":"3"}]`)
	quotaV2JSONTo   = []byte(`{"type":"AGENT_DRAINING"},{"type":"QUOTA_V2"}]`)
)

// ---- sorted helpers ----

func (m *Master) sortedAgentsLocked() []*agent {
	out := make([]*agent, 0, len(m.agentOrder))
	for _, id := range m.agentOrder {
		if a := m.agents[id]; a != nil {
			out = append(out, a)
		}
	}
	return out
}

func (m *Master) sortedFrameworksLocked() []*framework {
	out := make([]*framework, 0, len(m.frameworks))
	for _, fw := range m.frameworks {
		out = append(out, fw)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}

var errClosed = errors.New("mesossim: master closed")

var _ = scheduler.Event_HEARTBEAT
