package metrics

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
)

// Metrics holds every sparkpack metric on its own registry.
type Metrics struct {
	Registry *prometheus.Registry

	OffersReceived   prometheus.Counter
	OffersDeclined   prometheus.Counter
	DriverLaunches   prometheus.Counter
	Reservations     *prometheus.CounterVec // op=reserve|unreserve, result=ok|conflict|error
	QueueLength      *prometheus.GaugeVec   // queue=deadline|regular
	PlacementSeconds prometheus.Histogram
	PassSeconds      *prometheus.HistogramVec // kind=full|incremental
	// PassMaxSeconds is the longest pass of each kind since the process
	// started: the histogram's buckets (x2.5 apart) cannot tell 70 ms
	// from 150 ms.
	PassMaxSeconds *prometheus.GaugeVec // kind=full|incremental
	OfferToAccept  prometheus.Histogram
	ClusterCostUSD prometheus.Gauge
	// costHigh is the highest cost set while leading: SetCost never
	// lowers ClusterCostUSD (NotLeading zeroes both).
	costMu        sync.Mutex
	costHigh      float64
	BurnRateUSD   prometheus.Gauge
	ActiveAgents  prometheus.Gauge
	AgentsByPower *prometheus.GaugeVec // power=on|draining|powering-off|off|booting
	Leader        prometheus.Gauge
	LeaderChanges prometheus.Counter
	// LostJobsFound counts waiting jobs the leader's rescan found that it
	// had never heard of (their notification was lost).
	LostJobsFound prometheus.Counter
	// RequestsRefused counts requests refused by the access policy, by
	// listener (api, spark-rest) and reason (no_credentials,
	// unknown_token, missing_scope, rate_limited, ...: api.Refused*).
	RequestsRefused *prometheus.CounterVec
	preemptionMetrics
	waitMetrics
	warmPoolMetrics
	mesosMetrics

	mu       sync.Mutex
	onScrape []func()
	passMax  map[string]float64
}

// JobCounter counts jobs by state and deadline jobs by outcome, from
// the stored jobs (package store implements it): the figures survive
// restarts and are the same on every instance.
type JobCounter interface {
	CountByState(ctx context.Context) (map[string]int, error)
	// DeadlineOutcomes counts the deadline jobs that ended: met (FINISHED
	// by the deadline) and missed (FINISHED after it, or FAILED or KILLED
	// after it had passed).
	DeadlineOutcomes(ctx context.Context) (met, missed int, err error)
}

