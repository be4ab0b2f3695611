package api

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/clusterspec"
	"github.com/sparkpack/sparkpack/scheduler"
	"github.com/sparkpack/sparkpack/simulate"
)

// TestPlanFairShare: POST /api/v1/plan places a regular job where the
// pass's fair share between teams tries it, and the pass keeps the
// answer. Real PostgreSQL, the real scheduler core on a simulated
// one-agent cluster of 32 cpus (which counts executors).
//
// Team analytics (the etl token's) runs a1 (8 cpus), team c's filler
// holds 20 cpus, and team bi's b1 (8 cpus) waits, 4 being free. Once the
// filler ends 24 are free: room for analytics' a2 (20 cpus, the larger
// demand: first in the queue's own order) or b1, not both. The fair share
// offers the room to bi (nothing running) before analytics (9 of 32
// cpus): the preview says a2 waits behind b1, and the pass starts b1.
func TestPlanFairShare(t *testing.T) {
	tokens, err := ParseTokens(strings.NewReader(teamTokens))
	if err != nil {
		t.Fatal(err)
	}
	var core *scheduler.Core
	holder := teamsHolder(t, "analytics\nbi\nc\n")
	e := newEnv(t, func(c *Config) {
		c.Guard = &Guard{Tokens: tokens}
		c.Teams = holder
		c.Preview = func(ctx context.Context, j scheduler.Job, now time.Time) (scheduler.Preview, error) {
			return core.Preview(ctx, j, now)
		}
	})
	spec := clusterspec.Cluster{Name: "one", Agents: []clusterspec.Agent{{ID: "a1", Hostname: "a1", CPUs: 32, MemMB: 131072, PricePerHour: 0.5}}}
	cluster := simulate.NewCluster(spec, scheduler.SystemClock{})
	core, err = scheduler.New(scheduler.Config{Policy: "bfd", Teams: holder, Log: discard()}, cluster, e.store, nil)
	if err != nil {
		t.Fatal(err)
	}
	const etl, ci = "etl-token-0123456789abcdef", "ci-token-0123456789abcdef"
	ctx := context.Background()
	sized := func(team string, executors, cores int) string {
		return withField(withField(withField(goodJob, "labels", map[string]any{"team": team}), "executors", executors), "executorCores", cores)
	}
	submit := func(token, body string) string {
		t.Helper()
		resp, m := e.do(t, "POST", "/api/v1/jobs", "application/json", token, strings.NewReader(body))
		if resp.StatusCode != 201 {
			t.Fatalf("submit: %d %v", resp.StatusCode, m)
		}
		j, err := e.store.GetJob(ctx, m["id"].(string))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := core.Submit(ctx, j); err != nil {
			t.Fatal(err)
		}
		return j.ID
	}
	a1 := submit(etl, sized("ml", 4, 2)) // team analytics: the token's
	filler := submit(ci, sized("c", 5, 4))
	if n, err := core.Schedule(ctx); n != 2 || err != nil {
		t.Fatalf("started %d (%v), want a1 and the filler", n, err)
	}
	b1 := submit(ci, sized("bi", 4, 2))
	if n, err := core.Schedule(ctx); n != 0 || err != nil {
		t.Fatalf("started %d (%v), want b1 to wait", n, err)
	}
	for _, st := range []scheduler.State{scheduler.Launching, scheduler.Running, scheduler.Finished} {
		if err := core.Report(ctx, filler, st, ""); err != nil {
			t.Fatalf("filler %s: %v", st, err)
		}
	}
	a2 := sized("ml", 10, 2)
	resp, m := e.do(t, "POST", "/api/v1/plan", "application/json", etl, strings.NewReader(a2))
	if resp.StatusCode != 200 {
		t.Fatalf("plan: %d %v", resp.StatusCode, m)
	}
	before, _ := m["teamsBefore"].([]any)
	if m["startsNow"] != false || m["ahead"] != float64(1) || len(before) != 1 || before[0] != "bi" ||
		!strings.Contains(str(m["waitingReason"]), "the fair share between teams offers the room to team bi before team analytics") {
		t.Fatalf("plan of a2: %v; want a wait behind team bi's job", m)
	}
	// The pass decides as the preview said: b1 starts, a2 waits.
	submit(etl, a2)
	if n, err := core.Schedule(ctx); n != 1 || err != nil {
		t.Fatalf("started %d (%v), want b1 only", n, err)
	}
	var waiting []string
	for _, q := range core.Queues().Regular {
		waiting = append(waiting, q.ID)
	}
	if slices.Contains(waiting, b1) || len(waiting) != 1 {
		t.Errorf("waiting after the pass: %v; want a2 only (b1 %s started, a1 %s runs)", waiting, b1, a1)
	}
}
