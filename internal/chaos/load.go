package chaos

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/lib/pq"
)

// Result is what one scenario found. Every count but Jobs and Failovers
// is a breach when not zero.
type Result struct {
	Scenario string
	Jobs     int // submissions acknowledged (201 or 200)
	// Lost: acknowledged jobs not stored, or not ended by the end.
	Lost int
	// NotFinished: jobs that ended other than FINISHED (the load's jobs
	// never fail on their own, and nobody cancels them).
	NotFinished int
	// Doubled: a task launched twice, or a job that ended twice.
	Doubled int
	// Leaked: sparkpack reservations, quotas or tasks left on the
	// emulator once every job ended.
	Leaked int
	// ClientError5xx: 5xx answers to requests that were the client's
	// mistake (hostile requests).
	ClientError5xx int
	// NoRetryAfter: 503 answers without Retry-After.
	NoRetryAfter int
	// Unavailable counts the 503s the load met (with Retry-After), and
	// Hostile the hostile requests sent: both show a check was exercised.
	Unavailable, Hostile int
	// Unauthorised: requests that should have been refused and were not.
	Unauthorised int
	// UnwantedFailovers: leadership changes with no leader dying (a stall
	// or a short pause deposed a live leader).
	UnwantedFailovers int
	// Failovers: from a kill (or stop) of the leader to another instance
	// leading.
	Failovers []time.Duration
	// SlowFailovers: failovers over the target.
	SlowFailovers int
	// PowerLeft: power management left inconsistent once the cluster is
	// quiet (Power runs): an agent stuck draining, powering off or
	// booting; powered off in Mesos but recorded on; deactivated but
	// recorded on; a record of an agent id Mesos no longer knows.
	PowerLeft int
	Notes     []string
}

// Breaches is the number of breached checks.
func (r Result) Breaches() int {
	return r.Lost + r.NotFinished + r.Doubled + r.Leaked + r.PowerLeft + r.ClientError5xx + r.NoRetryAfter + r.Unauthorised + r.UnwantedFailovers + r.SlowFailovers
}

func (r *Result) note(format string, args ...any) {
	if len(r.Notes) < 20 {
		r.Notes = append(r.Notes, fmt.Sprintf(format, args...))
	}
}

var client = &http.Client{Timeout: 15 * time.Second}

// jobBody is a small job the emulated Spark runs for simSeconds.
func jobBody(id string, simSeconds float64) []byte {
	b, _ := json.Marshal(map[string]any{
		"id": id, "name": "chaos",
		"app": map[string]any{"appResource": "local:///opt/spark/examples/jars/spark-examples.jar",
			"mainClass": "org.apache.spark.examples.SparkPi", "args": []string{"10"}},
		"executors": 1 + rand.IntN(2), "executorCores": 1, "executorMemoryMB": 1024,
		"estimatedDurationSeconds": simSeconds,
	})
	return b
}

// Load submits jobs through the live instances until stopped, each with its
// own id, retrying (same id) on 503 and connection errors as a careful
// client does. It records what was acknowledged and every 503 without
// Retry-After.
type Load struct {
	s          *Stack
	simSeconds float64
	every      time.Duration
	// burst and gap (StartWaves): submit for burst, then nothing for gap.
	burst, gap time.Duration

	mu           sync.Mutex
	acked        map[string]bool
	noRetryAfter int
	unavailable  int
	other5xx     []string
	stop         chan struct{}
	done         chan struct{}
}

// StartLoad begins submitting.
func StartLoad(s *Stack, every time.Duration, simSeconds float64) *Load {
	l := &Load{s: s, simSeconds: simSeconds, every: every, acked: map[string]bool{}, stop: make(chan struct{}), done: make(chan struct{})}
	go l.run()
	return l
}

// StartWaves submits in waves: every `every` for burst, then nothing for
// gap (the cluster idles, and power management powers agents off), again.
func StartWaves(s *Stack, every, burst, gap time.Duration, simSeconds float64) *Load {
	l := &Load{s: s, simSeconds: simSeconds, every: every, burst: burst, gap: gap, acked: map[string]bool{}, stop: make(chan struct{}), done: make(chan struct{})}
	go l.run()
	return l
}

