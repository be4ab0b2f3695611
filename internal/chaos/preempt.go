package chaos

import (
	"bytes"
	"context"
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"time"

	"github.com/google/uuid"
	"github.com/lib/pq"
)

// sizedJob is a job of the given size; deadline (seconds from submission)
// when > 0. app is its signature for the learned run-time model: the
// regular jobs (20 s) and the deadline jobs (0.5 s) must not share one with
// each other or with the load's jobs, or the model, fitted on all of them,
// predicts the deadline jobs' run time from the long ones' and admission
// rejects them (seen: "it needs about 33 s even if started now").
func sizedJob(id, app string, executors, cores int, simSeconds, deadline float64) []byte {
	spec := map[string]any{
		"id": id, "name": "chaos-preempt", "labels": map[string]string{"sparkpack.io/app": app},
		"app": map[string]any{"appResource": "local:///opt/spark/examples/jars/spark-examples.jar",
			"mainClass": "org.apache.spark.examples.SparkPi", "args": []string{"10"}},
		"executors": executors, "executorCores": cores, "executorMemoryMB": 2048,
		"estimatedDurationSeconds": simSeconds,
	}
	if deadline > 0 {
		spec["deadline"] = deadline
	}
	b, _ := json.Marshal(spec)
	return b
}

// post submits body (retrying the same id on 503 and connection errors for
// up to 30 s); it reports whether the job was acknowledged.
func (s *Stack) post(ctx context.Context, i int, body []byte) bool {
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline) && ctx.Err() == nil; i++ {
		req, _ := http.NewRequest(http.MethodPost, s.Live(i).API+"/api/v1/jobs", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+TokenChaos)
		resp, err := client.Do(req)
		if err != nil {
			waitCtx(ctx, 200*time.Millisecond)
			continue
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusCreated || resp.StatusCode == http.StatusOK {
			return true
		}
		waitCtx(ctx, 300*time.Millisecond)
	}
	return false
}

// preemptKills fills the cluster with long regular jobs, then sends
// deadline jobs that can only meet their deadlines if a regular job is
// evicted, and kills the leader (kill -9) each time an eviction is decided
// (a job's preempt_requested set) and not yet carried out. Every job must
// still end once: an evicted job runs again from scratch and finishes; a
// deadline job may be REJECTED (its deadline passed while it waited), not
// lost or failed.
func preemptKills(ctx context.Context, s *Stack, c Config, r *Result) {
	var ids, deadlineIDs []string
	submit := func(body []byte, id string, deadline bool) {
		if s.post(ctx, len(ids), body) {
			ids = append(ids, id)
			if deadline {
				deadlineIDs = append(deadlineIDs, id)
				s.mayReject[id] = true
			}
		}
	}
	// Regular jobs of 6 executors of 2 cpus that run 20 s (400 simulated
	// seconds at the default time scale): 8 of them fill thesis14's 100
	// cpus.
	hog := func() {
		id := uuid.NewString()
		submit(sizedJob(id, "chaos-regular", 6, 2, 20/c.timeScale(), 0), id, false)
	}
	for range 8 {
		hog()
	}
	// Until they run (with power management, once the agents they need
	// have booted): a deadline job that arrives before would simply go
	// first.
	for wait := time.Now().Add(time.Minute); time.Now().Before(wait) && ctx.Err() == nil; {
		var n int
		if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM jobs WHERE id = ANY($1::uuid[]) AND state = 'RUNNING'`, pq.Array(ids)).Scan(&n); err == nil && n >= 7 {
			break
		}
		waitCtx(ctx, 200*time.Millisecond)
	}
	kills := 0
	deadline := time.Now().Add(time.Duration(c.PreemptKills)*20*time.Second + time.Minute)
	for round := 0; kills < c.PreemptKills && ctx.Err() == nil && time.Now().Before(deadline); round++ {
		// Two deadline jobs that need a regular job's room within 15 s.
		for range 2 {
			id := uuid.NewString()
			submit(sizedJob(id, "chaos-deadline", 2, 2, 0.5/c.timeScale(), 15), id, true)
		}
		hog() // keep the cluster full
		seen := false
		for wait := time.Now().Add(10 * time.Second); time.Now().Before(wait) && ctx.Err() == nil; {
			var n int
			if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM jobs WHERE preempt_requested <> '' AND state IN ('RUNNING','LAUNCHING','RESERVING')`).Scan(&n); err == nil && n > 0 {
				seen = true
				break
			}
			waitCtx(ctx, 20*time.Millisecond)
		}
		if !seen {
			continue
		}
		waitCtx(ctx, time.Duration(rand.IntN(200))*time.Millisecond)
		if killLeader(ctx, s, c, r) {
			kills++
		}
		waitCtx(ctx, time.Duration(1500+rand.IntN(1500))*time.Millisecond)
	}
	r.note("leader killed %d times with an eviction decided and not carried out", kills)
	waitCtx(ctx, 2*time.Second)
	s.Check(ctx, r, ids, nil, c.Settle, s.seen)
	var evicted, evictions, rejected int
	_ = s.db.QueryRowContext(ctx, `SELECT count(*) FILTER (WHERE preemptions > 0), coalesce(sum(preemptions), 0) FROM jobs WHERE id = ANY($1::uuid[])`, pq.Array(ids)).Scan(&evicted, &evictions)
	_ = s.db.QueryRowContext(ctx, `SELECT count(*) FROM jobs WHERE id = ANY($1::uuid[]) AND state = 'REJECTED'`, pq.Array(deadlineIDs)).Scan(&rejected)
	r.note("%d jobs evicted %d times in all; %d of %d deadline jobs rejected", evicted, evictions, rejected, len(deadlineIDs))
	if rows, err := s.db.QueryContext(ctx, `SELECT DISTINCT ON (e.job_id) e.reason FROM job_events e JOIN jobs j ON j.id = e.job_id
		WHERE j.id = ANY($1::uuid[]) AND j.state = 'REJECTED' AND e.to_state = 'REJECTED' ORDER BY e.job_id, e.id DESC LIMIT 3`, pq.Array(deadlineIDs)); err == nil {
		for rows.Next() {
			var why string
			if rows.Scan(&why) == nil {
				r.note("  rejected: %s", why)
			}
		}
		rows.Close()
	}
	if kills == 0 {
		r.note("NO kill landed on a decided eviction: the scenario did not exercise what it is for")
	}
}

// timeScale is the emulator's wall seconds per simulated second (the
// suite's --time-scale, 0.05 when unset).
func (c Config) timeScale() float64 {
	if c.TimeScale > 0 {
		return c.TimeScale
	}
	return 0.05
}
