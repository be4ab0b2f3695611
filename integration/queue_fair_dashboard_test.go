package integration

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/sparkpack/sparkpack/api"
	"github.com/sparkpack/sparkpack/clusterspec"
	"github.com/sparkpack/sparkpack/scheduler"
	"github.com/sparkpack/sparkpack/simulate"
	"github.com/sparkpack/sparkpack/store"
	"github.com/sparkpack/sparkpack/teams"
)

// coreQueues serves the dashboard's queue panel from a scheduler core as
// serve does (api.QueuesPage); the cluster and cost panels are empty.
type coreQueues struct{ core *scheduler.Core }

func (v *coreQueues) Cluster(context.Context) (api.ClusterView, error) { return api.ClusterView{}, nil }
func (v *coreQueues) Queues(_ context.Context, q api.QueuesQuery) (api.QueuesView, error) {
	return api.QueuesPage(v.core, q, time.Now(), 1)
}
func (v *coreQueues) Cost(context.Context) (api.CostView, error) { return api.CostView{}, nil }

// TestDashboardQueueFairShare: with teams, the dashboard's regular queue
// lists the jobs in the order the pass tries them (team by team in the
// fair share, not by demand), says so in its heading, and names the teams
// in the order they are offered the room, with what the order means.
// Real PostgreSQL, the real scheduler core on a simulated one-agent
// cluster of 32 cpus, headless Chromium. Team analytics runs a1 (8 cpus),
// team c's filler 20; analytics' a2 (20 cpus, the largest demand) and a3
// (6), and team bi's b1 (8) and b2 (6) wait. bi holds nothing: it is
// offered the room first, so the queue reads b1, b2, a2, a3.
func TestDashboardQueueFairShare(t *testing.T) {
	b := newBrowser(t)
	var st *store.Store
	holder := &teams.Holder{}
	tc, err := teams.Parse(strings.NewReader("analytics\nbi\nc\n"))
	if err != nil {
		t.Fatal(err)
	}
	holder.Set(tc)
	views := &coreQueues{}
	base := startAPIWith(t, func(c *api.Config) {
		st = c.Store.(*store.Store)
		c.Teams = holder
		c.Views = views
	})
	spec := clusterspec.Cluster{Name: "one", Agents: []clusterspec.Agent{{ID: "a1", Hostname: "a1", CPUs: 32, MemMB: 131072, PricePerHour: 0.5}}}
	log := scheduler.DiscardLogger()
	core, err := scheduler.New(scheduler.Config{Policy: "bfd", Teams: holder, Log: log}, simulate.NewCluster(spec, scheduler.SystemClock{}), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	views.core = core
	ctx := context.Background()
	submit := func(name, team string, executors, cores int) {
		t.Helper()
		id := postJob(t, base, `{"name":`+quote(name)+`,"app":{"appResource":"local:///a.jar","mainClass":"a.B"},"executors":`+
			strconv.Itoa(executors)+`,"executorCores":`+strconv.Itoa(cores)+`,"executorMemoryMB":1024,"labels":{"team":`+quote(team)+`}}`)
		j, err := st.GetJob(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := core.Submit(ctx, j); err != nil {
			t.Fatal(err)
		}
	}
	submit("a1", "analytics", 4, 2)
	submit("filler", "c", 5, 4)
	if n, err := core.Schedule(ctx); n != 2 || err != nil {
		t.Fatalf("started %d (%v), want a1 and the filler", n, err)
	}
	submit("a2", "analytics", 10, 2)
	submit("b1", "bi", 4, 2)
	submit("a3", "analytics", 3, 2)
	submit("b2", "bi", 3, 2)
	if n, err := core.Schedule(ctx); n != 0 || err != nil {
		t.Fatalf("started %d (%v), want all four to wait", n, err)
	}
	var order, heading, ranked string
	b.run(t, 60*time.Second,
		chromedp.Navigate(base+"/#/"),
		pageTexts(50*time.Second,
			textRead{sel: `#queue-regular`, out: &order, until: "a3"},
			textRead{sel: `#regular-order`, out: &heading, until: "fair share"},
			textRead{sel: `#regular-teams`, out: &ranked, until: "analytics"}))
	var names []string
	for _, line := range strings.Split(order, "\n") {
		if name, _, job := strings.Cut(line, " · "); job { // a job's line (its reason is a line of its own)
			names = append(names, name)
		}
	}
	if strings.Join(names, " ") != "b1 b2 a2 a3" {
		t.Errorf("the regular queue reads %q (%q); want b1 b2 a2 a3, the order the pass tries them", names, order)
	}
	if !strings.Contains(order, "b1 · team bi") || !strings.Contains(order, "a2 · team analytics") {
		t.Errorf("the regular queue %q does not name each job's team", order)
	}
	if heading != "(team by team in the fair share between teams, each team's largest demand first)" {
		t.Errorf("the regular queue's heading says %q", heading)
	}
	const teamsLine = "Teams offered the room in this order, as they stand now: bi (weighted share 0.00; 2 jobs), analytics (weighted share 0.28; 2 jobs). " +
		"This is the order the next pass tries them until one starts: a start ranks its team again, and that team's later jobs may then go after other teams'."
	if ranked != teamsLine {
		t.Errorf("the teams line says\n%q\nwant\n%q", ranked, teamsLine)
	}
	b.screenshot(t, "queue-fair-share")
}
