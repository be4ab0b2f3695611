package main

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/sparkpack/sparkpack/scheduler"
)

// TestJobNamesPrefetch: the names of many jobs are read in one query and
// kept, so that building the cluster view does not read them one by one;
// ids repeated, unknown or not job ids are left to lookup.
func TestJobNamesPrefetch(t *testing.T) {
	ctx := context.Background()
	st, _ := quietStore(ctx, t)
	var ids []string
	for i := range 5 {
		spec := scheduler.Spec{ID: uuid.NewString(), Name: fmt.Sprintf("job-%d", i),
			App:       scheduler.App{AppResource: "local:///a.jar", MainClass: "a.B"},
			Executors: 1, ExecutorCores: 1, ExecutorMemoryMB: 1024}
		if err := spec.Validate(); err != nil {
			t.Fatal(err)
		}
		if _, _, err := st.CreateJob(ctx, scheduler.Job{Spec: spec, SubmittedAt: time.Now(), Fingerprint: spec.Fingerprint()}, ""); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, spec.ID, spec.ID) // each twice, as a job holding two agents
	}
	var n jobNames
	n.prefetch(ctx, st, append(ids, uuid.NewString()))
	// From now on the database is gone: only what prefetch kept answers.
	st.Close()
	for i := range 5 {
		if name, ok := n.lookup(ctx, st, ids[2*i]); !ok || name != fmt.Sprintf("job-%d", i) {
			t.Fatalf("name of job %d: %q, %v; want it read by prefetch", i, name, ok)
		}
	}
	if _, ok := n.lookup(ctx, st, "not-a-job"); ok {
		t.Fatal("an unknown job has a name")
	}
	n.prefetch(ctx, st, []string{"not-a-uuid"}) // a failed read leaves the cache as it was
	if name, ok := n.lookup(ctx, st, ids[0]); !ok || name != "job-0" {
		t.Fatalf("after a failed prefetch: %q, %v", name, ok)
	}
}
