package api

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/learned"
	"github.com/sparkpack/sparkpack/perfmodel"
	"github.com/sparkpack/sparkpack/scheduler"
	"github.com/sparkpack/sparkpack/store"
)

// TestSizeHintsBadInput: nonsense size hints and executor bounds are 400s
// naming the field, and nothing is stored.
func TestSizeHintsBadInput(t *testing.T) {
	e := newEnv(t, nil)
	for _, c := range []struct {
		name  string
		body  string
		field string
	}{
		{"negative input size", withField(goodJob, "inputSizeGB", -5), "inputSizeGB"},
		{"huge input size", withField(goodJob, "inputSizeGB", 1e300), "inputSizeGB"},
		{"input size as string", withField(goodJob, "inputSizeGB", "NaN"), "inputSizeGB"},
		{"negative iterations", withField(goodJob, "iterations", -1), "iterations"},
		{"huge iterations", withField(goodJob, "iterations", 1e12), "iterations"},
		{"NaN input-size label", withField(goodJob, "labels", map[string]any{"sparkpack.io/input-size-gb": "NaN"}), "labels.sparkpack.io/input-size-gb"},
		{"Inf input-size label", withField(goodJob, "labels", map[string]any{"sparkpack.io/input-size-gb": "+Inf"}), "labels.sparkpack.io/input-size-gb"},
		{"negative iterations label", withField(goodJob, "labels", map[string]any{"sparkpack.io/iterations": "-2"}), "labels.sparkpack.io/iterations"},
		{"executors neither count nor auto", withField(goodJob, "executors", "lots"), "executors"},
		{"bounds without auto", withField(goodJob, "maxExecutors", 8), "minExecutors"},
		{"min above max", withField(withField(withField(goodJob, "executors", "auto"), "minExecutors", 9), "maxExecutors", 3), "maxExecutors"},
		{"sizing sent by a client", withField(goodJob, "sizing", map[string]any{"auto": true, "executors": 3}), "sizing"},
	} {
		t.Run(c.name, func(t *testing.T) {
			resp, m := e.post(t, c.body)
			if resp.StatusCode != 400 || m["field"] != c.field {
				t.Fatalf("status %d field %v (%v); want 400 naming %s", resp.StatusCode, m["field"], m["error"], c.field)
			}
		})
	}
	if jobs, _, _ := e.store.ListJobs(context.Background(), store.ListOptions{}); len(jobs) != 0 {
		t.Fatalf("bad input stored %d jobs", len(jobs))
	}
}

