package offers

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/master"
)

// Tests written for the mutants of agentsfetch.go that mutation testing
// found alive (docs/testing.md): which callers share a GET_AGENTS call,
// and for how long its answer is kept.

// gatedMaster answers GET_AGENTS once gate lets each call through; it
// counts the calls that arrived.
type gatedMaster struct {
	arrived atomic.Int32
	gate    chan struct{}
	empty   bool
}

func (m *gatedMaster) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, _ = io.ReadAll(r.Body)
	m.arrived.Add(1)
	select {
	case <-m.gate:
	case <-r.Context().Done():
		return
	}
	if m.empty {
		w.WriteHeader(http.StatusOK)
		return
	}
	id := mesos.AgentID{Value: "S1"}
	b, _ := (&master.Response{Type: master.Response_GET_AGENTS, GetAgents: &master.Response_GetAgents{
		Agents: []master.Response_GetAgents_Agent{{AgentInfo: mesos.AgentInfo{ID: &id, Hostname: "a"}, Active: true}}}}).Marshal()
	w.Header().Set("Content-Type", protobufType)
	_, _ = w.Write(b)
}

func gatedOperator(t *testing.T, m *gatedMaster) *Operator {
	t.Helper()
	srv := httptest.NewServer(m)
	t.Cleanup(srv.Close)
	ep, err := NewEndpoint(srv.URL, "", "", WithLogger(quietLog()))
	if err != nil {
		t.Fatal(err)
	}
	return NewOperator(ep)
}

func waitArrived(t *testing.T, m *gatedMaster, n int32) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for m.arrived.Load() < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d GET_AGENTS calls arrived, want %d", m.arrived.Load(), n)
		}
		time.Sleep(time.Millisecond)
	}
}

type fetched struct {
	seen time.Time
	n    int
	err  error
}

func fetchAsync(op *Operator, ctx context.Context, since time.Time) chan fetched {
	ch := make(chan fetched, 1)
	go func() {
		agents, seen, err := op.AgentsSince(ctx, since)
		ch <- fetched{seen, len(agents), err}
	}()
	return ch
}

// TestAgentsSinceWaitsForANewerCall: a caller that asks for a view newer
// than the call in flight does not take that call's answer: it makes its
// own call once the first is done. A caller that accepts the call in
// flight takes its answer.
func TestAgentsSinceWaitsForANewerCall(t *testing.T) {
	m := &gatedMaster{gate: make(chan struct{})}
	op := gatedOperator(t, m)
	ctx := context.Background()
	first := fetchAsync(op, ctx, time.Now())
	waitArrived(t, m, 1)
	op.agentsMu.Lock()
	inFlight := op.agentsInFlight.start
	op.agentsMu.Unlock()
	older := fetchAsync(op, ctx, inFlight)                      // accepts the call in flight
	newer := fetchAsync(op, ctx, inFlight.Add(time.Nanosecond)) // does not
	time.Sleep(20 * time.Millisecond)                           // let them wait for the call in flight
	m.gate <- struct{}{}
	f := <-first
	o := <-older
	if f.err != nil || o.err != nil || !f.seen.Equal(inFlight) || !o.seen.Equal(inFlight) || f.n != 1 || o.n != 1 {
		t.Fatalf("callers of the first call: %+v and %+v; want its view of 1 agent, sent at %s", f, o, inFlight)
	}
	waitArrived(t, m, 2)
	m.gate <- struct{}{}
	nw := <-newer
	if nw.err != nil || !nw.seen.After(inFlight) || nw.n != 1 {
		t.Fatalf("the caller asking for a newer view: %+v, want a view sent after %s", nw, inFlight)
	}
	if n := m.arrived.Load(); n != 2 {
		t.Fatalf("%d calls, want 2", n)
	}
}

// TestAgentsSinceOutlivesACallerThatGaveUp: when the caller whose call is
// in flight gives up, a caller waiting for that call makes its own
// instead of taking the other's cancellation.
func TestAgentsSinceOutlivesACallerThatGaveUp(t *testing.T) {
	m := &gatedMaster{gate: make(chan struct{})}
	op := gatedOperator(t, m)
	impatient, giveUp := context.WithCancel(context.Background())
	first := fetchAsync(op, impatient, time.Now())
	waitArrived(t, m, 1)
	waiting := fetchAsync(op, context.Background(), time.Time{}) // any view will do
	time.Sleep(20 * time.Millisecond)
	giveUp()
	if f := <-first; !errors.Is(f.err, context.Canceled) || f.n != 0 {
		t.Fatalf("the caller that gave up: %+v, want its cancellation", f)
	}
	waitArrived(t, m, 2)
	m.gate <- struct{}{}
	if w := <-waiting; w.err != nil || w.n != 1 {
		t.Fatalf("the caller beside one that gave up: %+v, want a view of 1 agent", w)
	}
}

// TestAgentsAnswerKeptBriefly: the last answer serves callers that accept
// an older view for keepAgents (2 s), then it is dropped (it is
// megabytes on a large cluster) and the next caller makes a call.
func TestAgentsAnswerKeptBriefly(t *testing.T) {
	m := &gatedMaster{gate: make(chan struct{}, 3)}
	for range 3 {
		m.gate <- struct{}{} // no call waits
	}
	op := gatedOperator(t, m)
	ctx := context.Background()
	sent := time.Now() // the call, and the answer's 2 s, start after this
	if _, err := op.GetAgents(ctx); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	_, _, err := op.AgentsSince(ctx, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	// Checked only when the machine was quick enough for the answer to be
	// still due (less than 2 s since the call was sent).
	if m.arrived.Load() != 1 && time.Since(sent) < 2*time.Second { // keepAgents, by its doc comment
		t.Fatalf("an older view asked %v after the call: %d calls; want the kept answer", time.Since(sent), m.arrived.Load())
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		op.agentsMu.Lock()
		kept := op.lastAgents != nil
		op.agentsMu.Unlock()
		if !kept {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the last GET_AGENTS answer is still kept a minute later")
		}
		time.Sleep(50 * time.Millisecond)
	}
	before := m.arrived.Load()
	if _, _, err := op.AgentsSince(ctx, time.Time{}); err != nil || m.arrived.Load() != before+1 {
		t.Fatalf("after the answer was dropped: %v, %d calls; want a new call", err, m.arrived.Load())
	}
}

// TestGetAgentsEmptyAnswer: a GET_AGENTS answered 200 without a body is
// an error, not an empty cluster.
func TestGetAgentsEmptyAnswer(t *testing.T) {
	m := &gatedMaster{gate: make(chan struct{}, 1), empty: true}
	m.gate <- struct{}{}
	agents, seen, err := gatedOperator(t, m).AgentsSince(context.Background(), time.Now())
	if err == nil || !strings.Contains(err.Error(), "empty answer") || agents != nil || seen.IsZero() {
		t.Fatalf("an empty answer: %d agents sent at %s, %v; want an error with the call's time", len(agents), seen, err)
	}
}
