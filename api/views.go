package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"time"

	"github.com/gorilla/mux"

	"github.com/sparkpack/sparkpack/scheduler"
)

// AgentView is one agent in GET /api/v1/cluster.
type AgentView struct {
	ID           string            `json:"id"`
	Hostname     string            `json:"hostname"`
	Attributes   map[string]string `json:"attributes"`
	CPUs         float64           `json:"cpus"`
	MemMB        float64           `json:"memMB"`
	FreeCPUs     float64           `json:"freeCpus"`
	FreeMemMB    float64           `json:"freeMemMB"`
	PricePerHour float64           `json:"pricePerHour"`
	InstanceType string            `json:"instanceType,omitempty"`
	Location     string            `json:"location"`
	// State is idle, active (a reservation or a driver of sparkpack's is
	// there) or off.
	State string `json:"state"`
	// Power is power management's state of the agent: on, draining,
	// powering-off, off or booting (empty when power management is off).
	Power string `json:"power,omitempty"`
	// PowerSince is when the agent entered its power state, and
	// PowerError power management's last failure there (a provider or
	// Mesos call): which agents are off or booting, since when, and why
	// one is stuck.
	PowerSince   *time.Time             `json:"powerSince,omitempty"`
	PowerError   string                 `json:"powerError,omitempty"`
	Reservations []AgentReservationView `json:"reservations"`
	// Drivers are sparkpack's Spark drivers running on the agent (on
	// unreserved resources): an agent with only a driver is active too.
	Drivers []AgentDriverView `json:"drivers"`
}

// AgentDriverView is one of sparkpack's drivers on an agent.
type AgentDriverView struct {
	JobID   string  `json:"jobId"`
	JobName string  `json:"jobName,omitempty"`
	CPUs    float64 `json:"cpus"`
	MemMB   float64 `json:"memMB"`
}

// AgentReservationView is what one job holds on an agent.
type AgentReservationView struct {
	JobID     string  `json:"jobId"`
	JobName   string  `json:"jobName,omitempty"`
	Executors int     `json:"executors"`
	CPUs      float64 `json:"cpus"`
	MemMB     float64 `json:"memMB"`
}

// ClusterView is GET /api/v1/cluster: a page of the agents (see
// clusterpage.go), with the summary of all of them.
type ClusterView struct {
	Agents []AgentView `json:"agents"`
	// Summary counts every agent, not only the page's (set by the API).
	Summary *ClusterSummary `json:"summary,omitempty"`
	// Total is how many agents the query selects (all pages).
	Total int `json:"total"`
	// Next is the cursor of the next page; empty on the last.
	Next string `json:"next"`
	// PowerOf, when set, gives an agent's power state now (from its id
	// and state); Agents are then a snapshot shared between requests,
	// never changed: the page copies only its own agents and sets their
	// Power from it. Not part of the JSON.
	PowerOf func(id, state string) string `json:"-"`
	// PowerDetail, when set, gives since when an agent is in its power
	// state and its last power error ("" when none). Not part of the JSON.
	PowerDetail func(id string) (since time.Time, lastError string) `json:"-"`
}

// QueuedJobView is a waiting job in GET /api/v1/queues.
type QueuedJobView struct {
	scheduler.QueuedJob
	// SlackSeconds is the time left before the deadline minus the
	// estimated duration (deadline jobs only).
	SlackSeconds *float64 `json:"slackSeconds,omitempty"`
}

// QueuesView is GET /api/v1/queues: one page of the waiting jobs in the
// order they will be tried (deadline queue first, then the regular queue),
// the queues' full lengths, and the cursor of the next page.
type QueuesView struct {
	Deadline []QueuedJobView `json:"deadline"`
	Regular  []QueuedJobView `json:"regular"`
	// RegularOrder is how the regular queue is ordered: "demand" (the
	// largest resource demand first), "fifo" (first submitted first) or,
	// with teams, "fair-share": team by team in the order the pass offers
	// them the room as the teams stand now (Teams), each team's jobs as
	// WithinTeam says. That is the order the next pass tries them
	// until one of them starts: a start ranks its team again, and that
	// team's later jobs may then go after other teams'.
	RegularOrder string `json:"regularOrder"`
	// Teams, with "fair-share", are the teams of this page's regular jobs
	// in that order, each with its share and all its waiting regular jobs.
	// WithinTeam, with "fair-share", is how each team's jobs are ordered:
	// "demand" or "fifo".
	WithinTeam string                 `json:"withinTeam,omitempty"`
	Teams      []scheduler.QueueTeam  `json:"teams,omitempty"`
	Totals     scheduler.QueueLengths `json:"totals"`
	Next       string                 `json:"next"`
	// At is when the scheduling pass that this view shows ran.
	At time.Time `json:"at"`
}

