package api

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"net/http"
	"net/url"
	"runtime"
	"slices"
	"testing"
	"time"
	"unsafe"
)

func testAgents(n int) []AgentView {
	out := make([]AgentView, n)
	states := []string{"idle", "active", "off"}
	for i := range out {
		out[i] = AgentView{ID: fmt.Sprintf("S%d", i), Hostname: fmt.Sprintf("agent-%d", i+1),
			CPUs: 8, MemMB: 32768, FreeCPUs: float64(i % 9), FreeMemMB: 1024, PricePerHour: 0.5, State: states[i%3]}
	}
	return out
}

func TestParseClusterQuery(t *testing.T) {
	for _, tc := range []struct {
		q     string
		want  ClusterQuery
		field string
	}{
		{"", ClusterQuery{}, ""},
		{"limit=1", ClusterQuery{Limit: 1}, ""},
		{"limit=5000&cursor=S9&state=active", ClusterQuery{Limit: 5000, Cursor: "S9", State: "active"}, ""},
		{"state=off", ClusterQuery{State: "off"}, ""},
		{"limit=0", ClusterQuery{}, "limit"},
		{"limit=5001", ClusterQuery{}, "limit"},
		{"limit=ten", ClusterQuery{}, "limit"},
		{"state=busy", ClusterQuery{}, "state"},
		{"page=2", ClusterQuery{}, "page"},
	} {
		v, _ := url.ParseQuery(tc.q)
		got, field, err := parseClusterQuery(v)
		if field != tc.field || (err != nil) != (tc.field != "") {
			t.Errorf("%q: field %q, err %v; want field %q", tc.q, field, err, tc.field)
			continue
		}
		if err == nil && got != tc.want {
			t.Errorf("%q: %+v, want %+v", tc.q, got, tc.want)
		}
	}
}

// Walking the pages gives every selected agent exactly once, in order,
// whatever the page size; the summary always counts the whole cluster.
func TestClusterPagesWalkEveryAgentOnce(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	for iter := 0; iter < 200; iter++ {
		n := rng.Intn(60)
		all := ClusterView{Agents: testAgents(n)}
		q := ClusterQuery{Limit: 1 + rng.Intn(12), State: []string{"", "idle", "active", "off"}[rng.Intn(4)]}
		var want []string
		for _, a := range all.Agents {
			if q.State == "" || a.State == q.State {
				want = append(want, a.ID)
			}
		}
		var got []string
		for pages := 0; ; pages++ {
			if pages > n+1 {
				t.Fatalf("n=%d %+v: the pages do not end", n, q)
			}
			p, err := clusterPage(all, q)
			if err != nil {
				t.Fatalf("n=%d %+v: %v", n, q, err)
			}
			if p.Summary == nil || p.Summary.Agents != n || p.Total != len(want) {
				t.Fatalf("n=%d %+v: summary %+v total %d, want %d agents and %d selected", n, q, p.Summary, p.Total, n, len(want))
			}
			if len(p.Agents) > q.Limit {
				t.Fatalf("page of %d agents, limit %d", len(p.Agents), q.Limit)
			}
			for _, a := range p.Agents {
				got = append(got, a.ID)
			}
			if p.Next == "" {
				break
			}
			q.Cursor = p.Next
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("n=%d state %q: pages gave %v, want %v", n, q.State, got, want)
		}
	}
}

func TestClusterSummaryAndBadCursor(t *testing.T) {
	all := ClusterView{Agents: testAgents(7)}
	all.Agents[1].Power = "draining"
	p, err := clusterPage(all, ClusterQuery{})
	if err != nil {
		t.Fatal(err)
	}
	s := p.Summary
	if len(p.Agents) != 7 || p.Next != "" || s.ByState["idle"] != 3 || s.ByState["active"] != 2 || s.ByState["off"] != 2 ||
		s.CPUs != 56 || s.FreeCPUs != 0+1+2+3+4+5+6 || s.ByPower["draining"] != 1 || s.PricePerHour != 2.5 {
		t.Fatalf("page %d agents next %q, summary %+v", len(p.Agents), p.Next, s)
	}
	if _, err := clusterPage(all, ClusterQuery{Cursor: "S99"}); err != errBadClusterCursor {
		t.Fatalf("unknown cursor: %v", err)
	}
	// The cursor's agent changed state between two pages (filtered out
	// by state now): the next page goes on after its place in the list.
	off := []string{}
	for _, a := range all.Agents {
		if a.State == "off" {
			off = append(off, a.ID)
		}
	}
	for i, a := range all.Agents {
		if a.State == "off" {
			continue
		}
		var want []string
		for _, b := range all.Agents[i+1:] {
			if b.State == "off" {
				want = append(want, b.ID)
			}
		}
		p, err := clusterPage(all, ClusterQuery{Cursor: a.ID, State: "off"})
		var got []string
		for _, b := range p.Agents {
			got = append(got, b.ID)
		}
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("state=off after %s (now %s; off agents %v): %v, %v; want %v", a.ID, a.State, off, got, err, want)
		}
	}
}

type fixedViews struct{ v ClusterView }

func (f fixedViews) Cluster(context.Context) (ClusterView, error) { return f.v, nil }
func (f fixedViews) Queues(context.Context, QueuesQuery) (QueuesView, error) {
	return QueuesView{}, nil
}
func (f fixedViews) Cost(context.Context) (CostView, error) { return CostView{}, nil }

