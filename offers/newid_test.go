package offers

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/mesos/mesos-go/api/v1/lib/master"
	"github.com/sirupsen/logrus"

	"github.com/sparkpack/sparkpack/clusterspec"
	"github.com/sparkpack/sparkpack/mesossim"
	"github.com/sparkpack/sparkpack/placement"
	"github.com/sparkpack/sparkpack/scheduler"
)

// TestAgentBackUnderANewIDIsNotASecondAgent: an agent whose work dir was
// wiped registers as a new agent (new id, same hostname; Mesos removes
// the old one with its reservations, docs/power.md). The cluster's agents
// then show the machine once, under its new id, not also as a lost agent
// under the old one (which would count its cpus twice in the cluster
// summary), also once that machine is off again. An agent gone with no
// agent on its hostname is still shown as gone.
func TestAgentBackUnderANewIDIsNotASecondAgent(t *testing.T) {
	ctx := context.Background()
	l := &agentsList{}
	A, B := getAgent("A", 4, 8192), getAgent("B", 4, 8192)
	l.set(A, B)
	c := NewCluster(ClusterConfig{Operator: agentsOperator(t, l), Store: newMemStore(), Log: quietLog()})
	refresh := func() {
		t.Helper()
		if err := c.refresh(ctx); err != nil {
			t.Fatal(err)
		}
	}
	shown := func() []string { return agentsShown(c) }
	refresh()
	l.set(B) // A's machine powered off (or lost), B's too a little later
	refresh()
	l.set()
	refresh()
	if got := shown(); !slices.Equal(got, []string{"A gone", "B gone"}) {
		t.Fatalf("with both machines off: %v", got)
	}
	A2 := getAgent("A2", 4, 8192)
	A2.AgentInfo.Hostname = A.AgentInfo.Hostname
	l.set(A2) // A's machine is back under a new id
	refresh()
	if got := shown(); !slices.Equal(got, []string{"A2", "B gone"}) {
		t.Fatalf("A's machine back as A2: %v, want A2 and B gone", got)
	}
	l.set() // and off again: the machine is shown once, gone, under its last id
	refresh()
	if got := shown(); !slices.Equal(got, []string{"A2 gone", "B gone"}) {
		t.Fatalf("A2 off again: %v, want A2 and B gone", got)
	}
}