// QueuesPage is GET /api/v1/queues from the scheduler core: the page of
// the queues its last pass published, each deadline job with its slack
// (its estimate scaled by durationScale, as the core runs it) at now.
func QueuesPage(core *scheduler.Core, q QueuesQuery, now time.Time, durationScale float64) (QueuesView, error) {
	page, err := core.QueuePage(q.Limit, q.Cursor)
	if err != nil {
		return QueuesView{}, err
	}
	conv := func(in []scheduler.QueuedJob) []QueuedJobView {
		out := make([]QueuedJobView, 0, len(in))
		for _, j := range in {
			v := QueuedJobView{QueuedJob: j}
			if j.DeadlineAt != nil {
				s := j.DeadlineAt.Sub(now).Seconds() - j.EstimatedDurationSeconds*durationScale
				v.SlackSeconds = &s
			}
			out = append(out, v)
		}
		return out
	}
	return QueuesView{Deadline: conv(page.Deadline), Regular: conv(page.Regular), RegularOrder: page.RegularOrder, WithinTeam: page.WithinTeam, Teams: page.Teams,
		Totals: page.Totals, Next: page.Next, At: page.At}, nil
}

// QueuesQuery selects a page of GET /api/v1/queues.
type QueuesQuery struct {
	Limit  int    // 1..1000; 0 means the default (100)
	Cursor string // the Next of the previous page; "" for the first
}

// CostPoint is one point of the cumulative cost series.
type CostPoint struct {
	T        time.Time `json:"t"`
	TotalUSD float64   `json:"totalUSD"`
}

// StatPoint is one point of the scheduling statistics series.
type StatPoint struct {
	T               time.Time `json:"t"`
	PlacementMillis float64   `json:"placementMs"`
	DeadlineQueue   int       `json:"deadlineQueue"`
	RegularQueue    int       `json:"regularQueue"`
	ActiveAgents    int       `json:"activeAgents"`
	// MeterUSD is the cost meter then; BillUSD and AlwaysOnUSD the bill and
	// what the cluster would have cost always on, when a bill is known.
	MeterUSD    float64  `json:"meterUSD"`
	BillUSD     *float64 `json:"billUSD,omitempty"`
	AlwaysOnUSD *float64 `json:"alwaysOnUSD,omitempty"`
}

// DeadlineCounts are the deadline jobs that ended by outcome (met: finished
// by the deadline; missed: finished after it, or failed or killed after
// it), in all, in the last hour and in the hour before it.
type DeadlineCounts struct {
	Met              int `json:"met"`
	Missed           int `json:"missed"`
	MetLastHour      int `json:"metLastHour"`
	MissedLastHour   int `json:"missedLastHour"`
	MetHourBefore    int `json:"metHourBefore"`
	MissedHourBefore int `json:"missedHourBefore"`
}

// CostView is GET /api/v1/cost.
type CostView struct {
	TotalUSD           float64     `json:"totalUSD"`
	BurnRateUSDPerHour float64     `json:"burnRateUSDPerHour"`
	Series             []CostPoint `json:"series"`
	Stats              []StatPoint `json:"stats"`
	// Bill is what the cloud billed (every agent while powered on), when
	// sparkpack can read it (the Mesos emulator's /sim/bill); nil otherwise.
	Bill *BillView `json:"bill,omitempty"`
	// Deadlines counts the deadline jobs that ended, by outcome.
	Deadlines *DeadlineCounts `json:"deadlines,omitempty"`
	// JobsUSD is the part of TotalUSD attributed to jobs (the sum of the
	// jobs' costUSD) and IdleUSD the rest: what active agents cost beyond
	// the jobs' shares of them (and what was metered before attribution
	// existed). JobsUSD + IdleUSD = TotalUSD. Absent when the ledger
	// cannot be read.
	JobsUSD *float64 `json:"jobsUSD,omitempty"`
	IdleUSD *float64 `json:"idleUSD,omitempty"`
}

// BillView is the provider's bill next to sparkpack's own meter.
type BillView struct {
	TotalUSD    float64 `json:"totalUSD"`
	AlwaysOnUSD float64 `json:"alwaysOnUSD"`
	// Seconds is the billed period (simulated seconds on the emulator).
	Seconds float64 `json:"seconds"`
}

// Views supplies the read-only panels of the dashboard; the live scheduler
// and the Mesos adapter implement it.
type Views interface {
	Cluster(ctx context.Context) (ClusterView, error)
	// Queues returns a page of the queues; an unknown cursor is an error
	// wrapping scheduler.ErrBadQueueCursor. It must not wait for a
	// scheduling pass.
	Queues(ctx context.Context, q QueuesQuery) (QueuesView, error)
	Cost(ctx context.Context) (CostView, error)
}