// New makes the metrics; jobs, if not nil, is asked for job counts at
// every scrape (with a 2 s limit).
func New(jobs JobCounter) *Metrics {
	m := &Metrics{
		Registry: prometheus.NewRegistry(),
		OffersReceived: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "sparkpack_offers_received_total", Help: "Mesos offers received."}),
		OffersDeclined: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "sparkpack_offers_declined_total", Help: "Mesos offers declined."}),
		DriverLaunches: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "sparkpack_driver_launches_total", Help: "Spark driver tasks launched (ACCEPT with LAUNCH sent), retries included."}),
		Reservations: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sparkpack_reservation_operations_total", Help: "Reserve and unreserve operations by result."},
			[]string{"op", "result"}),
		QueueLength: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "sparkpack_queue_length", Help: "Jobs waiting, by queue."}, []string{"queue"}),
		PlacementSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "sparkpack_placement_seconds", Help: "Time to compute one job's placement.",
			Buckets: prometheus.ExponentialBuckets(1e-6, 4, 12)}),
		PassSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "sparkpack_scheduling_pass_seconds", Help: "Time of one scheduling pass; full passes look at every waiting job, incremental ones only at new jobs.",
			Buckets: prometheus.ExponentialBuckets(1e-4, 2.5, 12)}, []string{"kind"}),
		PassMaxSeconds: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "sparkpack_scheduling_pass_max_seconds", Help: "The longest scheduling pass of each kind since sparkpack started."}, []string{"kind"}),
		OfferToAccept: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "sparkpack_offer_to_accept_seconds", Help: "Time from receiving an offer to sending its ACCEPT.",
			Buckets: prometheus.ExponentialBuckets(1e-5, 4, 10)}),
		ClusterCostUSD: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "sparkpack_cluster_cost_usd", Help: "Cumulative cost of the agents sparkpack kept active (a reservation or a driver of its own), since its first start: saved every 10 s and resumed at a restart or failover with the time no meter ran estimated; it never goes back while this instance leads."}),
		BurnRateUSD: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "sparkpack_burn_rate_usd_per_hour", Help: "Current hourly price of the active agents."}),
		ActiveAgents: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "sparkpack_active_agents", Help: "Agents holding a sparkpack reservation or driver."}),
		Leader: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "sparkpack_leader", Help: "1 while this instance leads (runs the scheduler and the Mesos framework), else 0."}),
		LeaderChanges: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "sparkpack_leadership_changes_total", Help: "Times this instance became or stopped being the leader."}),
		LostJobsFound: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "sparkpack_lost_jobs_found_total", Help: "Waiting jobs the leader's rescan found that it had never heard of (their notification was lost), queued late."}),
		AgentsByPower: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "sparkpack_agents_power", Help: "Agents by power management state (when power management is on)."}, []string{"power"}),
		RequestsRefused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sparkpack_requests_refused_total", Help: "Requests refused by authentication, scopes, the allowlist or the limits, by listener and reason."},
			[]string{"listener", "reason"}),
	}
	m.Registry.MustRegister(m.OffersReceived, m.OffersDeclined, m.DriverLaunches, m.Reservations, m.QueueLength,
		m.PlacementSeconds, m.PassSeconds, m.PassMaxSeconds, m.OfferToAccept, m.ClusterCostUSD, m.BurnRateUSD, m.ActiveAgents, m.AgentsByPower,
		m.Leader, m.LeaderChanges, m.LostJobsFound, m.RequestsRefused,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m.registerPreemption()
	m.registerWaiting()
	m.registerWarmPool()
	m.registerMesos()
	if jobs != nil {
		m.Registry.MustRegister(&jobCollector{jobs: jobs, desc: prometheus.NewDesc(
			"sparkpack_jobs", "Jobs by state.", []string{"state"}, nil),
			up: prometheus.NewDesc("sparkpack_database_up",
				"1 when this instance read the jobs from PostgreSQL for this scrape, 0 when the database did not answer (sparkpack_jobs is then left out).", nil, nil)})
		m.Registry.MustRegister(&deadlineCollector{jobs: jobs, desc: prometheus.NewDesc(
			"sparkpack_deadline_jobs_ended_total", "Deadline jobs that ended, by outcome: met (finished by the deadline) or missed (finished after it, or failed or killed after it passed); counted from the stored jobs.", []string{"outcome"}, nil)})
	}
	return m
}

