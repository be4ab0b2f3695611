package chaos

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Power turns power management on in the stack (sparkpack-chaos --power):
// the emulator's agents are powered off when idle and on again for jobs,
// through its power API, and the power scenario kills the leader while
// agents are between power states.
type Power struct {
	On bool
	// NewIDs: agents lose their work dir over a power cycle and come back
	// under new agent ids (`mesos-sim --agents-lose-work-dir`).
	NewIDs bool
	// OffAfter is serve's --power-off-after (wall time).
	OffAfter time.Duration
}

// serveArgs are the power flags of every instance. The boot time is the
// emulator's (60 simulated seconds) in wall time.
func (pw Power) serveArgs(timeScale float64) []string {
	off := pw.OffAfter
	if off <= 0 {
		off = 3 * time.Second
	}
	boot := time.Duration(float64(60*time.Second) * timeScale)
	return []string{"--power-off-after", off.String(), "--power-provider", "emulator", "--power-tick", "300ms",
		"--power-boot-time", boot.String(), "--power-on-timeout", (20*boot + 30*time.Second).String(),
		"--power-forecast-every", "5s"}
}

// transitional are the power states an agent is only passing through.
var transitional = map[string]bool{"draining": true, "powering-off": true, "booting": true}

// powerStates is the agent_power table: agent id -> state.
func (s *Stack) powerStates(ctx context.Context) (map[string]string, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT agent_id, state FROM agent_power`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var id, st string
		if err := rows.Scan(&id, &st); err != nil {
			return nil, err
		}
		out[id] = st
	}
	return out, rows.Err()
}

// powerKills runs the load in waves, so that agents are powered off in
// the gaps and on again by the next wave, and kills the leader (kill -9)
// each time an agent is seen draining, powering off or booting, then
// checks the jobs and that power management ends consistent with Mesos.
func powerKills(ctx context.Context, s *Stack, c Config, r *Result) {
	every := c.SubmitEvery / 5
	if every <= 0 {
		every = 50 * time.Millisecond
	}
	load := StartWaves(s, every, 2*time.Second, c.Power.OffAfter+6*time.Second, c.JobSeconds)
	byState := map[string]int{}
	deadline := time.Now().Add(time.Duration(c.PowerKills)*30*time.Second + time.Minute)
	for kills := 0; kills < c.PowerKills && ctx.Err() == nil && time.Now().Before(deadline); {
		states, err := s.powerStates(ctx)
		if err != nil {
			waitCtx(ctx, 200*time.Millisecond)
			continue
		}
		var in []string
		for id, st := range states {
			if transitional[st] {
				in = append(in, st+" "+id)
			}
		}
		if len(in) == 0 {
			waitCtx(ctx, 50*time.Millisecond)
			continue
		}
		sort.Strings(in)
		waitCtx(ctx, time.Duration(rand.IntN(300))*time.Millisecond)
		if !killLeader(ctx, s, c, r) {
			continue
		}
		kills++
		byState[strings.Fields(in[0])[0]]++
		// Let the new leader take the agents' steps over before the next.
		waitCtx(ctx, time.Duration(1500+rand.IntN(2500))*time.Millisecond)
	}
	r.note("leader killed with an agent %v", byState)
	waitCtx(ctx, 2*time.Second)
	s.Check(ctx, r, load.Stop(), load, c.Settle, s.seen)
	s.checkPower(ctx, r, c)
	s.noteRunTimes(ctx, r)
}

// noteRunTimes notes the measured run times of the finished runs so far
// (what the learned run-time model learns from), against the jobs' 1 s of
// wall time (20 simulated seconds) and the estimates.
func (s *Stack) noteRunTimes(ctx context.Context, r *Result) {
	var n, unknown int
	var p50, p90, max, est float64
	if err := s.db.QueryRowContext(ctx, `SELECT count(seconds), count(*) - count(seconds), coalesce(percentile_cont(0.5) WITHIN GROUP (ORDER BY seconds), 0),
		coalesce(percentile_cont(0.9) WITHIN GROUP (ORDER BY seconds), 0), coalesce(max(seconds), 0), coalesce(avg(estimate_seconds), 0)
		FROM run_history WHERE outcome = 'FINISHED'`).Scan(&n, &unknown, &p50, &p90, &max, &est); err == nil {
		r.note("run times measured so far (%d finished runs, %d more never seen running): p50 %.1f s, p90 %.1f s, max %.1f s (mean estimate %.1f s)",
			n, unknown, p50, p90, max, est)
	}
}

// simAgent is what GET /sim/agents shows of an agent.
type simAgent struct {
	ID, Hostname                     string
	PoweredOff, Booting, Deactivated bool
	Tasks                            int
}

// checkPower waits until no agent is between power states (the cluster is
// quiet: every idle agent ends off, or kept on), then compares power
// management's records with the emulator.
func (s *Stack) checkPower(ctx context.Context, r *Result, c Config) {
	quietFor, wait := 0, time.Now().Add(c.Settle)
	var states map[string]string
	var agents []simAgent
	for time.Now().Before(wait) && ctx.Err() == nil {
		var err error
		states, err = s.powerStates(ctx)
		if err == nil {
			err = getJSON(s.EmuURL+"/sim/agents", "", &agents)
		}
		quiet := err == nil
		for _, st := range states {
			quiet = quiet && !transitional[st]
		}
		for _, a := range agents {
			quiet = quiet && !a.Booting
		}
		if quiet {
			quietFor++
		} else {
			quietFor = 0
		}
		if quietFor >= 10 {
			break
		}
		waitCtx(ctx, 500*time.Millisecond)
	}
	var bad []string
	known := map[string]bool{}
	for _, a := range agents {
		known[a.ID] = true
		st, ok := states[a.ID]
		if !ok {
			st = "on"
		}
		switch {
		case transitional[st]:
			bad = append(bad, fmt.Sprintf("agent %s still %s (Mesos: powered off %t, deactivated %t)", a.ID, st, a.PoweredOff, a.Deactivated))
		case a.PoweredOff && !a.Booting && st != "off":
			bad = append(bad, fmt.Sprintf("agent %s is powered off but recorded %s", a.ID, st))
		case !a.PoweredOff && st == "off":
			bad = append(bad, fmt.Sprintf("agent %s is on (%d tasks) but recorded off", a.ID, a.Tasks))
		case !a.PoweredOff && a.Deactivated && st == "on":
			bad = append(bad, fmt.Sprintf("agent %s is left deactivated in Mesos but recorded on", a.ID))
		}
	}
	for id, st := range states {
		if !known[id] {
			bad = append(bad, fmt.Sprintf("a record of agent %s (%s) that Mesos no longer knows", id, st))
		}
	}
	sort.Strings(bad)
	r.PowerLeft += len(bad)
	for i, b := range bad {
		if i < 8 {
			r.note("power: %s", b)
		}
	}
	on := 0
	for _, a := range agents {
		if !a.PoweredOff {
			on++
		}
	}
	r.note("power at the end: %s of %d agents on", strconv.Itoa(on), len(agents))
}
