package main

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/sparkpack/sparkpack/api"
	"github.com/sparkpack/sparkpack/intake"
	"github.com/sparkpack/sparkpack/internal/tlsutil"
	"github.com/sparkpack/sparkpack/leader"
	"github.com/sparkpack/sparkpack/learned"
	"github.com/sparkpack/sparkpack/metrics"
	"github.com/sparkpack/sparkpack/offers"
	"github.com/sparkpack/sparkpack/scheduler"
	"github.com/sparkpack/sparkpack/sparksubmit"
	"github.com/sparkpack/sparkpack/store"
)

// haConfig is the leadership part of serve's flags.
type haConfig struct {
	instance  string
	advertise string
	ttl       time.Duration
	renew     time.Duration
	retry     time.Duration
	// rescan is how often the leader looks for waiting jobs it never heard
	// of (0: never).
	rescan time.Duration
	// modelRefresh is how often a follower's learned model catches up
	// with the run history (0: never; followModel).
	modelRefresh time.Duration
}

// leadership runs several sparkpack instances over one database: each
// campaigns for the lease (package leader); the leader runs the scheduler
// core and the Mesos framework on a fenced view of the store, the others
// serve the API and forward the scheduler's views to it. It stands in for
// the scheduler in the API (Notifier, admission, views, driver commands)
// whichever instance leads.
type leadership struct {
	c      serveConfig
	st     *store.Store
	broker *api.Broker
	m      *metrics.Metrics
	log    *logrus.Logger
	el     *leader.Elector
	submit sparksubmit.Options // for the driver command of jobs shown on followers

	// model is the learned run-time model (docs/learning.md): loaded from
	// the run history at start and at every term, fed by the core while
	// leading, catching up with the history while following (followModel).
	model *learned.Model
	// modelMu serialises the model's reloads and catch-ups with the terms;
	// leading (a term's core teaches the model) and stale (a term ended:
	// reload before catching up again) are under it.
	modelMu      sync.Mutex
	leading      bool
	stale        bool
	followFailed bool
	// history and startTerm replace the store's run history and
	// startLive when set (tests).
	history   learned.History
	startTerm func(context.Context, leader.Lease) (*live, error)

	cur atomic.Pointer[live]
	// ledUntil is when this instance last stopped leading (unix nanos).
	ledUntil atomic.Int64
	// leaderURL caches where the leader's API answers, for followers.
	mu        sync.Mutex
	leaderURL *url.URL
	checked   time.Time
}

func newLeadership(c serveConfig, st *store.Store, broker *api.Broker, m *metrics.Metrics, log *logrus.Logger) (*leadership, error) {
	h := &leadership{c: c, st: st, broker: broker, m: m, log: log, model: learned.New()}
	el, err := leader.New(leader.Config{Instance: c.ha.instance, URL: c.ha.advertise, TTL: c.ha.ttl, Renew: c.ha.renew,
		Retry: c.ha.retry, Log: log.WithField("instance", c.ha.instance),
		OnChange: func(lead bool, l leader.Lease) {
			m.Leadership(lead)
			broker.Publish("leader", map[string]any{"leader": lead, "instance": c.ha.instance, "token": l.Token})
		}}, st)
	if err != nil {
		return nil, err
	}
	h.el = el
	// While this instance leads, the API hands the jobs it stores to the
	// core itself (JobSubmitted): their group commits need not announce
	// them, which lets PostgreSQL flush them together.
	st.SetDirectIntake(func() bool { return h.cur.Load() != nil && el.Valid() })
	// The gauges other parts own (queues, cost, power) are read from the
	// current term's scheduler at every scrape; zero while not leading.
	m.OnScrape(func() {
		if lv := h.cur.Load(); lv != nil {
			lv.refreshGauges()
		} else {
			m.NotLeading()
		}
	})
	sparkMaster := c.mesos.sparkMaster
	if sparkMaster == "" {
		if ep, err := offers.NewEndpoint(c.mesos.master, "", ""); err == nil {
			sparkMaster = ep.SparkMaster()
		}
	}
	h.submit = sparksubmit.Options{Master: sparkMaster, SparkSubmit: c.mesos.sparkSubmit, ExecutorDockerImage: c.mesos.executorImage,
		Principal: c.mesos.sparkPrincipal, SecretFile: c.mesos.sparkSecretFile, SparkHome: c.mesos.sparkHome}
	return h, nil
}

// run campaigns until ctx ends, leading whenever elected.
func (h *leadership) run(ctx context.Context) {
	_ = h.el.Run(ctx, h.lead)
}