// TestReleaseAfterTheAgentCameBackUnderANewID: a job's reservation is on
// an agent whose machine came back as a new agent (its work dir wiped:
// mesossim.Config.AgentsLoseWorkDir, as on a real 1.12 master). Release
// works from a view read just before (it may use one up to a second old)
// that still lists the old agent; the master refuses the UNRESERVE with
// 400 "No agent found with specified ID". That is not an error to retry
// for ever: the reservation went with the old agent, so Release ends, the
// journal says released, and the new agent holds nothing of the job.
func TestReleaseAfterTheAgentCameBackUnderANewID(t *testing.T) {
	quiet := logrus.New()
	quiet.SetOutput(io.Discard)
	m, err := mesossim.New(mesossim.Config{Logger: quiet, DisableSpark: true, Cluster: clusterspec.Cluster{Name: "one", Agents: []clusterspec.Agent{
		{ID: "one-S0", Hostname: "agent-1", CPUs: 4, MemMB: 16384, PricePerHour: 0.24, Location: "cloud"}}},
		TimeScale: 0.001, BootTime: 10 * time.Second, UnreachableAfter: time.Hour, AgentsLoseWorkDir: true})
	if err != nil {
		t.Fatal(err)
	}
	m.Start()
	t.Cleanup(func() { m.Close() })
	// A proxy that answers the first GET_AGENTS after stale is set with
	// the view recorded before the power cycle.
	var mu sync.Mutex
	var recorded []byte
	var recordedType string
	stale := false
	h := m.Handler()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var c master.Call
		isAgents := r.URL.Path == "/api/v1" && c.Unmarshal(body) == nil && c.Type == master.Call_GET_AGENTS
		mu.Lock()
		if isAgents && stale {
			stale = false
			w.Header().Set("Content-Type", recordedType)
			_, _ = w.Write(recorded)
			mu.Unlock()
			return
		}
		mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(body))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		if isAgents && rec.Code == http.StatusOK {
			mu.Lock()
			recorded, recordedType = rec.Body.Bytes(), rec.Header().Get("Content-Type")
			mu.Unlock()
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		_, _ = w.Write(rec.Body.Bytes())
	}))
	t.Cleanup(srv.Close)
	ep, err := NewEndpoint(srv.URL, "", "")
	if err != nil {
		t.Fatal(err)
	}
	op := NewOperator(ep)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	jr := &memJournal{}
	r := &Reserver{Op: op, Journal: jr, Log: quiet, Poll: 20 * time.Millisecond, ConfirmTimeout: 20 * time.Second}
	j := scheduler.Job{Spec: scheduler.Spec{ID: "55555555-5555-5555-5555-555555555555", Executors: 1, ExecutorCores: 1, ExecutorMemoryMB: 1024, MemoryOverheadMB: 384}}
	if err := r.Reserve(ctx, j, placement.Plan{Assignments: []placement.Assignment{{AgentID: "one-S0", Executors: 1}}}); err != nil {
		t.Fatal(err)
	}
	if h := heldFor(t, ctx, op, j.ID); len(h) != 1 {
		t.Fatalf("reserved %v, want on one-S0", h)
	}
	// The machine stops with the reservation (a crash: power management
	// never powers off an agent that holds one) and comes back as a new
	// agent.
	if err := m.PowerOff("one-S0"); err != nil {
		t.Fatal(err)
	}
	if err := m.PowerOn("one-S0"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		if a := m.Agents(); len(a) == 1 && a[0].ID != "one-S0" && !a[0].PoweredOff {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the machine did not come back: %+v", m.Agents())
		}
		time.Sleep(10 * time.Millisecond)
	}
	mu.Lock()
	stale = true
	mu.Unlock()
	if err := r.Release(ctx, j.ID); err != nil {
		t.Fatalf("Release: %v", err)
	}
	mu.Lock()
	unread := stale
	mu.Unlock()
	if unread {
		t.Fatal("Release did not read the stale view")
	}
	if h := heldFor(t, ctx, op, j.ID); len(h) != 0 {
		t.Fatalf("after Release the job still holds %v", h)
	}
	if rec := jr.recs[j.ID+"/one-S0"]; rec.State != scheduler.ResReleased {
		t.Errorf("journal after Release: %+v; want released", rec)
	}
}

// TestAgentGoneBesideAnOlderAgentOnItsHostname: two agents share a
// hostname (two agents on one machine, or hostnames that do not tell
// machines apart). One goes (lost, or deactivated to be powered off): the
// other was there before it went, so it is not the gone one back under a
// new id, and the gone one is still shown gone. A new agent on that
// hostname that appears after it went is (the machine back), as before.
func TestAgentGoneBesideAnOlderAgentOnItsHostname(t *testing.T) {
	ctx := context.Background()
	l := &agentsList{}
	A, B := getAgent("A", 4, 8192), getAgent("B", 4, 8192)
	B.AgentInfo.Hostname = A.AgentInfo.Hostname
	l.set(A, B)
	c := NewCluster(ClusterConfig{Operator: agentsOperator(t, l), Store: newMemStore(), Log: quietLog()})
	shown := func() []string {
		t.Helper()
		if err := c.refresh(ctx); err != nil {
			t.Fatal(err)
		}
		return agentsShown(c)
	}
	shown()
	l.set(B) // A stops; B, on the same hostname, was there all along
	if got := shown(); !slices.Equal(got, []string{"B", "A gone"}) {
		t.Fatalf("A gone beside B: %v, want B and A gone", got)
	}
	if got := shown(); !slices.Equal(got, []string{"B", "A gone"}) {
		t.Fatalf("A gone beside B, a refresh later: %v, want B and A gone", got)
	}
	A2 := getAgent("A2", 4, 8192)
	A2.AgentInfo.Hostname = A.AgentInfo.Hostname
	l.set(A2, B) // A's machine back as A2
	if got := shown(); !slices.Equal(got, []string{"A2", "B"}) {
		t.Fatalf("A back as A2: %v, want A2 and B", got)
	}
}

// agentsShown is the cluster view's agent ids in order, " gone" after
// those listed as gone.
func agentsShown(c *Cluster) []string {
	var out []string
	for _, a := range c.Agents() {
		s := a.ID
		if a.Gone {
			s += " gone"
		}
		out = append(out, s)
	}
	return out
}
