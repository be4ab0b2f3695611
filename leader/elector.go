package leader

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/sparkpack/sparkpack/internal/failurelog"
)

// Lease is the leadership as the database records it.
type Lease struct {
	// Instance holds the lease; Token grows with every new holder.
	Instance string
	Token    int64
	// URL is where the holder's API answers (for followers' proxies).
	URL string
	// Since is when the holder took it; Expires when it runs out unless
	// renewed (database time).
	Since, Expires time.Time
	// Live: not expired by the database's clock when it was read.
	Live bool
}

// ErrLost means the lease is not (any more) held by the caller.
var ErrLost = errors.New("leadership lost")

// Store keeps the lease (package store implements it with one row).
type Store interface {
	// TryAcquire takes the lease for instance when nobody holds it, it
	// expired, or instance holds it already (a restart of the same
	// instance), always with a new token; ok is false when someone else
	// holds it (lease then names the holder).
	TryAcquire(ctx context.Context, instance, url string, ttl time.Duration) (lease Lease, ok bool, err error)
	// Renew extends the lease if instance still holds it with token;
	// otherwise it fails with ErrLost.
	Renew(ctx context.Context, instance string, token int64, ttl time.Duration) (Lease, error)
	// Release gives the lease up (it expires at once) if still held.
	Release(ctx context.Context, instance string, token int64) error
	// Current reads the lease (zero Lease when none was ever taken).
	Current(ctx context.Context) (Lease, error)
}

// Config sets the timing. Defaults (DefaultTTL, DefaultRenew,
// DefaultRetry, margin TTL/5): a leader that dies is replaced within
// TTL + Retry (4.25 s) at worst; a live leader keeps the lease through
// any stall of its renewals (the database not answering, the process
// paused) shorter than TTL - Margin - Renew (2.7 s).
type Config struct {
	Instance string
	// URL is this instance's API address, recorded with the lease.
	URL   string
	TTL   time.Duration
	Renew time.Duration
	Retry time.Duration
	// Margin is taken off the lease time when deciding locally whether the
	// lease still holds, for clock drift between this process and the
	// database and for the time a renewal takes.
	Margin time.Duration
	Log    logrus.FieldLogger
	// OnChange, if set, is called when this instance gains or loses
	// leadership.
	OnChange func(leader bool, lease Lease)
	// FailureLogEvery is how often a campaign that cannot reach the
	// database says so again (the first failure and the recovery are
	// always logged); 0: failurelog.DefaultEvery (30 s).
	FailureLogEvery time.Duration
}

// The default timing. A dead leader is noticed when its lease runs out in
// the database, at most TTL after its last renewal, and replaced at the
// next try of a follower, at most Retry later: 4 s + 0.25 s. A live leader
// renews every 0.5 s and stops acting 3.2 s (TTL less the margin) after
// the start of its last successful renewal: a renewal held up 2.7 s —
// a database stall of 2 s or a process pause of 1 s, with room to spare —
// still lands in time. The costs: a renewal UPDATE every 0.5 s from the
// leader and a lease query every 0.25 s from each follower (one row, on a
// pool of their own), and a leader whose database is unreachable for more
// than 2.7 s steps down.
const (
	DefaultTTL   = 4 * time.Second
	DefaultRenew = 500 * time.Millisecond
	DefaultRetry = 250 * time.Millisecond
)

// Elector campaigns for leadership and runs the leader's work while it
// holds it. Its methods are safe for concurrent use.
type Elector struct {
	cfg   Config
	store Store
	log   logrus.FieldLogger

	mu       sync.Mutex
	held     bool
	lease    Lease
	deadline time.Time // local monotonic: the lease surely holds until then
	since    time.Time
}