// lead is the leader's term: the scheduler and the framework on the store
// fenced with this term's token, and the notifications of jobs stored or
// cancelled through any instance. Everything stops when ctx does.
func (h *leadership) lead(ctx context.Context, lease leader.Lease) {
	log := h.log.WithFields(logrus.Fields{"instance": h.c.ha.instance, "token": lease.Token})
	started := time.Now()
	h.modelMu.Lock()
	h.leading = true
	h.modelMu.Unlock()
	defer func() {
		// The core taught the model runs it read no ID of: the next
		// catch-up reloads first.
		h.modelMu.Lock()
		h.leading, h.stale = false, true
		h.modelMu.Unlock()
	}()
	// The runs recorded while another instance led count too; the
	// scheduler does not wait for them (docs/learning.md, "Loading in the
	// background"): it starts with what the model knew, and the load
	// stops when the term does.
	defer h.loadModelInBackground(ctx, log)()
	lv, err := h.startScheduler(ctx, lease)
	if err != nil {
		log.WithError(err).Error("cannot start the scheduler as leader; stepping down so another instance can try")
		return
	}
	h.cur.Store(lv)
	log.WithField("startup", time.Since(started).Round(time.Millisecond).String()).Info("leading: scheduler and Mesos framework started")
	in := intake.New(lv.core, h.st, log.WithField("component", "intake"), h.m.FoundLostJobs)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		err := store.Listen(ctx, h.c.databaseURL, store.JobEvents{
			Submitted: func(ids []string) { in.Submitted(ctx, ids) },
			Cancelled: in.Cancelled,
			Resync:    func() { in.Resync(ctx) },
		}, log.WithField("component", "notifications"))
		if err != nil && ctx.Err() == nil {
			log.WithError(err).Error("cannot listen for job notifications; jobs stored by other instances reach this one only at the next leader change")
		}
	}()
	if h.c.ha.rescan > 0 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			in.RescanLost(ctx, h.c.ha.rescan)
		}()
	}
	<-ctx.Done()
	h.ledUntil.Store(time.Now().UnixNano())
	h.cur.Store(nil)
	lv.wait()
	wg.Wait()
}

// ---- the API's view of the scheduler ---------------------------------------

