package api

import (
	"context"
	"testing"

	"github.com/sparkpack/sparkpack/scheduler"
)

// TestListShowsWhyAJobFailed: the job list carries a FAILED job's reason
// (that of the event that made it FAILED, failedReason), so that `sparkpack
// jobs` can show it without the timeline; other jobs have none.
func TestListShowsWhyAJobFailed(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	submit := func(id string) string {
		t.Helper()
		resp, m := e.post(t, withField(goodJob, "id", id))
		if resp.StatusCode != 201 {
			t.Fatalf("submit: %d %v", resp.StatusCode, m)
		}
		return m["id"].(string)
	}
	failed, queued := submit("6f1d2c1e-8a7b-4c1d-9e2f-000000000011"), submit("6f1d2c1e-8a7b-4c1d-9e2f-000000000012")
	const why = "driver TASK_LOST on agent host-b: agent lost; no retries left (1 of 1 runs failed)"
	from := scheduler.Submitted
	for _, to := range []scheduler.State{scheduler.Queued, scheduler.Placing, scheduler.Reserving, scheduler.Launching, scheduler.Running, scheduler.Failed} {
		reason := "test"
		if to == scheduler.Failed {
			reason = why
		}
		if _, err := e.store.Transition(ctx, failed, from, to, reason, nil); err != nil {
			t.Fatalf("%s -> %s: %v", from, to, err)
		}
		from = to
	}
	if _, err := e.store.Transition(ctx, queued, scheduler.Submitted, scheduler.Queued, "queued", nil); err != nil {
		t.Fatal(err)
	}
	_, m := e.do(t, "GET", "/api/v1/jobs", "", "", nil)
	got := map[string]any{}
	for _, x := range m["jobs"].([]any) {
		v := x.(map[string]any)
		got[v["id"].(string)] = v["failedReason"]
	}
	if len(got) != 2 || got[failed] != why || got[queued] != nil {
		t.Fatalf("listed failedReason by job: %v; want %q for %s only", got, why, failed)
	}
}

// TestViewsSayHowLongAJobWaitedInTheQueue: the list and the job view carry
// queuedSeconds (the time in the queue so far) and, for a job that waits
// now, queuedSince; once it left the queue, no queuedSince.
func TestViewsSayHowLongAJobWaitedInTheQueue(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	resp, m := e.post(t, withField(goodJob, "id", "6f1d2c1e-8a7b-4c1d-9e2f-000000000031"))
	if resp.StatusCode != 201 {
		t.Fatalf("submit: %d %v", resp.StatusCode, m)
	}
	id := m["id"].(string)
	if _, err := e.store.Transition(ctx, id, scheduler.Submitted, scheduler.Queued, "queued", nil); err != nil {
		t.Fatal(err)
	}
	_, m = e.do(t, "GET", "/api/v1/jobs/"+id, "", "", nil)
	if sec, ok := m["queuedSeconds"].(float64); !ok || sec < 0 || m["queuedSince"] == nil {
		t.Fatalf("waiting job view: queuedSeconds %v, queuedSince %v", m["queuedSeconds"], m["queuedSince"])
	}
	if _, err := e.store.Transition(ctx, id, scheduler.Queued, scheduler.Placing, "placing", nil); err != nil {
		t.Fatal(err)
	}
	_, m = e.do(t, "GET", "/api/v1/jobs", "", "", nil)
	v := m["jobs"].([]any)[0].(map[string]any)
	if sec, ok := v["queuedSeconds"].(float64); !ok || sec < 0 || v["queuedSince"] != nil {
		t.Fatalf("placed job in the list: queuedSeconds %v, queuedSince %v", v["queuedSeconds"], v["queuedSince"])
	}
}