// New checks the configuration.
func New(cfg Config, store Store) (*Elector, error) {
	if cfg.Instance == "" {
		return nil, errors.New("leader: an instance id is required")
	}
	if cfg.TTL <= 0 {
		cfg.TTL = DefaultTTL
	}
	if cfg.Renew <= 0 {
		cfg.Renew = min(DefaultRenew, cfg.TTL/8)
	}
	if cfg.Retry <= 0 {
		cfg.Retry = min(DefaultRetry, cfg.TTL/16)
	}
	if cfg.Margin <= 0 {
		cfg.Margin = cfg.TTL / 5
	}
	if cfg.Renew >= cfg.TTL-cfg.Margin {
		return nil, fmt.Errorf("leader: the renewal interval (%s) must be shorter than the lease time (%s) less the margin (%s)", cfg.Renew, cfg.TTL, cfg.Margin)
	}
	if cfg.Log == nil {
		cfg.Log = logrus.StandardLogger()
	}
	return &Elector{cfg: cfg, store: store, log: cfg.Log.WithField("component", "leader")}, nil
}

// Instance is this instance's id.
func (e *Elector) Instance() string { return e.cfg.Instance }

// Valid reports whether this instance holds the lease now, by its own
// clock. Code that acts on the cluster checks it before every action.
func (e *Elector) Valid() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.held && time.Now().Before(e.deadline)
}

// Check is Valid as an error (nil when leader).
func (e *Elector) Check() error {
	if !e.Valid() {
		return ErrLost
	}
	return nil
}

// Status is what GET /api/v1/leader reports.
type Status struct {
	Leader         bool      `json:"leader"`
	Instance       string    `json:"instance"`
	LeaderInstance string    `json:"leaderInstance"`
	LeaderURL      string    `json:"leaderURL,omitempty"`
	Token          int64     `json:"token,omitempty"`
	Since          time.Time `json:"since,omitzero"`
}

// Status reads the lease from the store (an instance may be wrong about
// others, never about itself).
func (e *Elector) Status(ctx context.Context) (Status, error) {
	st := Status{Instance: e.cfg.Instance}
	if e.Valid() {
		e.mu.Lock()
		st.Leader, st.LeaderInstance, st.LeaderURL, st.Token, st.Since = true, e.cfg.Instance, e.cfg.URL, e.lease.Token, e.since
		e.mu.Unlock()
		return st, nil
	}
	l, err := e.store.Current(ctx)
	if err != nil {
		return st, err
	}
	if l.Live {
		st.LeaderInstance, st.LeaderURL, st.Token, st.Since = l.Instance, l.URL, l.Token, l.Since
	}
	return st, nil
}

// Token is the fencing token of the lease held (0 when not leader).
func (e *Elector) Token() int64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.held {
		return 0
	}
	return e.lease.Token
}

// Run campaigns until ctx ends. Each time this instance becomes leader it
// calls lead with a context that is cancelled the moment leadership is in
// doubt (a renewal failed, or the lease time ran out by the local clock);
// lead must stop all leader work when it is, and return. Run waits for it,
// then campaigns again.
func (e *Elector) Run(ctx context.Context, lead func(ctx context.Context, lease Lease)) error {
	// A follower tries every Retry (0.25 s): while the database is down,
	// the first failure is logged, then one reminder a period, then the
	// recovery, not a warning per try.
	fails := failurelog.State{Every: e.cfg.FailureLogEvery}
	var standingBy int64 // the token of the leader this instance last said it stands by for
	for {
		start := time.Now()
		lease, ok, err := e.store.TryAcquire(ctx, e.cfg.Instance, e.cfg.URL, e.cfg.TTL)
		if ctx.Err() == nil {
			var v failurelog.Verdict
			fails, v = fails.Step(time.Now(), err != nil)
			e.logCampaign(v, err)
		}
		if !ok && err == nil && lease.Live && lease.Token != standingBy {
			// Say once a term that this instance stands by, and for whom:
			// otherwise a follower's log says nothing after "campaigning".
			standingBy = lease.Token
			e.log.WithFields(logrus.Fields{"instance": e.cfg.Instance, "leader_instance": lease.Instance, "leader_url": lease.URL, "token": lease.Token}).
				Info("another instance leads: this one stands by (it serves the API and takes over if the leader stops)")
		}
		if ok {
			standingBy = 0
			e.serve(ctx, lease, start, lead)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(e.cfg.Retry):
		}
	}
}