func (l *Load) run() {
	defer close(l.done)
	var wg sync.WaitGroup
	t := time.NewTicker(l.every)
	defer t.Stop()
	start := time.Now()
	for i := 0; ; i++ {
		select {
		case <-l.stop:
			wg.Wait()
			return
		case <-t.C:
		}
		if l.burst > 0 && time.Since(start)%(l.burst+l.gap) >= l.burst {
			continue
		}
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			l.submit(i)
		}(i)
	}
}

// submit posts one job until it is acknowledged or 60 s have passed.
func (l *Load) submit(i int) {
	id := uuid.NewString()
	body := jobBody(id, l.simSeconds)
	deadline := time.Now().Add(60 * time.Second)
	for attempt := 0; time.Now().Before(deadline); attempt++ {
		in := l.s.Live(i + attempt)
		req, _ := http.NewRequest(http.MethodPost, in.API+"/api/v1/jobs", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+TokenChaos)
		resp, err := client.Do(req)
		if err != nil {
			time.Sleep(200 * time.Millisecond)
			continue
		}
		raw, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		resp.Body.Close()
		switch {
		case resp.StatusCode == http.StatusCreated || resp.StatusCode == http.StatusOK:
			l.mu.Lock()
			l.acked[id] = true
			l.mu.Unlock()
			return
		case resp.StatusCode == http.StatusServiceUnavailable:
			l.mu.Lock()
			l.unavailable++
			if resp.Header.Get("Retry-After") == "" {
				l.noRetryAfter++
			}
			l.mu.Unlock()
			time.Sleep(300 * time.Millisecond)
		default:
			l.mu.Lock()
			l.other5xx = append(l.other5xx, fmt.Sprintf("POST %s: %d %s", in.ID, resp.StatusCode, strings.TrimSpace(string(raw))))
			l.mu.Unlock()
			time.Sleep(300 * time.Millisecond)
		}
	}
}

