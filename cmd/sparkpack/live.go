package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/sirupsen/logrus"

	"github.com/sparkpack/sparkpack/api"
	"github.com/sparkpack/sparkpack/internal/latest"
	"github.com/sparkpack/sparkpack/internal/tlsutil"
	"github.com/sparkpack/sparkpack/metrics"
	"github.com/sparkpack/sparkpack/offers"
	"github.com/sparkpack/sparkpack/placement"
	"github.com/sparkpack/sparkpack/power"
	"github.com/sparkpack/sparkpack/scheduler"
	"github.com/sparkpack/sparkpack/sparksubmit"
	"github.com/sparkpack/sparkpack/store"
	"github.com/sparkpack/sparkpack/warmlive"
)

// mesosConfig is how serve reaches Mesos and what Spark drivers get.
type mesosConfig struct {
	master string
	// teams holds the teams configuration in force (serve --teams; nil without).
	teams *teamsHolder
	// caFile, if set, holds the CA certificates of an https:// master.
	caFile          string
	principal       string
	secretFile      string
	role            string
	sparkMaster     string
	sparkSubmit     string
	executorImage   string
	sparkPrincipal  string
	sparkSecretFile string
	sparkHome       string
	prices          string
	admission       string
	ordering        string
	promoteAfter    time.Duration
	refresh         time.Duration
	sweep           time.Duration
	offerHold       time.Duration
	reserveMode     string
	launchTimeout   time.Duration
	// durationScale turns job estimates into wall time (1/--sim-speed in the demo).
	durationScale float64
	confirm       time.Duration // --reserve-timeout
	power         powerConfig
	preempt       preemptConfig
	// budgets, if set, holds the teams over their budget (chargeback).
	budgets scheduler.BudgetHolds
}

// newPinner is the reserver --reserve-mode names, bounded by
// --reserve-timeout.
func newPinner(mc mesosConfig, fw *offers.Framework, op *offers.Operator, j offers.Journal, log logrus.FieldLogger) offers.Pinner {
	if mc.reserveMode == "offers" {
		return &offers.OfferReserver{Framework: fw, Op: op, Journal: j, Principal: mc.principal, Log: log, Timeout: mc.confirm}
	}
	return &offers.Reserver{Op: op, Journal: j, Principal: mc.principal, Log: log, ConfirmTimeout: mc.confirm}
}

// live is the running scheduler: the core, the Mesos framework and the
// cluster adapter, with the views the dashboard reads.
type live struct {
	core    *scheduler.Core
	cluster *offers.Cluster
	op      *offers.Operator // the master's operator API (also the agents' files API: logs.go)
	fw      *offers.Framework
	st      *store.Store
	submit  sparksubmit.Options
	stats   *statRing
	broker  *api.Broker
	wg      sync.WaitGroup
	// durationScale turns job estimates into wall time.
	durationScale float64
	metrics       *metrics.Metrics
	sparkMaster   func() string  // if set, gives submit.Master now (the leading master)
	power         *power.Manager // nil when power management is off
	bill          *billSource    // the emulator's bill, when its provider is in use
	names         jobNames       // job names for the cluster view
	hosts         hostOrder      // the cluster view's order
	// views is the cluster view, built by its owner goroutine once per
	// change of the cluster (clusterview.go); requests read the last built.
	views *latest.Value[clusterSnap]
	// viewSig is the signature of the last view the dashboard was told of
	// (read and written by the views' owner only).
	viewSig    uint64
	viewSigSet bool
	// cameOn is which agents power management turned on after which view
	// build (powerChanged, agentPower).
	cameOn cameOnAfter

	// costBase is the saved cost meter's total this term adds to (costmeter.go).
	costBase costBase

	// agentsMu guards a short-lived copy of the agents for jobCost.
	agentsMu sync.Mutex
	agentsAt time.Time
	agentsBy map[string]offers.Agent

	// warm is the live warm pool (warmpool.go); warmAhead the agents it
	// powered on ahead, as last counted in the metrics.
	warm      *warmlive.Runner
	warmAhead int
}

