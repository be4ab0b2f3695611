package offers

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
)

// Tests written for the mutants of schedclient.go that mutation testing
// found alive (docs/testing.md): the scheduler calls' stream id and
// framework id, RecordIO's bounds, the first event of a subscription and
// what Run does with the stream (MESOS_PROTOCOL.md).

// streamMaster is a scheduler API master: a SUBSCRIBE gets a stream of
// the events script returns for that subscription (the n-th, from 1),
// written with a pause before each event of pause (nil: none); other
// calls are recorded and answered callCode.
type streamMaster struct {
	script   func(n int) []*scheduler.Event
	pause    func(n, i int) time.Duration
	streamID string
	callCode int
	subs     atomic.Int32

	mu      sync.Mutex
	calls   []scheduler.Call
	headers []http.Header
}

func (m *streamMaster) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var c scheduler.Call
	if err := c.Unmarshal(body); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	m.mu.Lock()
	m.calls = append(m.calls, c)
	m.headers = append(m.headers, r.Header.Clone())
	m.mu.Unlock()
	if c.GetType() != scheduler.Call_SUBSCRIBE {
		w.WriteHeader(m.callCode)
		return
	}
	n := int(m.subs.Add(1))
	w.Header().Set("Content-Type", protobufType)
	if m.streamID != "-" {
		w.Header().Set("Mesos-Stream-Id", m.streamID)
	}
	w.WriteHeader(http.StatusOK)
	w.(http.Flusher).Flush()
	for i, ev := range m.script(n) {
		if m.pause != nil {
			select {
			case <-time.After(m.pause(n, i)):
			case <-r.Context().Done():
				return
			}
		}
		b, _ := ev.Marshal()
		fmt.Fprintf(w, "%d\n", len(b))
		_, _ = w.Write(b)
		w.(http.Flusher).Flush()
	}
	<-r.Context().Done()
}

func subscribedEvent(fid string, hb *float64) *scheduler.Event {
	return &scheduler.Event{Type: scheduler.Event_SUBSCRIBED, Subscribed: &scheduler.Event_Subscribed{
		FrameworkID: &mesos.FrameworkID{Value: fid}, HeartbeatIntervalSeconds: hb}}
}

func newStreamMaster(t *testing.T, m *streamMaster) *SchedClient {
	t.Helper()
	if m.streamID == "" {
		m.streamID = "stream-7"
	}
	if m.callCode == 0 {
		m.callCode = http.StatusAccepted
	}
	srv := httptest.NewServer(m)
	t.Cleanup(srv.Close)
	ep, err := NewEndpoint(srv.URL, "", "", WithLogger(quietLog()))
	if err != nil {
		t.Fatal(err)
	}
	return NewSchedClient(ep, quietLog())
}