// TestAutoExecutors: an "executors": "auto" job with a deadline is sized
// at submission from the learned model: the cheapest count whose p90
// meets its deadline; the job shows the count, why (its sizing) and an
// event; the same body sent again finds the same job.
func TestAutoExecutors(t *testing.T) {
	m := learned.New()
	sig := "local:///opt/spark/examples/jars/spark-examples.jar org.apache.spark.examples.JavaWordCount"
	t0 := time.Now()
	for i := range 10 {
		e := 1 + i%8
		s := 600/float64(e) + 30
		m.Observe(scheduler.RunRecord{JobID: "past", Signature: sig, AppType: "wordcount", Executors: e, Seconds: s,
			StartedAt: t0, EndedAt: t0, Outcome: scheduler.RunFinished})
	}
	e := newEnv(t, func(c *Config) { c.RightSize = m.RightSize })
	body := withField(withField(withField(goodJob, "executors", "auto"), "deadline", 300), "id", "0b7e3a52-4d2f-4a61-9c55-1f2e3d4c5b6a")
	resp, v := e.post(t, body)
	if resp.StatusCode != 201 {
		t.Fatalf("status %d: %v", resp.StatusCode, v)
	}
	n := int(v["executors"].(float64))
	k := scheduler.RunKey{Signature: sig, App: "wordcount", Size: 1}
	p, _ := m.Predict(k, n, perfmodel.Placement{})
	fewer, _ := m.Predict(k, n-1, perfmodel.Placement{})
	if p.P90 > 300 || fewer.P90 <= 300 {
		t.Fatalf("chose %d executors: p90 %.0f s (one fewer %.0f s) for a 300 s deadline", n, p.P90, fewer.P90)
	}
	sz, _ := v["sizing"].(map[string]any)
	if sz["auto"] != true || int(sz["executors"].(float64)) != n || sz["level"] != "signature" || !strings.Contains(sz["reason"].(string), "cheapest") {
		t.Fatalf("sizing %v", sz)
	}
	id := v["id"].(string)
	_, got := e.do(t, "GET", "/api/v1/jobs/"+id, "", "", nil)
	evs, _ := got["events"].([]any)
	found := false
	for _, ev := range evs {
		if r, _ := ev.(map[string]any)["reason"].(string); strings.HasPrefix(r, "executors auto: ") && strings.Contains(r, "cheapest") {
			found = true
		}
	}
	if got["sizing"] == nil || !found {
		t.Fatalf("job view: sizing %v events %v", got["sizing"], evs)
	}
	// The same body again: the same job, though the model learned since.
	m.Observe(scheduler.RunRecord{JobID: "past", Signature: sig, AppType: "wordcount", Executors: 2, Seconds: 900, StartedAt: t0, EndedAt: t0, Outcome: scheduler.RunFinished})
	resp, again := e.post(t, body)
	if resp.StatusCode != 200 || again["id"] != id || int(again["executors"].(float64)) != n {
		t.Fatalf("resubmission: %d %v", resp.StatusCode, again)
	}
}

// TestSubmitterKeysTheEstimates: a job keeps the name of the token that
// submitted it, both as the scheduler hears of it and as it is stored, so
// that without a team its estimate is learned with that token's
// (scheduler.EstimateKeyOf); with a team, with the team's.
func TestSubmitterKeysTheEstimates(t *testing.T) {
	tokens, err := ParseTokens(strings.NewReader(teamTokens))
	if err != nil {
		t.Fatal(err)
	}
	n := &jobNotifier{}
	e := newEnv(t, func(c *Config) { c.Guard = &Guard{Tokens: tokens}; c.Notifier = n })
	for token, want := range map[string]string{"ci-token-0123456789abcdef": "token:ci", "etl-token-0123456789abcdef": "team:analytics"} {
		body := withField(goodJob, "labels", map[string]any{"owner": "bob"})
		resp, m := e.do(t, "POST", "/api/v1/jobs", "application/json", token, strings.NewReader(body))
		if resp.StatusCode != 201 {
			t.Fatalf("submit: %d %v", resp.StatusCode, m)
		}
		id := m["id"].(string)
		var heard *scheduler.Job
		n.mu.Lock()
		for i := range n.jobs {
			if n.jobs[i].ID == id {
				heard = &n.jobs[i]
			}
		}
		n.mu.Unlock()
		stored, err := e.store.GetJob(context.Background(), id)
		if err != nil || heard == nil {
			t.Fatalf("job %s: heard %v, stored %v", id, heard, err)
		}
		if got := scheduler.EstimateKeyOf(heard); got != want {
			t.Errorf("%s: the scheduler heard key %q, want %q", token, got, want)
		}
		if got := scheduler.EstimateKeyOf(&stored); got != want {
			t.Errorf("%s: stored key %q, want %q", token, got, want)
		}
	}
}

// jobNotifier records the jobs the scheduler hears of.
type jobNotifier struct {
	mu   sync.Mutex
	jobs []scheduler.Job
}

func (n *jobNotifier) JobSubmitted(j scheduler.Job) {
	n.mu.Lock()
	n.jobs = append(n.jobs, j)
	n.mu.Unlock()
}
func (n *jobNotifier) JobCancelled(scheduler.Job, bool) {}