// startLive connects the scheduler core to Mesos. Its goroutines end when
// ctx does; wait() waits for them.
// guard, if set, is asked before every call to Mesos and every power
// provider call (the leadership check of package leader).
func startLive(ctx context.Context, mc mesosConfig, policy string, st *store.Store, broker *api.Broker, m *metrics.Metrics, log *logrus.Logger, guard func() error, model scheduler.RunModel) (*live, error) {
	secret := ""
	if mc.secretFile != "" {
		b, err := os.ReadFile(mc.secretFile)
		if err != nil {
			return nil, fmt.Errorf("--mesos-secret-file: %w", err)
		}
		secret = strings.TrimSpace(string(b))
	}
	var epOpts []offers.EndpointOption
	if mc.caFile != "" || strings.HasPrefix(mc.master, "https://") {
		tc, err := tlsutil.ClientConfig(mc.caFile)
		if err != nil {
			return nil, fmt.Errorf("--mesos-ca-file: %w", err)
		}
		epOpts = append(epOpts, offers.WithTLS(tc))
	}
	if guard != nil {
		epOpts = append(epOpts, offers.WithGuard(guard))
	}
	epOpts = append(epOpts, offers.WithLogger(log.WithField("component", "mesos-master")))
	ep, err := offers.NewEndpoint(mc.master, mc.principal, secret, epOpts...)
	if err != nil {
		return nil, err
	}
	context.AfterFunc(ctx, ep.Close) // the ZooKeeper session of a zk:// master
	if !ep.TLS() && mc.principal != "" {
		log.WithField("mesos_master", ep.Base()).Warn("the Mesos principal's secret goes to the master over plain http; use an https:// --mesos-master (with --mesos-ca-file) where the network is not trusted")
	}
	prices, err := offers.ParsePriceTable(mc.prices)
	if err != nil {
		return nil, fmt.Errorf("--prices: %w", err)
	}
	sparkMaster := mc.sparkMaster
	var sparkMasterNow func() string
	if sparkMaster == "" {
		// The leader at each launch (zk:// as given).
		sparkMaster, sparkMasterNow = ep.SparkMaster(), ep.SparkMaster
	}
	op := offers.NewOperator(ep)
	l := &live{st: st, op: op, stats: newStatRing(600), broker: broker, durationScale: mc.durationScale, metrics: m}
	l.views = latest.New(l.buildClusterView, latest.Options[clusterSnap]{Gap: clusterViewGap, Published: l.clusterViewPublished})
	if l.durationScale <= 0 {
		l.durationScale = 1
	}
	l.sparkMaster = sparkMasterNow
	l.submit = sparksubmit.Options{Master: sparkMaster, SparkSubmit: mc.sparkSubmit, ExecutorDockerImage: mc.executorImage,
		Principal: mc.sparkPrincipal, SecretFile: mc.sparkSecretFile, SparkHome: mc.sparkHome}
	flog := log.WithField("component", "framework")
	sink := &lateSink{}
	fw := offers.NewFramework(offers.FrameworkConfig{Role: mc.role, Principal: mc.principal, OfferHold: mc.offerHold, Observer: m}, offers.NewSchedClient(ep, flog), st, sink, flog)
	pinner := countingPinner{Pinner: newPinner(mc, fw, op, st, log.WithField("component", "reserver")), m: m}
	if mc.reserveMode == "offers" {
		log.Warn("reserving from offers (--reserve-mode offers): without operator credentials no quota limit keeps Spark inside the reservations")
	}
	pm, err := startPower(ctx, mc.power, mc.master, mc.refresh, op, st, log, guard, l.powerChanged)
	if err != nil {
		return nil, fmt.Errorf("power management: %w", err)
	}
	l.power = pm
	ccfg := offers.ClusterConfig{
		Operator:      op,
		Reserver:      pinner,
		Framework:     fw,
		Store:         st,
		Prices:        prices,
		Submit:        l.submit,
		SparkMaster:   sparkMasterNow,
		Refresh:       mc.refresh,
		Sweep:         mc.sweep,
		LaunchTimeout: mc.launchTimeout,
		AgentWait:     mc.power.onTimeout,
		Log:           log,
		OnChange:      l.views.Changed,
	}
	var provisioner scheduler.Provisioner
	var standby scheduler.Standby
	if pm != nil {
		ccfg.Unavailable, ccfg.AgentFailed = pm.Unavailable, pm.Failed
		provisioner, standby = pm, pm
		if mc.power.provider == "emulator" {
			base := mc.power.emulatorURL
			if base == "" {
				base = ep.Base()
			}
			l.bill = &billSource{url: strings.TrimRight(base, "/") + "/sim/bill", client: &http.Client{Timeout: 2 * time.Second}, scale: l.durationScale}
		}
	}
	cluster := offers.NewCluster(ccfg)
	core, err := scheduler.New(scheduler.Config{
		Policy:         policy,
		Teams:          mc.teams,
		Admission:      scheduler.AdmissionMode(mc.admission),
		Ordering:       scheduler.Ordering(mc.ordering),
		PromoteAfter:   mc.promoteAfter,
		DurationScale:  mc.durationScale,
		Preemption:     scheduler.PreemptionPolicy(mc.preempt.policy),
		PreemptProtect: mc.preempt.protect, PreemptMaxShare: mc.preempt.maxShare, MaxPreemptions: mc.preempt.max,
		Provisioner: provisioner,
		Standby:     standby,
		Budgets:     mc.budgets,
		DriverRoom:  true, // offers.Cluster keeps room for the drivers of the jobs it starts
		Log:         log.WithField("component", "scheduler"),
		Observer:    coreObserver{l: l, m: m, broker: broker, log: log},
		Model:       model,
	}, cluster, st, scheduler.SystemClock{})
	if err != nil {
		return nil, err
	}
	cluster.SetReporter(core)
	sink.c = cluster
	l.core, l.cluster, l.fw = core, cluster, fw
	wp, err := startWarmPool(mc, st, core, cluster, pm, log, l.warmApplied)
	if err != nil {
		return nil, fmt.Errorf("warm pool: %w", err)
	}
	l.warm = wp
	if err := cluster.Start(ctx); err != nil {
		return nil, err
	}
	l.wg.Add(6)
	go func() { defer l.wg.Done(); l.views.Run(ctx) }()
	go func() { defer l.wg.Done(); l.sample(ctx, 2*time.Second) }()
	go func() { defer l.wg.Done(); l.keepCostMeter(ctx, st, log.WithField("component", "cost")) }()
	go func() {
		defer l.wg.Done()
		if err := core.Run(ctx); err != nil && ctx.Err() == nil {
			log.WithError(err).Error("scheduler core stopped; restart sparkpack")
		}
	}()
	go func() {
		defer l.wg.Done()
		if err := fw.Run(ctx, offers.RunOptions{}); err != nil && ctx.Err() == nil {
			log.WithError(err).Error("Mesos framework stopped (was it torn down? remove the stored framework id to register anew)")
		}
	}()
	go func() { defer l.wg.Done(); cluster.Wait() }()
	l.wg.Add(1)
	go func() { defer l.wg.Done(); wp.Run(ctx) }()
	if pm != nil {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			pm.Run(ctx, mc.power.tick, func(context.Context) power.View {
				// How current the agents are goes with them: on a stale
				// view (GET_AGENTS failing, or not answering) power
				// management decides no power-off (power/stale.go).
				// Agents only in recovered_agents (a master that failed
				// over) are held, not taken for gone.
				statuses, recovered, at, err := cluster.AgentsView()
				return power.View{Agents: powerAgents(statuses), ReadAt: at, Err: err, Recovered: recovered, Every: cluster.ReadEvery()}
			}, func(a power.Agent) bool { return core.CouldUse(a.CPUs, a.MemMB) || wp.Wanted(a.ID) })
		}()
	}
	return l, nil
}