// logCampaign logs what the failure log decided for one try to take the
// lease.
func (e *Elector) logCampaign(v failurelog.Verdict, err error) {
	switch v.Kind {
	case failurelog.First:
		e.log.WithError(err).WithField("retry_every", e.cfg.Retry.String()).
			Warn("cannot reach the database to campaign for leadership; retrying (check that PostgreSQL is up and that --database-url reaches it; this instance serves no request that needs the database meanwhile)")
	case failurelog.Still:
		e.log.WithError(err).WithFields(logrus.Fields{"failures": v.Failures, "failing_for": time.Since(v.Since).Round(time.Second).String()}).
			Warn("still cannot reach the database to campaign for leadership; retrying (check that PostgreSQL is up and that --database-url reaches it)")
	case failurelog.Recovered:
		e.log.WithFields(logrus.Fields{"failures": v.Failures, "failed_for": time.Since(v.Since).Round(time.Millisecond).String()}).
			Info("the database answers again; campaigning for leadership")
	}
}

// serve holds the lease: it runs lead and renews until either fails.
func (e *Elector) serve(ctx context.Context, lease Lease, acquiredAt time.Time, lead func(ctx context.Context, lease Lease)) {
	e.mu.Lock()
	e.held, e.lease, e.since = true, lease, time.Now()
	e.deadline = acquiredAt.Add(e.cfg.TTL - e.cfg.Margin)
	e.mu.Unlock()
	e.log.WithFields(logrus.Fields{"instance": e.cfg.Instance, "token": lease.Token}).Info("this instance is the leader")
	if e.cfg.OnChange != nil {
		e.cfg.OnChange(true, lease)
	}
	lctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		lead(lctx, lease)
	}()
	reason := e.keep(lctx, lease, done)
	cancel()
	e.mu.Lock()
	e.held = false
	e.mu.Unlock()
	<-done
	if ctx.Err() != nil || reason == reasonStopped {
		// Shutting down, or the leader's work gave up: give the lease up
		// so another instance takes over at once, not after the lease time.
		rctx, rcancel := context.WithTimeout(context.Background(), 2*time.Second)
		if err := e.store.Release(rctx, e.cfg.Instance, lease.Token); err != nil {
			e.log.WithError(err).Warn("could not release the leadership lease; another instance takes over when it expires")
		}
		rcancel()
	}
	l := e.log.WithFields(logrus.Fields{"instance": e.cfg.Instance, "token": lease.Token, "why": reason})
	if ctx.Err() != nil {
		l.Info("this instance is no longer the leader") // an orderly stop
	} else {
		l.Warn("this instance is no longer the leader")
	}
	if e.cfg.OnChange != nil {
		e.cfg.OnChange(false, lease)
	}
}

const reasonStopped = "the leader's work stopped"

// keep renews the lease until it cannot or the leader's work ends (done),
// and returns why it stopped.
func (e *Elector) keep(ctx context.Context, lease Lease, done <-chan struct{}) string {
	t := time.NewTicker(e.cfg.Renew)
	defer t.Stop()
	for {
		e.mu.Lock()
		deadline := e.deadline
		e.mu.Unlock()
		expiry := time.NewTimer(time.Until(deadline))
		select {
		case <-ctx.Done():
			expiry.Stop()
			return "stopping"
		case <-done:
			expiry.Stop()
			return reasonStopped
		case <-expiry.C:
			return "the lease ran out before it could be renewed"
		case <-t.C:
		}
		expiry.Stop()
		start := time.Now()
		rctx, cancel := context.WithDeadline(ctx, deadline)
		nl, err := e.store.Renew(rctx, e.cfg.Instance, lease.Token, e.cfg.TTL)
		cancel()
		if err != nil {
			if errors.Is(err, ErrLost) {
				return "another instance holds the lease"
			}
			if time.Now().After(deadline) {
				return "the database did not answer before the lease ran out: " + err.Error()
			}
			e.log.WithError(err).Warn("renewing the leadership lease failed; retrying until it runs out")
			continue
		}
		e.mu.Lock()
		e.lease = nl
		// The renewal took effect at some point after start: count from start.
		e.deadline = start.Add(e.cfg.TTL - e.cfg.Margin)
		e.mu.Unlock()
	}
}