// Stop ends the load and returns the acknowledged ids.
func (l *Load) Stop() []string {
	close(l.stop)
	<-l.done
	l.mu.Lock()
	defer l.mu.Unlock()
	ids := make([]string, 0, len(l.acked))
	for id := range l.acked {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// Check waits until every acknowledged job has ended (at most settle) and
// nothing of sparkpack's is left on the emulator, and counts what is
// wrong. Launch counts are cumulative over the run (the emulator's), so
// every scenario checks all of them again: a double launch is counted in
// the scenario that shows it first.
func (s *Stack) Check(ctx context.Context, r *Result, ids []string, l *Load, settle time.Duration, seenDoubles map[string]bool) {
	r.Jobs += len(ids)
	if l != nil {
		l.mu.Lock()
		r.NoRetryAfter += l.noRetryAfter
		r.Unavailable += l.unavailable
		for _, e := range l.other5xx {
			if strings.Contains(e, ": 5") {
				r.note("a submission answered %s", e)
			}
		}
		l.mu.Unlock()
	}
	deadline := time.Now().Add(settle)
	var open []string
	for {
		open = open[:0]
		for _, id := range ids {
			var state string
			err := s.db.QueryRowContext(ctx, `SELECT state FROM jobs WHERE id = $1`, id).Scan(&state)
			if err != nil || !terminal(state) {
				open = append(open, id+" "+state)
			}
		}
		if len(open) == 0 || time.Now().After(deadline) || ctx.Err() != nil {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	r.Lost += len(open)
	for i, o := range open {
		if i < 5 {
			r.note("job not ended after %s: %s", settle, o)
		}
	}
	rows, err := s.db.QueryContext(ctx, `SELECT id, state FROM jobs WHERE id = ANY($1::uuid[]) AND state <> 'FINISHED' AND state IN ('FAILED','KILLED','REJECTED','CANCELLED')`, pq.Array(ids))
	if err != nil {
		r.note("cannot read the jobs' final states: %v", err)
	} else {
		for rows.Next() {
			var id, state string
			if rows.Scan(&id, &state) == nil && !s.cancelled[id] && (state != "REJECTED" || !s.mayReject[id]) {
				r.NotFinished++
				var why string
				_ = s.db.QueryRowContext(ctx, `SELECT coalesce(reason, '') FROM job_events WHERE job_id = $1 ORDER BY id DESC LIMIT 1`, id).Scan(&why)
				r.note("job %s ended %s: %s", id, state, why)
			}
		}
		rows.Close()
	}
	for _, id := range ids {
		var ends int
		_ = s.db.QueryRowContext(ctx, `SELECT count(*) FROM job_events WHERE job_id = $1 AND to_state IN ('FINISHED','FAILED','KILLED','REJECTED','CANCELLED') AND from_state IS DISTINCT FROM to_state`, id).Scan(&ends)
		if ends > 1 && !seenDoubles["job "+id] {
			seenDoubles["job "+id] = true
			r.Doubled++
			r.note("job %s ended %d times", id, ends)
		}
	}
	var launches map[string]int
	if err := getJSON(s.EmuURL+"/sim/launches", "", &launches); err != nil {
		r.note("cannot read the emulator's launches: %v", err)
	}
	for task, n := range launches {
		if n > 1 && !seenDoubles[task] {
			seenDoubles[task] = true
			r.Doubled++
			r.note("task %s launched %d times", task, n)
		}
	}
	// Leaks: wait for the last releases (the leader releases after a job
	// ends, the sweep catches what a crash left).
	var leaks []string
	leakDeadline := time.Now().Add(60 * time.Second)
	for {
		leaks = s.leftovers()
		if len(leaks) == 0 || time.Now().After(leakDeadline) || ctx.Err() != nil {
			break
		}
		time.Sleep(time.Second)
	}
	r.Leaked += len(leaks)
	for i, x := range leaks {
		if i < 5 {
			r.note("left on Mesos: %s", x)
		}
	}
}

func terminal(state string) bool {
	switch state {
	case "FINISHED", "FAILED", "KILLED", "REJECTED", "CANCELLED":
		return true
	}
	return false
}

// leftovers is what sparkpack holds on the emulator: reservations and
// quotas of job roles, and live tasks of its drivers and their executors.
func (s *Stack) leftovers() []string {
	var out []string
	var res []struct {
		AgentID, Role string
		Labels        map[string]string
		CPUs          float64
	}
	if err := getJSON(s.EmuURL+"/sim/reservations", "", &res); err != nil {
		return []string{"cannot read reservations: " + err.Error()}
	}
	for _, r := range res {
		if strings.HasPrefix(r.Role, "sparkpack-job-") || r.Labels["sparkpack-job"] != "" {
			out = append(out, fmt.Sprintf("reservation %s on %s (%g cpus)", r.Role, r.AgentID, r.CPUs))
		}
	}
	var quotas map[string]string
	if err := getJSON(s.EmuURL+"/sim/quotas", "", &quotas); err == nil {
		for role, q := range quotas {
			if strings.HasPrefix(role, "sparkpack-job-") && q != "" {
				out = append(out, fmt.Sprintf("quota %s: %s", role, q))
			}
		}
	}
	var tasks []struct {
		TaskID, Role string
		State        json.RawMessage
	}
	if err := getJSON(s.EmuURL+"/sim/tasks", "", &tasks); err == nil {
		for _, t := range tasks {
			if liveState(string(t.State)) && (t.Role == "sparkpack" || strings.HasPrefix(t.Role, "sparkpack-job-")) {
				out = append(out, fmt.Sprintf("task %s (%s) %s", t.TaskID, t.Role, t.State))
			}
		}
	}
	sort.Strings(out)
	return out
}

// liveState: TASK_STARTING 0, RUNNING 1, STAGING 6, KILLING 8 (or their names).
func liveState(s string) bool {
	switch strings.Trim(s, `"`) {
	case "0", "1", "6", "8", "TASK_STARTING", "TASK_RUNNING", "TASK_STAGING", "TASK_KILLING":
		return true
	}
	return false
}

// waitCtx sleeps d unless ctx ends.
func waitCtx(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}