func (l *live) wait() { l.wg.Wait() }

// driverCommand is the spark-submit argument vector a job's driver runs.
func (l *live) driverCommand(j scheduler.Job) []string {
	so := l.submit
	if l.sparkMaster != nil {
		so.Master = l.sparkMaster()
	}
	argv, err := sparksubmit.Command(j, so)
	if err != nil {
		return nil
	}
	return argv
}

// agentIndex is the agents by id (those gone too), at most 2 s old.
func (l *live) agentIndex() map[string]offers.Agent {
	l.agentsMu.Lock()
	defer l.agentsMu.Unlock()
	if l.agentsBy == nil || time.Since(l.agentsAt) > 2*time.Second {
		m := map[string]offers.Agent{}
		for _, a := range l.cluster.Agents() {
			m[a.ID] = a.Agent
		}
		l.agentsBy, l.agentsAt = m, time.Now()
	}
	return l.agentsBy
}

// ---- api.Views ----------------------------------------------------------

// Cluster answers from the view last built (by l.views' owner, once per
// change of the cluster): a request never builds nor waits for a build,
// except the first ones of a term, which wait for the first build (it
// starts as serve does, once the first GET_AGENTS is read).
func (l *live) Cluster(ctx context.Context) (api.ClusterView, error) {
	snap, err := l.views.Wait(ctx)
	if err != nil {
		return api.ClusterView{}, fmt.Errorf("cluster view: waiting for the first build: %w", err)
	}
	// The views are shared between requests; the page copies its agents.
	out := api.ClusterView{Agents: snap.agents}
	if l.power != nil {
		// Power states change without the cluster's version: read now.
		out.PowerOf = func(id, state string) string {
			s := l.power.StateOf(id)
			return agentPower(s, state, state == "off" && s == power.StateOn && l.cameOn.since(id, snap.powerSeq))
		}
		out.PowerDetail = func(id string) (time.Time, string) {
			r, ok := l.power.RecordOf(id)
			if !ok {
				return time.Time{}, ""
			}
			if r.Failures == 0 {
				r.LastError = ""
			}
			return r.Since, r.LastError
		}
	}
	return out, nil
}