// Handler serves the registry in the Prometheus text format. The
// functions given to OnScrape run first, so that gauges owned by other
// parts (cost, active agents) are current. A metric that cannot be
// collected (the database is down) is left out; the rest is served.
func (m *Metrics) Handler() http.Handler {
	g := prometheus.GathererFunc(func() ([]*dto.MetricFamily, error) {
		m.mu.Lock()
		hooks := append([]func(){}, m.onScrape...)
		m.mu.Unlock()
		for _, f := range hooks {
			f()
		}
		return m.Registry.Gather()
	})
	return promhttp.HandlerFor(g, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}

// OnScrape adds a function that sets gauges from their source just before
// every scrape. It must be quick and must not block.
func (m *Metrics) OnScrape(f func()) {
	if m == nil {
		return
	}
	m.mu.Lock()
	m.onScrape = append(m.onScrape, f)
	m.mu.Unlock()
}

// ObserveOffers counts offers received from Mesos (package offers' Observer).
func (m *Metrics) ObserveOffers(n int) {
	if m != nil && n > 0 {
		m.OffersReceived.Add(float64(n))
	}
}

// ObserveDeclines counts offers declined.
func (m *Metrics) ObserveDeclines(n int) {
	if m != nil && n > 0 {
		m.OffersDeclined.Add(float64(n))
	}
}

// ObserveAccept records the time from an offer's arrival to its ACCEPT.
func (m *Metrics) ObserveAccept(held time.Duration) {
	if m != nil {
		m.OfferToAccept.Observe(held.Seconds())
	}
}

// ObserveDriverLaunch counts a driver task launched.
func (m *Metrics) ObserveDriverLaunch() {
	if m != nil {
		m.DriverLaunches.Inc()
	}
}

// ObserveReservation counts one reserve or unreserve of a job's
// resources: op is reserve or unreserve, result ok, conflict or error.
func (m *Metrics) ObserveReservation(op, result string) {
	if m != nil {
		m.Reservations.WithLabelValues(op, result).Inc()
	}
}

// SetCost sets the cost gauges from sparkpack's cost meter. The total is
// cumulative: a lower one than already set (while leading) is ignored.
func (m *Metrics) SetCost(totalUSD, burnUSDPerHour float64, activeAgents int) {
	if m != nil {
		m.costMu.Lock()
		m.costHigh = max(m.costHigh, totalUSD)
		m.ClusterCostUSD.Set(m.costHigh)
		m.costMu.Unlock()
		m.BurnRateUSD.Set(burnUSDPerHour)
		m.ActiveAgents.Set(float64(activeAgents))
	}
}

// NotLeading zeroes the gauges only the leader knows (queues, cost, burn
// rate, active agents, power counts): an instance that does not lead has
// no scheduler to read them from.
func (m *Metrics) NotLeading() {
	if m == nil {
		return
	}
	m.QueueLength.Reset()
	m.costMu.Lock()
	m.costHigh = 0 // the next term's leader starts from the stored total
	m.costMu.Unlock()
	m.SetCost(0, 0, 0)
	m.AgentsByPower.Reset()
	m.WarmCPUs.Set(0)
	m.ForecastArrivalsP50.Set(0)
}

// Refused counts one refused request (api.Guard's Refused hook).
func (m *Metrics) Refused(listener, reason string) {
	if m != nil {
		m.RequestsRefused.WithLabelValues(listener, reason).Inc()
	}
}

// Leadership records that this instance became (true) or stopped being
// the leader.
func (m *Metrics) Leadership(lead bool) {
	if m == nil {
		return
	}
	m.LeaderChanges.Inc()
	if lead {
		m.Leader.Set(1)
	} else {
		m.Leader.Set(0)
	}
}

// FoundLostJobs counts jobs the rescan found unheard of.
func (m *Metrics) FoundLostJobs(n int) {
	if m != nil && n > 0 {
		m.LostJobsFound.Add(float64(n))
	}
}

// ObservePass records one scheduling pass's duration.
func (m *Metrics) ObservePass(full bool, d time.Duration) {
	if m == nil {
		return
	}
	kind := "incremental"
	if full {
		kind = "full"
	}
	m.PassSeconds.WithLabelValues(kind).Observe(d.Seconds())
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.passMax == nil {
		m.passMax = map[string]float64{}
	}
	if s := d.Seconds(); s > m.passMax[kind] {
		m.passMax[kind] = s
		m.PassMaxSeconds.WithLabelValues(kind).Set(s)
	}
}

// ObservePlacement records one placement's duration.
func (m *Metrics) ObservePlacement(d time.Duration) {
	if m != nil {
		m.PlacementSeconds.Observe(d.Seconds())
	}
}

type jobCollector struct {
	jobs JobCounter
	desc *prometheus.Desc
	// up says whether the database answered the count (an outage is
	// otherwise only the absence of sparkpack_jobs, which no alert can
	// tell from an instance that is not scraped).
	up *prometheus.Desc
}

func (c *jobCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc; ch <- c.up }

func (c *jobCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	counts, err := c.jobs.CountByState(ctx)
	if err != nil {
		ch <- prometheus.MustNewConstMetric(c.up, prometheus.GaugeValue, 0)
		ch <- prometheus.NewInvalidMetric(c.desc, err)
		return
	}
	ch <- prometheus.MustNewConstMetric(c.up, prometheus.GaugeValue, 1)
	for st, n := range counts {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(n), st)
	}
}

type deadlineCollector struct {
	jobs JobCounter
	desc *prometheus.Desc
}

func (c *deadlineCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *deadlineCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	met, missed, err := c.jobs.DeadlineOutcomes(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.desc, err)
		return
	}
	ch <- prometheus.MustNewConstMetric(c.desc, prometheus.CounterValue, float64(met), "met")
	ch <- prometheus.MustNewConstMetric(c.desc, prometheus.CounterValue, float64(missed), "missed")
}
