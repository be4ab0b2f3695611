package chaos

import (
	"context"
	"fmt"
	"math/rand/v2"
	"syscall"
	"time"
)

// Config sizes a run.
type Config struct {
	// Kills of the leader (kill -9); every other one lands during the new
	// leader's recovery (within a second of its taking over).
	Kills int
	// SplitBrains: the leader stopped (SIGSTOP) until another leads, then
	// continued.
	SplitBrains int
	// DBOutages: PostgreSQL stopped at once and started again; as many
	// again with its postmaster killed (SIGKILL).
	DBOutages int
	// Stalls: 2 s stalls of the leader's renewals in the database and
	// 1 s pauses of its process (each), which must depose nobody.
	Stalls int
	// Hostile requests.
	Hostile int
	// MaxFailover is the failover target: slower ones are breaches.
	MaxFailover time.Duration
	// Settle bounds the wait for the jobs to end after a scenario.
	Settle time.Duration
	// SubmitEvery is the load's pace; JobSeconds each job's simulated run.
	SubmitEvery time.Duration
	JobSeconds  float64
	// Power runs the stack with power management; PowerKills kills of
	// the leader then land while agents are draining, powering off or
	// booting (the load comes in waves so that they do).
	Power      Power
	PowerKills int
	// Preemption runs the stack with that eviction policy (serve's
	// --preemption); PreemptKills kills of the leader then land while a
	// job's eviction is decided and not yet carried out.
	Preemption   string
	PreemptKills int
	// ReserveMode runs the stack with serve's --reserve-mode (operator or
	// offers; empty: serve's default, operator), in every scenario.
	ReserveMode string
	// TimeScale is the emulator's (set by Run).
	TimeScale float64
}

// Scenario runs faults against the stack and reports.
type Scenario struct {
	Name string
	Run  func(ctx context.Context, s *Stack, c Config, r *Result)
}

// Scenarios are the suite's, in order.
func Scenarios(c Config) []Scenario {
	var out []Scenario
	if c.Kills > 0 {
		out = append(out, Scenario{"leader kill -9", leaderKills})
	}
	if c.Power.On && c.PowerKills > 0 {
		out = append(out, Scenario{"leader kill -9 while agents power off/on", powerKills})
	}
	if c.Preemption != "" && c.PreemptKills > 0 {
		out = append(out, Scenario{"leader kill -9 while jobs are evicted", preemptKills})
	}
	if c.SplitBrains > 0 {
		out = append(out, Scenario{"split brain (SIGSTOP/SIGCONT)", splitBrains})
	}
	if c.Stalls > 0 {
		out = append(out, Scenario{"2 s DB stall, 1 s pause", stalls})
	}
	if c.DBOutages > 0 {
		out = append(out, Scenario{"PostgreSQL stop", dbStops}, Scenario{"postmaster kill -9", postmasterKills})
	}
	if c.Hostile > 0 {
		out = append(out, Scenario{"hostile requests", hostile})
	}
	return out
}

// killLeader SIGKILLs the leader, restarts it (as a standby), and reports
// whether another instance took over (failover's ok).
func killLeader(ctx context.Context, s *Stack, c Config, r *Result) bool {
	old, _, ok := failover(ctx, s, c, r, syscall.SIGKILL)
	if old != nil {
		if err := old.Start(); err != nil {
			r.note("restart %s: %v", old.ID, err)
		}
	}
	return ok
}

// failover kills (or stops) the leader and measures until another leads.
func failover(ctx context.Context, s *Stack, c Config, r *Result, sig syscall.Signal) (old, new *Instance, ok bool) {
	old, _ = s.Leader()
	if old == nil {
		var err error
		if old, _, err = s.WaitLeader(ctx, nil, 30*time.Second); err != nil {
			r.note("no leader to fault: %v", err)
			r.SlowFailovers++
			return nil, nil, false
		}
	}
	start := time.Now()
	if sig == syscall.SIGKILL {
		old.Kill9()
	} else if err := old.Signal(sig); err != nil {
		r.note("signal %s: %v", old.ID, err)
		return nil, nil, false
	}
	new, _, err := s.WaitLeader(ctx, old, 60*time.Second)
	took := time.Since(start)
	if err != nil {
		r.note("after %s of %s: %v", sig, old.ID, err)
		r.SlowFailovers++
		return old, nil, false
	}
	r.Failovers = append(r.Failovers, took)
	if c.MaxFailover > 0 && took > c.MaxFailover {
		r.SlowFailovers++
		r.note("failover from %s to %s took %s (target %s)", old.ID, new.ID, took.Round(time.Millisecond), c.MaxFailover)
	}
	return old, new, true
}