// buildClusterView is the views' build (their owner's only): it reads the
// agents and the names of the jobs on them (the I/O), then builds the
// view from those (buildClusterSnap). A name not read makes it
// incomplete: built again a little later.
func (l *live) buildClusterView(ctx context.Context) (clusterSnap, bool) {
	if l.power == nil {
		return l.buildClusterViewOf(ctx, l.cluster.Agents)
	}
	return l.buildClusterViewOf(ctx, func() []offers.AgentState { return withUnlistedOff(l.cluster.Agents(), l.power.Records()) })
}

// buildClusterViewOf is buildClusterView from agents (the cluster's now).
// It notes the power changes counted before it reads them (see
// cameOnAfter).
func (l *live) buildClusterViewOf(ctx context.Context, agents func() []offers.AgentState) (clusterSnap, bool) {
	seq := l.cameOn.now()
	as := agents()
	names := l.names.resolve(ctx, l.st, holderIDs(as))
	snap, complete := buildClusterSnap(as, func(id string) (string, bool) {
		n, ok := names[id]
		return n, ok
	}, &l.hosts)
	snap.powerSeq = seq
	return snap, complete
}

// clusterViewPublished tells the dashboard when a new view shows
// something its cluster panel shows differently (the view is there to be
// read by then).
func (l *live) clusterViewPublished(snap *clusterSnap) {
	l.cameOn.published(snap.powerSeq)
	if l.viewSigSet && snap.sig == l.viewSig {
		return
	}
	l.viewSig, l.viewSigSet = snap.sig, true
	l.broker.Publish("cluster", map[string]int{"activeAgents": snap.active})
}

// powerChanged tells the dashboard that an agent's power state moved.
// The cluster view reads power states per request, so nothing needs
// rebuilding, but the view's signature does not show them: without this
// event an agent could stay "powering off" on the dashboard, the view
// having been published (for the agent leaving Mesos) before power
// management recorded it off.
func (l *live) powerChanged(r power.Record) {
	l.cameOn.changed(r)
	active := 0
	if snap := l.views.Load(); snap != nil {
		active = snap.active
	}
	l.broker.Publish("cluster", map[string]int{"activeAgents": active})
}