// JobSubmitted implements api.Notifier: on the leader the core hears at
// once; elsewhere the database's notification reaches the leader; an
// instance whose term ended while the job was stored announces it
// (intake.RouteOf decides).
func (h *leadership) JobSubmitted(j scheduler.Job) {
	lv := h.cur.Load()
	switch intake.RouteOf(lv != nil, h.el.Valid(), time.Since(time.Unix(0, h.ledUntil.Load()))) {
	case intake.ToCore:
		lv.core.JobSubmitted(j)
		return
	case intake.Announced:
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := h.st.Announce(ctx, []string{j.ID}); err != nil {
		h.log.WithError(err).WithField("job", j.ID).Warn("cannot announce a job stored as leadership ended; the leader reads every waiting job when its notification connection reconnects or a new term begins (restarting the leading instance forces one)")
	}
}

// JobCancelled implements api.Notifier.
func (h *leadership) JobCancelled(j scheduler.Job, kill bool) {
	if lv := h.cur.Load(); lv != nil {
		lv.core.JobCancelled(j, kill)
	}
}

// Admit is the API's admission: the core's on the leader; elsewhere only
// what needs no cluster view (a deadline already past).
func (h *leadership) Admit(j *scheduler.Job, now time.Time) string {
	if lv := h.cur.Load(); lv != nil {
		return lv.core.Admit(j, now)
	}
	return scheduler.Admit(j, now, true)
}

// Decide is the API's decision at submission: on the leader the core
// queues the job at once; elsewhere it is stored SUBMITTED and the
// leader admits it.
func (h *leadership) Decide(j *scheduler.Job, now time.Time) scheduler.Decision {
	if lv := h.cur.Load(); lv != nil {
		return lv.core.Decide(j, now)
	}
	return scheduler.Decision{Reject: scheduler.Admit(j, now, true)}
}

// DriverCommand is the spark-submit command of a job.
func (h *leadership) DriverCommand(j scheduler.Job) []string {
	if lv := h.cur.Load(); lv != nil {
		return lv.driverCommand(j)
	}
	argv, err := sparksubmit.Command(j, h.submit)
	if err != nil {
		return nil
	}
	return argv
}

// JobCosts is the jobs' attributed costs (api.Config.JobCosts), on every
// instance from the stored ledger; on the leader its meter's figures of
// this term replace the ledger's (they are newer by up to a save period).
func (h *leadership) JobCosts(ctx context.Context, ids []string) map[string]float64 {
	writer := ""
	var mem map[string]scheduler.Usage
	if lv := h.cur.Load(); lv != nil && len(ids) > 0 {
		writer = lv.core.CostMeter().Writer()
		mem, _ = lv.core.Attributed(ids...)
	}
	stored, err := h.st.JobCosts(ctx, ids, writer)
	if err != nil {
		h.log.WithError(err).Warn("reading the jobs' costs failed; they are shown without")
		stored = nil
	}
	out := make(map[string]float64, len(ids))
	for _, id := range ids {
		c, ok := stored[id]
		m, live := mem[id]
		switch {
		case live:
			out[id] = c.All.CostUSD - c.Writer.CostUSD + m.CostUSD
		case ok:
			out[id] = c.All.CostUSD
		}
	}
	return out
}

// RunPrediction is api.Config.RunPrediction: on the leader, the
// prediction its scheduler made at the start of job id's current run.
func (h *leadership) RunPrediction(id string) *api.JobPrediction {
	lv := h.cur.Load()
	if lv == nil {
		return nil
	}
	p, ok := lv.core.RunPrediction(id)
	if !ok {
		return nil
	}
	return &api.JobPrediction{P50Seconds: p.P50, P90Seconds: p.P90, Level: p.Level}
}

// Cluster, Queues and Cost implement api.Views on the leader (followers
// forward these requests: Forward).
func (h *leadership) Cluster(ctx context.Context) (api.ClusterView, error) {
	if lv := h.cur.Load(); lv != nil {
		return lv.Cluster(ctx)
	}
	return api.ClusterView{}, h.notLeading()
}

func (h *leadership) Queues(ctx context.Context, q api.QueuesQuery) (api.QueuesView, error) {
	if lv := h.cur.Load(); lv != nil {
		return lv.Queues(ctx, q)
	}
	return api.QueuesView{}, h.notLeading()
}

func (h *leadership) Cost(ctx context.Context) (api.CostView, error) {
	if lv := h.cur.Load(); lv != nil {
		return lv.Cost(ctx)
	}
	return api.CostView{}, h.notLeading()
}

// notLeading is the views' error on an instance that does not lead and
// knows no leader to forward to (an election or the leader's start-up).
func (h *leadership) notLeading() error {
	return fmt.Errorf("%w: this instance (%s) does not lead and no other instance leads yet; an election takes up to --leader-lease (see GET /api/v1/leader)",
		api.ErrNoScheduler, h.c.ha.instance)
}

// settle waits, at most max, until this instance leads with its
// scheduler started or another live instance leads.
func (h *leadership) settle(ctx context.Context, max time.Duration) {
	deadline := time.Now().Add(max)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		if h.cur.Load() != nil {
			return
		}
		qctx, cancel := context.WithTimeout(ctx, time.Second)
		l, err := h.st.Current(qctx)
		cancel()
		if err == nil && l.Live && l.Instance != h.c.ha.instance {
			return
		}
		select {
		case <-ctx.Done():
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Forward names the leader to forward the views to, nil on the leader.
func (h *leadership) Forward() *url.URL {
	if h.cur.Load() != nil {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if time.Since(h.checked) > time.Second {
		h.checked = time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		l, err := h.st.Current(ctx)
		cancel()
		h.leaderURL = nil
		if err == nil && l.Live && l.URL != "" && l.Instance != h.c.ha.instance {
			if u, err := url.Parse(l.URL); err == nil {
				h.leaderURL = u
			}
		}
	}
	return h.leaderURL
}

// Status answers GET /api/v1/leader.
func (h *leadership) Status(ctx context.Context) (any, error) {
	return h.el.Status(ctx)
}

// defaultInstance is HOSTNAME:PORT of the API listener: a restarted
// process on the same host and port is the same instance, which takes its
// own lease back at once.
func defaultInstance(listen string) string {
	host, _ := os.Hostname()
	_, port, _ := net.SplitHostPort(listen)
	return host + ":" + port
}

// defaultAdvertise is the API's URL as other instances reach it.
func defaultAdvertise(scheme, addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return scheme + "://" + addr
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		if h, err := os.Hostname(); err == nil {
			host = h
		}
	}
	return scheme + "://" + net.JoinHostPort(host, port)
}

// preflight checks at start what the leader's term would fail on: the
// Mesos secret and CA files, the master address and the power provider,
// so that a bad setting is an error at start, not a loop of failed terms.
func preflight(mc mesosConfig, log *logrus.Logger) error {
	if mc.secretFile != "" {
		if _, err := os.ReadFile(mc.secretFile); err != nil {
			return fmt.Errorf("--mesos-secret-file: %w", err)
		}
	}
	if _, err := offers.NewEndpoint(mc.master, "", ""); err != nil {
		return fmt.Errorf("--mesos-master: %w", err)
	}
	if mc.caFile != "" {
		if _, err := tlsutil.ClientConfig(mc.caFile); err != nil {
			return fmt.Errorf("--mesos-ca-file: %w", err)
		}
	}
	if mc.power.offAfter > 0 {
		if _, err := mc.power.newProvider(mc.master, log.WithField("component", "power")); err != nil {
			return fmt.Errorf("power management: %w", err)
		}
	}
	return nil
}

// startScheduler starts the term's scheduler and Mesos framework on the
// store fenced with lease's token (startTerm instead when set: tests).
func (h *leadership) startScheduler(ctx context.Context, lease leader.Lease) (*live, error) {
	if h.startTerm != nil {
		return h.startTerm(ctx, lease)
	}
	return startLive(ctx, h.c.mesos, h.c.policy, h.st.Fenced(lease.Token), h.broker, h.m, h.log, h.el.Check, h.model)
}

// runHistory is where the model loads the run history from: the store
// (history when set: tests).
func (h *leadership) runHistory() learned.History {
	if h.history != nil {
		return h.history
	}
	return h.st
}

// loadModelInBackground reloads the model from the run history in a
// goroutine owned by the returned stop, which cancels the load (when not
// done yet) and waits for it: the model answers with what it knew until
// the load swaps in what it built.
func (h *leadership) loadModelInBackground(ctx context.Context, log logrus.FieldLogger) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.loadModel(ctx, log)
	}()
	return func() {
		cancel()
		<-done
	}
}

// loadModel (re)loads the learned run-time model from the run history; on
// failure the model keeps what it knew (the prior at worst).
func (h *leadership) loadModel(ctx context.Context, log logrus.FieldLogger) {
	started := time.Now()
	n, err := h.model.Reload(ctx, h.runHistory())
	if err != nil {
		if ctx.Err() != nil {
			log.WithError(err).Debug("run history load stopped")
			return
		}
		log.WithError(err).Warn("cannot load the run history; run times are learned from the runs that end from now on")
		return
	}
	log.WithFields(logrus.Fields{"runs": n, "signatures": len(h.model.Summaries()), "took": time.Since(started).Round(time.Millisecond).String()}).
		Info("learned run-time model loaded from the run history")
}

// RightSize is the API's right-sizing of "executors": "auto" jobs.
func (h *leadership) RightSize(j *scheduler.Job, now time.Time) error {
	return h.model.RightSize(j, now)
}

// Models is the learned model, for the views (GET /api/v1/models).
func (h *leadership) Models() *learned.Model { return h.model }

// followModel keeps a follower's learned model up with the run history
// until ctx ends: every period it learns the runs the leader recorded
// since it last looked (learned.Model.Catchup), so that the "executors":
// "auto" jobs submitted through any instance are right-sized, and its job
// views predicted, with what the leader knows (docs/learning.md). The
// leader's model learns from its core instead. period <= 0: never.
func (h *leadership) followModel(ctx context.Context, period time.Duration) {
	if period <= 0 {
		return
	}
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		n, err := h.followStep(ctx, time.Now())
		h.modelMu.Lock()
		failed, was := err != nil, h.followFailed
		h.followFailed = failed
		h.modelMu.Unlock()
		switch {
		case failed && !was && ctx.Err() == nil:
			h.log.WithError(err).Warn("cannot catch up with the run history; this instance right-sizes with what its model knew (retrying)")
		case n > 0:
			h.log.WithFields(logrus.Fields{"runs": n, "instance": h.c.ha.instance}).Debug("learned model caught up with the run history")
		}
	}
}

// followStep is one catch-up of followModel (at now): nothing while this
// instance leads; a reload after it led; else the runs recorded since the
// last one. It returns how many finished runs the model learned.
func (h *leadership) followStep(ctx context.Context, now time.Time) (int, error) {
	h.modelMu.Lock()
	defer h.modelMu.Unlock()
	if h.leading {
		return 0, nil
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if h.stale {
		n, err := h.model.Reload(ctx, h.st)
		if err != nil {
			return 0, err
		}
		h.stale = false
		return n, nil
	}
	return h.model.Catchup(ctx, h.st, now, learned.DefaultSettle)
}
