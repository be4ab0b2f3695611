package offers

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/master"
)

// fakeAgentsMaster answers GET_AGENTS slowly, counting the calls; fail
// makes it answer 503.
func fakeAgentsMaster(t *testing.T, delay time.Duration, calls *atomic.Int32, fail *atomic.Bool) *Operator {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var call master.Call
		if err := call.Unmarshal(body); err != nil || call.GetType() != master.Call_GET_AGENTS {
			http.Error(w, "unexpected call", http.StatusBadRequest)
			return
		}
		n := calls.Add(1)
		time.Sleep(delay)
		if fail.Load() {
			http.Error(w, "master is busy", http.StatusServiceUnavailable)
			return
		}
		id := mesos.AgentID{Value: "S" + string(rune('0'+n%10))}
		resp := master.Response{Type: master.Response_GET_AGENTS, GetAgents: &master.Response_GetAgents{
			Agents: []master.Response_GetAgents_Agent{{AgentInfo: mesos.AgentInfo{ID: &id, Hostname: "a"}, Active: true}}}}
		b, _ := resp.Marshal()
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(b)
	}))
	t.Cleanup(srv.Close)
	ep, err := NewEndpoint(srv.URL, "", "")
	if err != nil {
		t.Fatal(err)
	}
	return NewOperator(ep)
}

// Concurrent callers share GET_AGENTS calls, and each gets a view from a
// call sent after it asked.
func TestAgentsSinceSharesCalls(t *testing.T) {
	var calls atomic.Int32
	var fail atomic.Bool
	op := fakeAgentsMaster(t, 150*time.Millisecond, &calls, &fail)
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for i := 0; i < 40; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			asked := time.Now()
			agents, seen, err := op.AgentsSince(ctx, asked)
			if err != nil {
				errs <- err
				return
			}
			if seen.Before(asked) || len(agents) != 1 {
				t.Errorf("view sent at %s for a caller asking at %s (%d agents)", seen.Format(time.StampMicro), asked.Format(time.StampMicro), len(agents))
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	// 40 callers: at most one call in flight, and one more for the callers
	// that asked after it was sent.
	if n := calls.Load(); n < 1 || n > 2 {
		t.Fatalf("%d GET_AGENTS calls for 40 concurrent callers, want 1 or 2", n)
	}
	// A poller asking for a newer view than the one it saw gets a new call.
	before := calls.Load()
	_, seen, err := op.AgentsSince(ctx, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	_, seen2, err := op.AgentsSince(ctx, seen.Add(time.Nanosecond))
	if err != nil || !seen2.After(seen) || calls.Load() != before+2 {
		t.Fatalf("newer view: %v, sent %s after %s, %d calls", err, seen2, seen, calls.Load()-before)
	}
	// A caller that accepts a view sent up to a second ago gets the last
	// one without a call.
	before = calls.Load()
	if _, seen3, err := op.AgentsSince(ctx, time.Now().Add(-time.Second)); err != nil || !seen3.Equal(seen2) || calls.Load() != before {
		t.Fatalf("older view accepted: %v, got the view sent at %s (last %s), %d calls", err, seen3, seen2, calls.Load()-before)
	}
	// Errors reach every caller that waited for the failed call.
	fail.Store(true)
	var werr sync.WaitGroup
	var failed atomic.Int32
	for i := 0; i < 5; i++ {
		werr.Add(1)
		go func() {
			defer werr.Done()
			if _, err := op.GetAgents(ctx); err != nil {
				failed.Add(1)
			}
		}()
	}
	werr.Wait()
	if failed.Load() != 5 {
		t.Fatalf("%d of 5 callers saw the master's error", failed.Load())
	}
	// A caller that gives up does not fail the others.
	fail.Store(false)
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() { _, _, err := op.AgentsSince(short, time.Now()); done <- err }()
	time.Sleep(5 * time.Millisecond)
	if _, err := op.GetAgents(ctx); err != nil {
		t.Fatalf("a caller beside one that gave up: %v", err)
	}
	if err := <-done; err == nil {
		t.Fatal("the caller with a 20 ms deadline got an answer that takes 150 ms")
	}
}
