package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/sparkpack/sparkpack/clusterspec"
	"github.com/sparkpack/sparkpack/integration/loadgen"
	"github.com/sparkpack/sparkpack/internal/syncbuf"
	"github.com/sparkpack/sparkpack/mesossim"
)

// TestClusterAtScale is the short version of scripts/bench-cluster.sh
// (issue 20): on a generated cluster of 2,000 agents, 51 small jobs
// submitted at once all finish, each driver launched once after its
// reservations were confirmed, nothing stays reserved, and the cluster view
// pages through every agent with a summary of all of them. It asserts
// behaviour, not timings (the figures are the script's).
func TestClusterAtScale(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	const agents, jobs = 2000, 51
	cl, err := clusterspec.ParseBytes([]byte(fmt.Sprintf(`{"name": "gen2000", "groups": [
		{"count": %d, "cpus": 4, "memMB": 16384, "pricePerHour": 0.24, "instanceType": "m.xlarge"},
		{"count": %d, "cpus": 8, "memMB": 32768, "pricePerHour": 0.48, "instanceType": "m.2xlarge"},
		{"count": %d, "cpus": 12, "memMB": 49152, "pricePerHour": 0.72, "instanceType": "m.3xlarge"}]}`,
		agents*6/14, agents*5/14, agents-agents*6/14-agents*5/14)))
	if err != nil {
		t.Fatal(err)
	}
	quiet := logrus.New()
	quiet.SetLevel(logrus.WarnLevel)
	quiet.SetOutput(&syncbuf.Buffer{})
	// A Mesos master's allocation interval (1 s): offers come in batches.
	emu := startEmulator(t, mesossim.Config{Cluster: cl, OfferInterval: time.Second, Logger: quiet})
	sp := startSparkpack(t, emu.URL, e2eDB(t), "--log-level", "info", "--agents-refresh", "2s", "--rate-limit", "0")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c := loadgen.NewClient(sp.API, "", 16)

	var view struct {
		Agents []struct {
			ID string `json:"id"`
		} `json:"agents"`
		Summary struct {
			Agents  int            `json:"agents"`
			ByState map[string]int `json:"byState"`
			CPUs    float64        `json:"cpus"`
		} `json:"summary"`
		Total int    `json:"total"`
		Next  string `json:"next"`
	}
	for {
		if err := c.GetJSON(ctx, "/api/v1/cluster?limit=1", &view); err == nil && view.Summary.Agents == agents {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("serve shows %d agents, want %d", view.Summary.Agents, agents)
		case <-time.After(100 * time.Millisecond):
		}
	}

	ids := make([]string, jobs)
	for i := range ids {
		ids[i] = loadgen.NewID()
		if _, err := c.Submit(ctx, loadgen.Job(ids[i], fmt.Sprintf("small-%d", i), 2, 1, 1024, 20)); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range ids {
		j, err := c.WaitFor(ctx, id, "FINISHED", "FAILED", "KILLED")
		if err != nil {
			t.Fatal(err)
		}
		if j.State != "FINISHED" {
			t.Fatalf("job %s ended %s (%s)", id, j.State, j.Reason)
		}
	}
	// Each driver was launched after its reservations were confirmed. (A
	// launch may be dropped by the master when its offer was rescinded in
	// the meantime, as on a real master; it is launched again, uncounted:
	// count those to report them.)
	dropped := 0
	for _, id := range ids {
		var j struct {
			Events []struct {
				To     string `json:"to"`
				Reason string `json:"reason"`
			} `json:"events"`
		}
		if err := c.GetJSON(ctx, "/api/v1/jobs/"+id, &j); err != nil {
			t.Fatal(err)
		}
		confirmed, launched := -1, 0
		for i, e := range j.Events {
			if e.To == "LAUNCHING" && strings.HasPrefix(e.Reason, "reservations confirmed") && confirmed < 0 {
				confirmed = i
			}
			if strings.Contains(e.Reason, "no longer valid") {
				dropped++
			}
			if strings.Contains(e.Reason, " launched on agent ") {
				launched++
				if confirmed < 0 {
					t.Fatalf("job %s: driver launched before its reservations were confirmed: %+v", id, j.Events)
				}
			}
		}
		if launched < 1 {
			t.Fatalf("job %s: no driver launch: %+v", id, j.Events)
		}
	}
	t.Logf("%d jobs finished on %d agents; %d launches dropped for a rescinded offer and launched again", jobs, agents, dropped)
	// Nothing of the jobs stays reserved.
	deadline := time.Now().Add(30 * time.Second)
	for {
		left := 0
		for _, r := range emu.Reservations() {
			if r.Labels["sparkpack-job"] != "" {
				left++
			}
		}
		if left == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d sparkpack reservations left after every job finished", left)
		}
		time.Sleep(100 * time.Millisecond)
	}
	// The cluster view: a page, the summary of all, and pages that walk
	// every agent once.
	if err := c.GetJSON(ctx, "/api/v1/cluster", &view); err != nil {
		t.Fatal(err)
	}
	if len(view.Agents) != 1000 || view.Next == "" || view.Summary.Agents != agents || view.Total != agents ||
		view.Summary.CPUs != float64(agents*6/14*4+agents*5/14*8+(agents-agents*6/14-agents*5/14)*12) {
		t.Fatalf("default page: %d agents, next %q, total %d, summary %+v", len(view.Agents), view.Next, view.Total, view.Summary)
	}
	seen := map[string]bool{}
	cursor := ""
	for pages := 0; ; pages++ {
		if pages > agents/700+1 {
			t.Fatal("the pages do not end")
		}
		if err := c.GetJSON(ctx, "/api/v1/cluster?limit=700&cursor="+cursor, &view); err != nil {
			t.Fatal(err)
		}
		for _, a := range view.Agents {
			if seen[a.ID] {
				t.Fatalf("agent %s on two pages", a.ID)
			}
			seen[a.ID] = true
		}
		if view.Next == "" {
			break
		}
		cursor = view.Next
	}
	if len(seen) != agents {
		t.Fatalf("the pages list %d agents, want %d", len(seen), agents)
	}
}