// TestSubscribeAndCall: a call before any subscription is refused
// (ErrNotSubscribed); SUBSCRIBE with a framework id carries it; after
// SUBSCRIBED, calls carry the stream id header and the framework id the
// master gave; a 200 or 202 is success, anything else a *StatusError.
func TestSubscribeAndCall(t *testing.T) {
	ctx := context.Background()
	m := &streamMaster{script: func(int) []*scheduler.Event { return []*scheduler.Event{subscribedEvent("F-9", nil)} }}
	c := newStreamMaster(t, m)
	if err := c.Call(ctx, &scheduler.Call{Type: scheduler.Call_REVIVE}); !errors.Is(err, ErrNotSubscribed) {
		t.Fatalf("call before subscribing: %v", err)
	}
	s, err := c.Subscribe(ctx, mesos.FrameworkInfo{User: "root", Name: "sparkpack", ID: &mesos.FrameworkID{Value: "F-old"}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.StreamID != "stream-7" || s.Subscribed.FrameworkID.Value != "F-9" || c.FrameworkID() != "F-9" {
		t.Fatalf("subscribed: stream %q, framework %q (%q)", s.StreamID, s.Subscribed.FrameworkID.Value, c.FrameworkID())
	}
	m.mu.Lock()
	if sub := m.calls[0]; sub.GetFrameworkID().GetValue() != "F-old" || sub.Subscribe.FrameworkInfo.GetID().GetValue() != "F-old" {
		t.Errorf("SUBSCRIBE sent framework id %q, want the stored F-old", sub.GetFrameworkID().GetValue())
	}
	m.mu.Unlock()
	for _, code := range []int{http.StatusAccepted, http.StatusOK, http.StatusBadRequest, http.StatusForbidden} {
		m.callCode = code
		err := c.Call(ctx, &scheduler.Call{Type: scheduler.Call_REVIVE})
		var se *StatusError
		if ok := code == http.StatusAccepted || code == http.StatusOK; ok != (err == nil) || !ok && (!errors.As(err, &se) || se.Code != code || se.Call != "REVIVE") {
			t.Errorf("a call answered %d: %v", code, err)
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	last, h := m.calls[len(m.calls)-1], m.headers[len(m.headers)-1]
	if last.GetFrameworkID().GetValue() != "F-9" || h.Get("Mesos-Stream-Id") != "stream-7" {
		t.Errorf("a call sent framework %q, stream %q; want F-9 and stream-7", last.GetFrameworkID().GetValue(), h.Get("Mesos-Stream-Id"))
	}
}

// TestSubscribeRefusals: the first event must be SUBSCRIBED and the
// answer must name a stream; an ERROR first is the master's refusal.
func TestSubscribeRefusals(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second) // a wrong answer must not hang the test
	defer cancel()
	for _, c := range []struct {
		name     string
		first    *scheduler.Event
		streamID string
		want     string
		refused  bool
	}{
		{"error", &scheduler.Event{Type: scheduler.Event_ERROR, Error: &scheduler.Event_Error{Message: "Framework has been removed"}}, "", "Framework has been removed", true},
		{"heartbeat first", &scheduler.Event{Type: scheduler.Event_HEARTBEAT}, "", "first event is HEARTBEAT", false},
		{"SUBSCRIBED without its part", &scheduler.Event{Type: scheduler.Event_SUBSCRIBED}, "", "first event is SUBSCRIBED", false},
		{"ERROR without its part", &scheduler.Event{Type: scheduler.Event_ERROR}, "", "first event is ERROR", false},
		{"no stream id", subscribedEvent("F", nil), "-", "no Mesos-Stream-Id", false},
	} {
		first := c.first
		cl := newStreamMaster(t, &streamMaster{streamID: c.streamID, script: func(int) []*scheduler.Event { return []*scheduler.Event{first} }})
		_, err := cl.Subscribe(ctx, mesos.FrameworkInfo{User: "root", Name: "sparkpack"})
		if err == nil || !strings.Contains(err.Error(), c.want) || errors.Is(err, errRefused) != c.refused {
			t.Errorf("%s: %v, want %q (refused %v)", c.name, err, c.want, c.refused)
		}
		if cl.FrameworkID() != "" {
			t.Errorf("%s: framework id %q kept", c.name, cl.FrameworkID())
		}
	}
}

// TestRecordReaderBounds: lengths of every digit, up to 10 digits, up to
// the limit itself; a stream that ends between records is io.EOF, one
// that ends inside a record is io.ErrUnexpectedEOF.
func TestRecordReaderBounds(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		max  int
		want []string
		err  error  // after the records
		text string // or an error saying
	}{
		{"every digit", "0\n1\na9\n1234567898\n12345678", 100, []string{"", "a", "123456789", "12345678"}, io.EOF, ""},
		{"ten digits", "0000000003\nabc", 100, []string{"abc"}, io.EOF, ""},
		{"the limit", "5\nhello", 5, []string{"hello"}, io.EOF, ""},
		{"past the limit", "6\nhello!", 5, nil, nil, "more than 5 bytes"},
		{"a byte below 0", "/\n", 100, nil, nil, "bad record length"},
		{"a byte above 9", ":\n", 100, nil, nil, "bad record length"},
		{"nothing", "", 100, nil, io.EOF, ""},
		{"ends after the length", "3\n", 100, nil, io.ErrUnexpectedEOF, ""},
		{"ends in the length", "3", 100, nil, io.ErrUnexpectedEOF, ""},
	} {
		rr := newRecordReader(strings.NewReader(tc.in), tc.max)
		var got []string
		var err error
		for {
			var f []byte
			if f, err = rr.ReadFrame(); err != nil {
				break
			}
			got = append(got, string(f))
		}
		if fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("%s: records %q, want %q", tc.name, got, tc.want)
		}
		if tc.err != nil && err != tc.err || tc.text != "" && (err == nil || !strings.Contains(err.Error(), tc.text)) {
			t.Errorf("%s: error %v, want %v%s", tc.name, err, tc.err, tc.text)
		}
	}
}

// TestProbeWorthyAt500: every 5xx is a master not ready (probed), a 4xx
// is not.
func TestProbeWorthyAt500(t *testing.T) {
	for code, want := range map[int]bool{499: false, 500: true, 599: true} {
		if got := probeWorthy(&StatusError{Code: code}); got != want {
			t.Errorf("probeWorthy(%d) = %v, want %v", code, got, want)
		}
	}
}

// recHandler records what Run hands over.
type recHandler struct {
	mu     sync.Mutex
	subs   int
	events []scheduler.Event_Type
	downs  []error
	ch     chan string // "sub", "event", "down"
}

func (h *recHandler) Subscribed(context.Context, *scheduler.Event_Subscribed) {
	h.mu.Lock()
	h.subs++
	h.mu.Unlock()
	h.ch <- "sub"
}
func (h *recHandler) Event(_ context.Context, ev *scheduler.Event) {
	h.mu.Lock()
	h.events = append(h.events, ev.GetType())
	h.mu.Unlock()
	h.ch <- "event"
}
func (h *recHandler) Disconnected(err error) {
	h.mu.Lock()
	h.downs = append(h.downs, err)
	h.mu.Unlock()
	h.ch <- "down"
}

func (h *recHandler) wait(t *testing.T, what string) {
	t.Helper()
	select {
	case got := <-h.ch:
		if got != what {
			t.Fatalf("heard %q, want %q", got, what)
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("no %q within 60 s", what)
	}
}

func runClient(t *testing.T, c *SchedClient, h *recHandler, o RunOptions) context.CancelFunc {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	info := func() (mesos.FrameworkInfo, error) { return mesos.FrameworkInfo{User: "root", Name: "sparkpack"}, nil }
	go func() { done <- c.Run(ctx, info, h, o) }()
	t.Cleanup(func() {
		cancel()
		go func() {
			for range h.ch { // Run may still be telling the handler
			}
		}()
		if err := <-done; err != nil {
			t.Errorf("Run returned %v after its context ended, want nil", err)
		}
	})
	return cancel
}

// TestRunKeepsAQuietSubscription: with the default settings (5 missed
// heartbeats) and SUBSCRIBED giving no heartbeat interval, or 0 (the
// default 15 s then), a subscription whose next event comes a little
// later is kept; heartbeats are not handed to the handler, other events
// are.
func TestRunKeepsAQuietSubscription(t *testing.T) {
	zero := 0.0
	for _, hb := range []*float64{nil, &zero} {
		m := &streamMaster{
			script: func(int) []*scheduler.Event {
				return []*scheduler.Event{subscribedEvent("F", hb), {Type: scheduler.Event_HEARTBEAT},
					{Type: scheduler.Event_RESCIND, Rescind: &scheduler.Event_Rescind{OfferID: mesos.OfferID{Value: "O1"}}}}
			},
			pause: func(_, i int) time.Duration {
				if i == 2 {
					return 300 * time.Millisecond
				}
				return 0
			},
		}
		h := &recHandler{ch: make(chan string, 16)}
		runClient(t, newStreamMaster(t, m), h, RunOptions{})
		h.wait(t, "sub")
		h.wait(t, "event")
		h.mu.Lock()
		if h.subs != 1 || len(h.downs) != 0 || len(h.events) != 1 || h.events[0] != scheduler.Event_RESCIND {
			t.Errorf("heartbeat %v: %d subscriptions, dropped %v, events %v; want one subscription kept and the RESCIND only", hb, h.subs, h.downs, h.events)
		}
		h.mu.Unlock()
	}
}

// TestRunDropsASilentSubscription: a subscription that hears nothing for
// the missed heartbeats is dropped with an error (the stream is broken,
// so the master is probed and the subscription made again); an ERROR
// event ends the subscription with the master's refusal.
func TestRunDropsASilentSubscription(t *testing.T) {
	hb := 0.05
	m := &streamMaster{script: func(n int) []*scheduler.Event {
		if n == 1 {
			return []*scheduler.Event{subscribedEvent("F", &hb)}
		}
		return []*scheduler.Event{subscribedEvent("F", nil),
			{Type: scheduler.Event_ERROR, Error: &scheduler.Event_Error{Message: "Framework has been removed"}}}
	}}
	h := &recHandler{ch: make(chan string, 16)}
	runClient(t, newStreamMaster(t, m), h, RunOptions{MissedHeartbeats: 2})
	h.wait(t, "sub")
	h.wait(t, "down")
	h.wait(t, "sub")
	h.wait(t, "down")
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.downs[0]; err == nil || !strings.Contains(err.Error(), "Mesos event stream") || !probeWorthy(err) {
		t.Errorf("a silent subscription dropped with %v, want the broken stream's error", err)
	}
	if err := h.downs[1]; !errors.Is(err, errRefused) || !strings.Contains(err.Error(), "Framework has been removed") {
		t.Errorf("an ERROR event: %v, want the master's refusal", err)
	}
}

// TestRunFollowsTheLeader: when the endpoint moves to another master
// while subscribed, the subscription is dropped and made again with the
// new master.
func TestRunFollowsTheLeader(t *testing.T) {
	script := func(int) []*scheduler.Event { return []*scheduler.Event{subscribedEvent("F", nil)} }
	a, b := &streamMaster{script: script}, &streamMaster{script: script, streamID: "stream-b", callCode: http.StatusAccepted}
	c := newStreamMaster(t, a)
	srvB := httptest.NewServer(b)
	t.Cleanup(srvB.Close) // after Run ends (cleanups run last first)
	h := &recHandler{ch: make(chan string, 16)}
	runClient(t, c, h, RunOptions{MinBackoff: 10 * time.Millisecond, MaxBackoff: 20 * time.Millisecond})
	h.wait(t, "sub")
	// Another call was redirected to b: the endpoint moves there.
	if err := c.ep.follow(mustURL(c.ep.Base()), "//"+hostOf(srvB.URL)+"/api/v1/scheduler"); err != nil {
		t.Fatal(err)
	}
	h.wait(t, "down")
	h.wait(t, "sub")
	if b.subs.Load() != 1 {
		t.Fatalf("%d subscriptions with the new master, want 1", b.subs.Load())
	}
}

// TestBackOffProbes: while backing off after a broken stream, a master
// that answers a probe ends the wait at once; without probing (a refusal)
// the wait runs out; an ended context ends it with false.
func TestBackOffProbes(t *testing.T) {
	m := &countingMaster{code: http.StatusOK, limit: 1 << 20}
	srv := httptest.NewServer(m)
	defer srv.Close()
	ep, _ := NewEndpoint(srv.URL, "", "", WithLogger(quietLog()))
	c := NewSchedClient(ep, quietLog())
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if !c.backOff(ctx, time.Hour, true, 10*time.Millisecond) || m.n.Load() == 0 {
		t.Fatalf("probing backoff: not ended by the answering master (%d probes)", m.n.Load())
	}
	if !c.backOff(ctx, time.Millisecond, false, time.Millisecond) {
		t.Fatal("a 1 ms wait did not run out")
	}
	ended, stop := context.WithCancel(ctx)
	stop()
	if c.backOff(ended, time.Hour, false, time.Millisecond) {
		t.Fatal("an ended context: backOff returned true")
	}
}
