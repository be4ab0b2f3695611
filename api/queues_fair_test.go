package api

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/clusterspec"
	"github.com/sparkpack/sparkpack/scheduler"
	"github.com/sparkpack/sparkpack/simulate"
)

// coreViews serves GET /api/v1/queues from a scheduler core as serve does
// (QueuesPage); the cluster and cost panels are not read here.
type coreViews struct{ core *scheduler.Core }

func (v *coreViews) Cluster(context.Context) (ClusterView, error) { return ClusterView{}, nil }
func (v *coreViews) Queues(_ context.Context, q QueuesQuery) (QueuesView, error) {
	return QueuesPage(v.core, q, time.Now(), 1)
}
func (v *coreViews) Cost(context.Context) (CostView, error) { return CostView{}, nil }

// TestQueuesFairShareOrder: GET /api/v1/queues lists the regular queue in
// the order the pass tries it between teams, says so (regularOrder
// "fair-share", the teams in that order with their shares), pages in that
// order, and the pass then gives the room to the job listed first. Real
// PostgreSQL, the real scheduler core on a simulated one-agent cluster of
// 32 cpus (which counts executors).
//
// Team analytics runs a1 (8 cpus), team c's filler holds 20, 4 are free.
// Waiting: analytics' a2 (20 cpus: the largest demand, first in the
// queue's own order) and a3 (6), team bi's b1 (8) and b2 (6). bi holds
// nothing, analytics 9 of 32 cpus: the pass offers bi the room first, so
// the queue reads b1, b2, a2, a3. Once the filler ends 24 cpus are free,
// room for a2 or b1 but not both: the pass starts b1, the first listed.
func TestQueuesFairShareOrder(t *testing.T) {
	holder := teamsHolder(t, "analytics\nbi\nc\n")
	views := &coreViews{}
	e := newEnv(t, func(c *Config) {
		c.Teams = holder
		c.Views = views
	})
	spec := clusterspec.Cluster{Name: "one", Agents: []clusterspec.Agent{{ID: "a1", Hostname: "a1", CPUs: 32, MemMB: 131072, PricePerHour: 0.5}}}
	cluster := simulate.NewCluster(spec, scheduler.SystemClock{})
	core, err := scheduler.New(scheduler.Config{Policy: "bfd", Teams: holder, Log: discard()}, cluster, e.store, nil)
	if err != nil {
		t.Fatal(err)
	}
	views.core = core
	ctx := context.Background()
	submit := func(name, team string, executors, cores int) string {
		t.Helper()
		body := withField(withField(withField(withField(goodJob, "labels", map[string]any{"team": team}), "executors", executors), "executorCores", cores), "name", name)
		resp, m := e.do(t, "POST", "/api/v1/jobs", "application/json", "", strings.NewReader(body))
		if resp.StatusCode != 201 {
			t.Fatalf("submit %s: %d %v", name, resp.StatusCode, m)
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
	submit("a1", "analytics", 4, 2)
	filler := submit("filler", "c", 5, 4)
	if n, err := core.Schedule(ctx); n != 2 || err != nil {
		t.Fatalf("started %d (%v), want a1 and the filler", n, err)
	}
	ids := map[string]string{}
	for _, j := range []struct {
		name, team       string
		executors, cores int
	}{{"a2", "analytics", 10, 2}, {"b1", "bi", 4, 2}, {"a3", "analytics", 3, 2}, {"b2", "bi", 3, 2}} {
		ids[submit(j.name, j.team, j.executors, j.cores)] = j.name
	}
	if n, err := core.Schedule(ctx); n != 0 || err != nil {
		t.Fatalf("started %d (%v), want all four to wait", n, err)
	}
	get := func(path string) QueuesView {
		t.Helper()
		resp, err := http.Get(e.srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("GET %s: %d %s", path, resp.StatusCode, b)
		}
		var v QueuesView
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatalf("GET %s: %v: %s", path, err, b)
		}
		return v
	}
	names := func(v QueuesView) (jobs, teams []string) {
		for _, q := range v.Regular {
			jobs = append(jobs, ids[q.ID])
		}
		for _, tm := range v.Teams {
			teams = append(teams, tm.Team)
		}
		return jobs, teams
	}
	v := get("/api/v1/queues")
	jobs, teams := names(v)
	if !slices.Equal(jobs, []string{"b1", "b2", "a2", "a3"}) || v.RegularOrder != "fair-share" || !slices.Equal(teams, []string{"bi", "analytics"}) {
		t.Fatalf("regular queue %v (%q), teams %v; want b1 b2 a2 a3 (fair-share), teams bi then analytics", jobs, v.RegularOrder, teams)
	}
	if bi, an := v.Teams[0], v.Teams[1]; bi.Jobs != 2 || bi.Share != 0 || an.Jobs != 2 || an.Share < 0.28 || an.Share > 0.29 || an.LastStart == nil {
		t.Errorf("teams %+v; want bi with 2 jobs and share 0, analytics with 2 jobs, share 9/32 and its last start", v.Teams)
	}
	// Two a page: the same order, each page with its own teams.
	p1 := get("/api/v1/queues?limit=2")
	p2 := get("/api/v1/queues?limit=2&cursor=" + p1.Next)
	j1, t1 := names(p1)
	j2, t2 := names(p2)
	if !slices.Equal(append(j1, j2...), jobs) || !slices.Equal(t1, []string{"bi"}) || !slices.Equal(t2, []string{"analytics"}) || p2.Next != "" {
		t.Errorf("pages of 2: %v (teams %v), %v (teams %v, next %q); want %v, bi then analytics", j1, t1, j2, t2, p2.Next, jobs)
	}
	// The filler ends: the pass gives the room to the job listed first.
	for _, st := range []scheduler.State{scheduler.Launching, scheduler.Running, scheduler.Finished} {
		if err := core.Report(ctx, filler, st, ""); err != nil {
			t.Fatalf("filler %s: %v", st, err)
		}
	}
	if _, err := core.Schedule(ctx); err != nil {
		t.Fatal(err)
	}
	left, _ := names(get("/api/v1/queues"))
	if slices.Contains(left, "b1") || !slices.Contains(left, "a2") {
		t.Errorf("waiting after the pass: %v; want b1 started (listed first) and a2 waiting", left)
	}
}