// MountViews adds GET /api/v1/cluster, /api/v1/queues, /api/v1/cost, the
// event stream /api/v1/events and its tickets (POST
// /api/v1/events/ticket) to the router.
func (s *Server) MountViews(r *mux.Router, v Views, b *Broker) {
	// With several instances (package leader) only the leader has the
	// scheduler's views and live events: a follower forwards these
	// requests to it (Config.Forward), credentials and all.
	forward := func(h http.HandlerFunc) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if s.cfg.Forward != nil {
				if target := s.cfg.Forward(); target != nil {
					s.proxy(target).ServeHTTP(w, r)
					return
				}
			}
			h(w, r)
		}
	}
	get := func(path string, f func(ctx context.Context) (any, error)) {
		r.HandleFunc(path, s.reading(withQuery(noParams, forward(func(w http.ResponseWriter, r *http.Request) {
			ctx, cancel := s.dbContext(r)
			defer cancel()
			out, err := f(ctx)
			if err != nil {
				writeStoreError(w, r, "read "+path, err)
				return
			}
			writeJSON(w, http.StatusOK, out)
		})))).Methods(http.MethodGet)
	}
	if s.cfg.Preview != nil {
		r.HandleFunc("/api/v1/plan", s.previewing(withQuery(noParams, forward(s.planJob)))).Methods(http.MethodPost)
	}
	if s.cfg.Forecast != nil {
		r.HandleFunc("/api/v1/forecast", s.reading(withQuery(forecastParams, forward(s.getForecast)))).Methods(http.MethodGet)
	}
	if s.cfg.Logs != nil {
		r.HandleFunc("/api/v1/jobs/{id}/logs", s.reading(withQuery(logParams, forward(s.getLogs)))).Methods(http.MethodGet)
	}
	if v != nil {
		r.HandleFunc("/api/v1/cluster", s.reading(withQuery(clusterParams, forward(func(w http.ResponseWriter, r *http.Request) {
			q, field, err := parseClusterQuery(r.URL.Query())
			if err != nil {
				writeError(w, http.StatusBadRequest, field, err.Error())
				return
			}
			ctx, cancel := s.dbContext(r)
			defer cancel()
			all, err := v.Cluster(ctx)
			if err != nil {
				writeStoreError(w, r, "read /api/v1/cluster", err)
				return
			}
			page, err := clusterPage(all, q)
			if errors.Is(err, errBadClusterCursor) {
				writeError(w, http.StatusBadRequest, "cursor", err.Error())
				return
			}
			writeJSON(w, http.StatusOK, page)
		})))).Methods(http.MethodGet)
		r.HandleFunc("/api/v1/queues", s.reading(withQuery(queuesParams, forward(func(w http.ResponseWriter, r *http.Request) {
			q, field, err := parseQueuesQuery(r.URL.Query())
			if err != nil {
				writeError(w, http.StatusBadRequest, field, err.Error())
				return
			}
			out, err := v.Queues(r.Context(), q)
			if errors.Is(err, scheduler.ErrBadQueueCursor) {
				writeError(w, http.StatusBadRequest, "cursor", "unknown cursor; use the 'next' value of a previous page")
				return
			}
			if err != nil {
				writeStoreError(w, r, "read /api/v1/queues", err)
				return
			}
			writeJSON(w, http.StatusOK, out)
		})))).Methods(http.MethodGet)
		get("/api/v1/cost", func(ctx context.Context) (any, error) { return v.Cost(ctx) })
	}
	if b != nil {
		// The leader authenticates a forwarded stream (it redeems the
		// ticket it issued: tickets are forwarded to it too).
		r.Handle("/api/v1/events", withQuery(eventParams, forward(s.streamAuth(b.ServeHTTP)))).Methods(http.MethodGet)
		r.HandleFunc("/api/v1/events/ticket", s.reading(withQuery(noParams, forward(s.issueTicket)))).Methods(http.MethodPost)
	}
	if s.cfg.Leader != nil {
		r.HandleFunc("/api/v1/leader", s.reading(withQuery(noParams, func(w http.ResponseWriter, r *http.Request) {
			ctx, cancel := s.dbContext(r)
			defer cancel()
			out, err := s.cfg.Leader(ctx)
			if err != nil {
				writeStoreError(w, r, "read the leadership", err)
				return
			}
			writeJSON(w, http.StatusOK, out)
		}))).Methods(http.MethodGet)
	}
}

// proxy forwards a request to another instance (streaming: SSE flushes).
func (s *Server) proxy(target *url.URL) http.Handler {
	p := httputil.NewSingleHostReverseProxy(target)
	p.FlushInterval = -1
	if s.cfg.ForwardTransport != nil {
		p.Transport = s.cfg.ForwardTransport
	}
	p.ErrorHandler = func(w http.ResponseWriter, r *http.Request, err error) {
		loggerFrom(r.Context()).WithError(err).Warn("forwarding to the leader failed")
		writeUnavailable(w, RetryAfterElection, "the leading sparkpack instance ("+target.Host+") does not answer; try again in a few seconds")
	}
	return p
}

func parseQueuesQuery(q url.Values) (QueuesQuery, string, error) {
	var o QueuesQuery
	for k := range q {
		if k != "limit" && k != "cursor" {
			return o, k, fmt.Errorf("unknown query parameter %q (use limit, cursor)", k)
		}
	}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > scheduler.MaxQueuePageLimit {
			return o, "limit", fmt.Errorf("limit must be a whole number from 1 to %d, got %q", scheduler.MaxQueuePageLimit, truncateQuery(v))
		}
		o.Limit = n
	}
	o.Cursor = q.Get("cursor")
	return o, "", nil
}

func truncateQuery(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}