func TestClusterEndpointPages(t *testing.T) {
	env := newEnv(t, func(c *Config) { c.Views = fixedViews{ClusterView{Agents: testAgents(2500)}} })
	get := func(path string) (int, map[string]any) {
		resp, err := http.Get(env.srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, out
	}
	code, body := get("/api/v1/cluster")
	if code != 200 || len(body["agents"].([]any)) != DefaultClusterPageLimit || body["next"] != "S999" ||
		body["summary"].(map[string]any)["agents"].(float64) != 2500 || body["total"].(float64) != 2500 {
		t.Fatalf("default page: %d, %d agents, next %v, summary %v", code, len(body["agents"].([]any)), body["next"], body["summary"])
	}
	code, body = get("/api/v1/cluster?limit=2000&cursor=S999")
	if code != 200 || len(body["agents"].([]any)) != 1500 || body["next"] != "" {
		t.Fatalf("last page: %d, %d agents, next %v", code, len(body["agents"].([]any)), body["next"])
	}
	for path, field := range map[string]string{
		"/api/v1/cluster?limit=0":      "limit",
		"/api/v1/cluster?cursor=nope":  "cursor",
		"/api/v1/cluster?state=sleepy": "state",
		"/api/v1/cluster?offset=3":     "offset",
	} {
		code, body := get(path)
		if code != http.StatusBadRequest || body["field"] != field || body["error"] == "" {
			t.Errorf("%s: %d %v, want 400 naming %q", path, code, body, field)
		}
	}
}

// A page of a large cluster copies its own agents, not the cluster's: the
// view's agents are a snapshot shared by every request (issue 30).
func TestClusterPageCopiesOnlyItsPage(t *testing.T) {
	const n = 10000
	all := testAgents(n)
	before := slices.Clone(all)
	v := ClusterView{Agents: all, PowerOf: func(id, state string) string {
		if state == "off" {
			return "off"
		}
		return "on"
	}}
	agentSize := int(unsafe.Sizeof(AgentView{}))
	for _, q := range []ClusterQuery{{Limit: 10}, {Limit: 10, State: "idle"}, {Limit: 10, State: "off", Cursor: "S2"}} {
		var page ClusterView
		var err error
		var m0, m1 runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m0)
		for range 10 {
			page, err = clusterPage(v, q)
		}
		runtime.ReadMemStats(&m1)
		if err != nil {
			t.Fatalf("%+v: %v", q, err)
		}
		// The bound is a twentieth of one copy of the cluster's agents per
		// page: the page (10 agents), the summary and a state filter's
		// indices (4 bytes an agent) fit under it.
		if perPage := int(m1.TotalAlloc-m0.TotalAlloc) / 10; perPage > n*agentSize/20 {
			t.Errorf("%+v: %d bytes allocated per page, want at most %d (one copy of the agents is %d)", q, perPage, n*agentSize/20, n*agentSize)
		}
		if len(page.Agents) != 10 || page.Summary.ByPower["on"] != n-n/3 || page.Summary.ByPower["off"] != n/3 {
			t.Fatalf("%+v: %d agents, summary %+v", q, len(page.Agents), page.Summary)
		}
		for _, a := range page.Agents {
			if a.Power == "" || (q.State != "" && a.State != q.State) {
				t.Fatalf("%+v: page agent %+v", q, a)
			}
		}
	}
	if !slices.EqualFunc(all, before, func(a, b AgentView) bool { return a.ID == b.ID && a.Power == b.Power && a.State == b.State }) {
		t.Fatal("clusterPage changed the shared agents")
	}
}

// TestClusterPagePowerDetail: an agent power management knows carries
// since when it is in its power state and its last power error; one it
// does not know (no record: the zero time) and one without a power state
// carry neither.
func TestClusterPagePowerDetail(t *testing.T) {
	since := time.Date(2026, 1, 5, 10, 0, 0, 0, time.UTC)
	v := ClusterView{Agents: testAgents(4),
		PowerOf: func(id, state string) string {
			if id == "S3" {
				return ""
			}
			return "off"
		},
		PowerDetail: func(id string) (time.Time, string) {
			switch id {
			case "S0":
				return since, ""
			case "S1":
				return since, "power-on: the provider failed"
			}
			return time.Time{}, ""
		}}
	page, err := clusterPage(v, ClusterQuery{})
	if err != nil {
		t.Fatal(err)
	}
	a := page.Agents
	if a[0].PowerSince == nil || !a[0].PowerSince.Equal(since) || a[0].PowerError != "" {
		t.Errorf("S0: %+v", a[0])
	}
	if a[1].PowerSince == nil || a[1].PowerError != "power-on: the provider failed" {
		t.Errorf("S1: %+v", a[1])
	}
	if a[2].PowerSince != nil || a[3].PowerSince != nil {
		t.Errorf("S2 (no record) %+v, S3 (no power state) %+v: want no since", a[2], a[3])
	}
	b, _ := json.Marshal(a[1])
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	if m["powerSince"] != "2026-01-05T10:00:00Z" || m["powerError"] == nil {
		t.Errorf("JSON %s", b)
	}
}