// naturalLess orders "agent-2" before "agent-10".
func naturalLess(a, b string) bool {
	for a != "" && b != "" {
		da, db := digitsPrefix(a), digitsPrefix(b)
		if da != "" && db != "" {
			na, _ := strconv.Atoi(da)
			nb, _ := strconv.Atoi(db)
			if na != nb {
				return na < nb
			}
			a, b = a[len(da):], b[len(db):]
			continue
		}
		if a[0] != b[0] {
			return a[0] < b[0]
		}
		a, b = a[1:], b[1:]
	}
	return len(a) < len(b)
}

func digitsPrefix(s string) string {
	i := 0
	for i < len(s) && i < 9 && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return s[:i]
}

func (l *live) Queues(ctx context.Context, q api.QueuesQuery) (api.QueuesView, error) {
	return api.QueuesPage(l.core, q, time.Now(), l.durationScale)
}

func (l *live) Cost(ctx context.Context) (api.CostView, error) {
	base, ok := l.costBase.ready()
	if !ok {
		return api.CostView{}, errCostResuming{}
	}
	r := l.core.Cost()
	v := api.CostView{TotalUSD: base + r.TotalUSD, BurnRateUSDPerHour: r.BurnRateUSDPerHour, Series: []api.CostPoint{}, Stats: l.stats.points()}
	if b := l.bill.get(ctx); b != nil {
		v.Bill = &api.BillView{TotalUSD: b.TotalUSD, AlwaysOnUSD: b.AlwaysOnUSD, Seconds: b.Seconds}
	}
	now := time.Now()
	var d api.DeadlineCounts
	var err error
	if d.Met, d.Missed, err = l.st.DeadlineOutcomes(ctx); err == nil {
		if d.MetLastHour, d.MissedLastHour, err = l.st.DeadlineOutcomesBetween(ctx, now.Add(-time.Hour), time.Time{}); err == nil {
			d.MetHourBefore, d.MissedHourBefore, err = l.st.DeadlineOutcomesBetween(ctx, now.Add(-2*time.Hour), now.Add(-time.Hour))
		}
	}
	if err == nil {
		v.Deadlines = &d
	}
	for _, p := range r.Series {
		v.Series = append(v.Series, api.CostPoint{T: p.T, TotalUSD: base + p.TotalUSD})
	}
	if t, err := l.st.CostLedgerTotals(ctx, l.core.CostMeter().Writer()); err == nil {
		idle := t.IdleOtherWritersUSD + l.core.CostMeter().IdleUSD(r.At)
		jobs := max(v.TotalUSD-idle, 0)
		v.IdleUSD, v.JobsUSD = &idle, &jobs
	}
	return v, nil
}

// lateSink passes driver status to the cluster adapter, which is built
// after the framework that needs the sink.
type lateSink struct{ c *offers.Cluster }

func (s *lateSink) DriverStatus(ctx context.Context, jobID string, st mesos.TaskStatus) error {
	return s.c.DriverStatus(ctx, jobID, st)
}

// sample records queue lengths, active agents and the mean placement time
// every interval, for the dashboard's small charts.
func (l *live) sample(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		q := l.core.Lengths()
		active := 0
		if snap := l.views.Load(); snap != nil {
			active = snap.active
		}
		base, resumed := l.costBase.ready()
		if resumed { // before, the meter's figure would be lower than the last one shown
			l.stats.sample(q.Deadline, q.Regular, active, base+l.core.CostTotals().TotalUSD, l.bill.get(ctx))
		}
		l.refreshGauges()
		if active > 0 && resumed { // the bill grows only while agents are active
			l.broker.Publish("cost", map[string]float64{"totalUSD": base + l.core.CostTotals().TotalUSD})
		}
	}
}