func leaderKills(ctx context.Context, s *Stack, c Config, r *Result) {
	load := StartLoad(s, c.SubmitEvery, c.JobSeconds)
	waitCtx(ctx, 2*time.Second)
	for i := 0; i < c.Kills && ctx.Err() == nil; i++ {
		if !killLeader(ctx, s, c, r) {
			continue
		}
		if i%2 == 0 {
			// The next kill lands during the new leader's recovery.
			waitCtx(ctx, time.Duration(rand.IntN(1000))*time.Millisecond)
		} else {
			waitCtx(ctx, time.Duration(1500+rand.IntN(3000))*time.Millisecond)
		}
	}
	waitCtx(ctx, 2*time.Second)
	s.Check(ctx, r, load.Stop(), load, c.Settle, s.seen)
	s.noteRunTimes(ctx, r)
}

func splitBrains(ctx context.Context, s *Stack, c Config, r *Result) {
	load := StartLoad(s, c.SubmitEvery, c.JobSeconds)
	waitCtx(ctx, 2*time.Second)
	for i := 0; i < c.SplitBrains && ctx.Err() == nil; i++ {
		old, _, _ := failover(ctx, s, c, r, syscall.SIGSTOP)
		if old == nil {
			continue
		}
		// Both now think they may lead: the old one wakes up believing it.
		waitCtx(ctx, time.Duration(500+rand.IntN(2000))*time.Millisecond)
		if err := old.Signal(syscall.SIGCONT); err != nil {
			r.note("SIGCONT %s: %v", old.ID, err)
		}
		waitCtx(ctx, 3*time.Second)
	}
	waitCtx(ctx, 2*time.Second)
	s.Check(ctx, r, load.Stop(), load, c.Settle, s.seen)
}

// stallLease holds the lease row locked for d: every renewal (and every
// attempt to take the lease) waits, as for a database that does not answer.
func (s *Stack) stallLease(ctx context.Context, d time.Duration) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `SELECT 1 FROM leader_lease WHERE id = 1 FOR UPDATE`); err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `SELECT pg_sleep($1)`, d.Seconds())
	return err
}

func stalls(ctx context.Context, s *Stack, c Config, r *Result) {
	load := StartLoad(s, c.SubmitEvery, c.JobSeconds)
	lead, st, err := s.WaitLeader(ctx, nil, 30*time.Second)
	if err != nil {
		r.note("no leader: %v", err)
		r.UnwantedFailovers++
		s.Check(ctx, r, load.Stop(), load, c.Settle, s.seen)
		return
	}
	waitCtx(ctx, 2*time.Second)
	for i := 0; i < c.Stalls && ctx.Err() == nil; i++ {
		waitCtx(ctx, time.Duration(200+rand.IntN(800))*time.Millisecond)
		if err := s.stallLease(ctx, 2*time.Second); err != nil {
			r.note("stall: %v", err)
		}
		waitCtx(ctx, time.Duration(200+rand.IntN(800))*time.Millisecond)
		if err := lead.Signal(syscall.SIGSTOP); err == nil {
			time.Sleep(time.Second)
			_ = lead.Signal(syscall.SIGCONT)
		}
	}
	waitCtx(ctx, 2*time.Second)
	now, st2 := s.Leader()
	if now != lead || st2.Token != st.Token {
		r.UnwantedFailovers++
		got := "none"
		if now != nil {
			got = fmt.Sprintf("%s (token %d)", now.ID, st2.Token)
		}
		r.note("the leader was %s (token %d) and is now %s", lead.ID, st.Token, got)
	}
	s.Check(ctx, r, load.Stop(), load, c.Settle, s.seen)
}

func dbOutage(ctx context.Context, s *Stack, c Config, r *Result, kill func() error) {
	load := StartLoad(s, c.SubmitEvery, c.JobSeconds)
	waitCtx(ctx, 2*time.Second)
	for i := 0; i < c.DBOutages && ctx.Err() == nil; i++ {
		if err := kill(); err != nil {
			r.note("stop PostgreSQL: %v", err)
			continue
		}
		waitCtx(ctx, time.Duration(2000+rand.IntN(3000))*time.Millisecond)
		if err := s.ResumePG(ctx); err != nil {
			r.note("start PostgreSQL again: %v", err)
			r.Lost++ // nothing can be checked
			return
		}
		waitCtx(ctx, 3*time.Second)
	}
	if _, _, err := s.WaitLeader(ctx, nil, 60*time.Second); err != nil {
		r.note("no leader after the outages: %v", err)
	}
	waitCtx(ctx, 2*time.Second)
	s.Check(ctx, r, load.Stop(), load, c.Settle, s.seen)
}

func dbStops(ctx context.Context, s *Stack, c Config, r *Result) {
	dbOutage(ctx, s, c, r, func() error { return s.PG("kill") })
}

func postmasterKills(ctx context.Context, s *Stack, c Config, r *Result) {
	dbOutage(ctx, s, c, r, s.KillPostmaster)
}