// refreshGauges sets the metrics whose values other parts own: the
// queues' lengths, the cost meter's total, burn rate and active agents,
// and power management's counts. It runs at every scrape (through the
// leadership, while this term leads) and every sample.
func (l *live) refreshGauges() {
	if l.metrics == nil {
		return
	}
	q := l.core.Lengths()
	l.metrics.QueueLength.WithLabelValues("deadline").Set(float64(q.Deadline))
	l.metrics.QueueLength.WithLabelValues("regular").Set(float64(q.Regular))
	l.metrics.QueueLength.WithLabelValues("intake").Set(float64(q.Intake))
	if base, ok := l.costBase.ready(); ok {
		// Not before the meter resumed from its stored total and the time
		// no meter ran: the counter would go back.
		r := l.core.CostTotals()
		l.metrics.SetCost(base+r.TotalUSD, r.BurnRateUSDPerHour, r.ActiveAgents)
	}
	if b := l.bill.get(context.Background()); b != nil {
		l.metrics.SetPowerSavings(b.AlwaysOnUSD - b.TotalUSD)
	}
	if l.power != nil {
		// As /api/v1/cluster shows them: an agent power management has
		// not stepped yet is on; one gone without a power record was lost.
		counts := map[power.State]int{power.StateOn: 0, power.StateDraining: 0, power.StatePoweringOff: 0, power.StateOff: 0, power.StateBooting: 0}
		for _, a := range l.cluster.Agents() {
			st := l.power.StateOf(a.ID)
			if a.Gone && st == power.StateOn {
				continue
			}
			counts[st]++
		}
		for s, n := range counts {
			l.metrics.AgentsByPower.WithLabelValues(string(s)).Set(float64(n))
		}
	}
}

// countingPinner counts reserve and unreserve outcomes in the metrics.
type countingPinner struct {
	offers.Pinner
	m *metrics.Metrics
}

func (p countingPinner) Reserve(ctx context.Context, j scheduler.Job, plan placement.Plan) error {
	err := p.Pinner.Reserve(ctx, j, plan)
	switch {
	case err == nil:
		p.m.ObserveReservation("reserve", "ok")
	case errors.Is(err, offers.ErrReserveConflict):
		p.m.ObserveReservation("reserve", "conflict")
	case ctx.Err() == nil:
		p.m.ObserveReservation("reserve", "error")
	}
	return err
}

func (p countingPinner) Release(ctx context.Context, jobID string) error {
	err := p.Pinner.Release(ctx, jobID)
	switch {
	case err == nil:
		p.m.ObserveReservation("unreserve", "ok")
	case ctx.Err() == nil:
		p.m.ObserveReservation("unreserve", "error")
	}
	return err
}

// statRing keeps the recent scheduling statistics.
type statRing struct {
	mu      sync.Mutex
	max     int
	pts     []api.StatPoint
	sumMs   float64
	nPlaced int
}

func newStatRing(max int) *statRing { return &statRing{max: max} }

// add runs with the core's lock held: it must not call the core.
func (r *statRing) add(p scheduler.PlacementStat) {
	r.mu.Lock()
	r.sumMs += float64(p.Elapsed.Microseconds()) / 1000
	r.nPlaced++
	r.mu.Unlock()
}

func (r *statRing) sample(deadlineQ, regularQ, active int, meter float64, bill *emulatorBill) {
	r.mu.Lock()
	defer r.mu.Unlock()
	p := api.StatPoint{T: time.Now().UTC(), DeadlineQueue: deadlineQ, RegularQueue: regularQ, ActiveAgents: active, MeterUSD: meter}
	if bill != nil {
		total, always := bill.TotalUSD, bill.AlwaysOnUSD
		p.BillUSD, p.AlwaysOnUSD = &total, &always
	}
	if r.nPlaced > 0 {
		p.PlacementMillis = r.sumMs / float64(r.nPlaced)
	}
	r.sumMs, r.nPlaced = 0, 0
	r.pts = append(r.pts, p)
	if len(r.pts) > r.max {
		r.pts = append(r.pts[:0], r.pts[len(r.pts)-r.max:]...)
	}
}

func (r *statRing) points() []api.StatPoint {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]api.StatPoint{}, r.pts...)
}

var _ api.Views = (*live)(nil)
