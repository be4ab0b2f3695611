package offers

import (
	"context"
	"crypto/tls"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mesos/mesos-go/api/v1/lib/master"

	"github.com/sparkpack/sparkpack/masterdetect"
)

// Tests written for the mutants of transport.go that mutation testing
// found alive or not covered (docs/testing.md): how the endpoint moves
// between masters, how many it tries, redirects, authentication, the
// error texts and the backoff. Expected values are worked out by hand
// from the doc comments.

// TestFailoverOrder: with masters a,b,c the endpoint moves a -> b -> c ->
// a; after a redirect took it to a master of the list out of turn, the
// next move skips that one; moving away from a master it has already
// left (another call moved first) changes nothing and reports that there
// is somewhere else to try; a single master has nowhere else.
func TestFailoverOrder(t *testing.T) {
	e, err := NewEndpoint("a:1,b:2,c:3", "", "", WithLogger(quietLog()))
	if err != nil {
		t.Fatal(err)
	}
	if e.Host() != "a:1" {
		t.Fatalf("starts at %s, want the first master a:1", e.Host())
	}
	for _, want := range []string{"b:2", "c:3", "a:1", "b:2"} {
		from := e.Host()
		if !e.failover(from) || e.Host() != want {
			t.Fatalf("failover from %s: at %s, want %s", from, e.Host(), want)
		}
	}
	// At b:2, the next in turn is c:3. Someone else moved to c:3 already:
	// moving away from b:2 again changes nothing.
	e.mu.Lock()
	e.setBaseLocked("c:3")
	e.mu.Unlock()
	if !e.failover("b:2") || e.Host() != "c:3" {
		t.Fatalf("failover from a master already left: at %s, want still c:3", e.Host())
	}
	// A redirect to c:3, which is also the next in turn: the move from
	// c:3 goes to a:1, not to c:3 itself.
	if !e.failover("c:3") || e.Host() != "a:1" {
		t.Fatalf("failover from c:3 (the next in turn): at %s, want a:1", e.Host())
	}
	// A redirect outside the list: the list goes on with its next one.
	if err := e.follow(&url0, "//z:9/master/redirect"); err != nil {
		t.Fatal(err)
	}
	if !e.failover("z:9") || e.Host() != "b:2" {
		t.Fatalf("failover from z:9 (outside the list): at %s, want b:2", e.Host())
	}

	two, _ := NewEndpoint("a:1,b:2", "", "", WithLogger(quietLog()))
	if !two.failover("x:0") || two.Host() != "a:1" {
		t.Fatalf("two masters, moving away from one not current: at %s, want still a:1 and somewhere else to try", two.Host())
	}
	if !two.failover("a:1") || two.Host() != "b:2" || !two.failover("b:2") || two.Host() != "a:1" {
		t.Fatalf("two masters: at %s, want a:1 after b:2", two.Host())
	}
	one, _ := NewEndpoint("a:1", "", "", WithLogger(quietLog()))
	if one.failover("a:1") || one.Host() != "a:1" {
		t.Fatal("a single master: somewhere else to try")
	}
	if one.tries() != 0 || two.tries() != 1 || e.tries() != 2 {
		t.Fatalf("tries: %d, %d, %d; want 0, 1, 2 (the other masters)", one.tries(), two.tries(), e.tries())
	}
}

var url0 = *mustURL("http://a:1")

// TestChangedOnMove: Changed's channel is closed when the endpoint moves
// to another master, not when it "moves" to the master it is at.
func TestChangedOnMove(t *testing.T) {
	e, _ := NewEndpoint("a:1,b:2", "", "", WithLogger(quietLog()))
	ch := e.Changed()
	if err := e.follow(&url0, "//a:1/api/v1"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ch:
		t.Fatal("Changed closed by a redirect to the master already used")
	default:
	}
	if err := e.follow(&url0, "//b:2/api/v1"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ch:
	default:
		t.Fatal("Changed not closed by a move to b:2")
	}
	if e.Base() != "http://b:2" {
		t.Fatalf("at %s, want http://b:2", e.Base())
	}
	for _, loc := range []string{"http:///api/v1", "//%zz/api/v1"} {
		if err := e.follow(&url0, loc); err == nil || !strings.Contains(err.Error(), "not a master address") {
			t.Fatalf("a redirect to %q: %v", loc, err)
		}
	}
	if e.Base() != "http://b:2" {
		t.Fatalf("after bad redirects at %s, want still http://b:2", e.Base())
	}
}

// countingMaster answers every call with code (and body), counting them;
// past limit calls it cancels the test's context, so that a client that
// loops fails at once instead of hanging.
type countingMaster struct {
	n      atomic.Int32
	code   int
	body   string
	limit  int32
	cancel context.CancelFunc
	auth   atomic.Value // the last Authorization header
}

func (m *countingMaster) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	m.auth.Store(r.Header.Get("Authorization"))
	if m.n.Add(1) > m.limit && m.cancel != nil {
		m.cancel()
	}
	w.WriteHeader(m.code)
	_, _ = w.Write([]byte(m.body))
}

func hostOf(u string) string { return strings.TrimPrefix(u, "http://") }

// TestMastersTriedOnce: a 503 or 404 sends the call to each other master
// of the list once; the last answer comes back. A single master is asked
// once.
func TestMastersTriedOnce(t *testing.T) {
	for _, code := range []int{http.StatusServiceUnavailable, http.StatusNotFound} {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		var hosts []string
		var masters []*countingMaster
		for range 3 {
			m := &countingMaster{code: code, body: "No leader elected", limit: 1, cancel: cancel}
			srv := httptest.NewServer(m)
			defer srv.Close()
			hosts = append(hosts, hostOf(srv.URL))
			masters = append(masters, m)
		}
		for _, list := range [][]string{hosts[:1], hosts[:2], hosts} {
			for _, m := range masters {
				m.n.Store(0)
			}
			ep, _ := NewEndpoint(strings.Join(list, ","), "", "", WithLogger(quietLog()))
			_, err := NewOperator(ep).GetAgents(ctx)
			var se *StatusError
			if !errors.As(err, &se) || se.Code != code {
				t.Errorf("%d masters answering %d: %v, want their %d", len(list), code, err, code)
			}
			for i := range list {
				if n := masters[i].n.Load(); n != 1 {
					t.Errorf("%d masters answering %d: master %d asked %d times, want once", len(list), code, i, n)
				}
			}
		}
		cancel()
	}
}

// TestRedirectLimit: up to 5 redirects are followed; a 6th is an error, as
// is a redirect without a Location.
func TestRedirectLimit(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		redirects int
		ok        bool
	}{{0, true}, {5, true}, {6, false}} {
		var n atomic.Int32
		var srv *httptest.Server
		srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if int(n.Add(1)) <= c.redirects {
				w.Header().Set("Location", "//"+hostOf(srv.URL)+"/api/v1")
				w.WriteHeader(http.StatusTemporaryRedirect)
				return
			}
			w.WriteHeader(http.StatusAccepted)
		}))
		ep, _ := NewEndpoint(srv.URL, "", "", WithLogger(quietLog()))
		_, err := NewOperator(ep).Call(ctx, &master.Call{Type: master.Call_GET_HEALTH})
		if (err == nil) != c.ok {
			t.Errorf("%d redirects: %v, want success %v", c.redirects, err, c.ok)
		}
		if !c.ok && (err == nil || !strings.Contains(err.Error(), "too many redirects")) {
			t.Errorf("%d redirects: %v, want too many redirects", c.redirects, err)
		}
		srv.Close()
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusTemporaryRedirect)
	}))
	defer srv.Close()
	ep, _ := NewEndpoint(srv.URL, "", "", WithLogger(quietLog()))
	if _, err := NewOperator(ep).Call(ctx, &master.Call{Type: master.Call_GET_HEALTH}); err == nil || !strings.Contains(err.Error(), `last to ""`) {
		t.Errorf("a redirect without Location: %v", err)
	}
}

// TestBasicAuth: calls and probes carry HTTP basic authentication when a
// principal is set, and no Authorization header otherwise.
func TestBasicAuth(t *testing.T) {
	ctx := context.Background()
	m := &countingMaster{code: http.StatusAccepted, limit: 1 << 20}
	srv := httptest.NewServer(m)
	defer srv.Close()
	want := (&http.Request{Header: http.Header{}})
	want.SetBasicAuth("sparkpack", "s3cret")
	for _, c := range []struct {
		principal, auth string
	}{{"sparkpack", want.Header.Get("Authorization")}, {"", ""}} {
		ep, _ := NewEndpoint(srv.URL, c.principal, "s3cret", WithLogger(quietLog()))
		if _, err := NewOperator(ep).Call(ctx, &master.Call{Type: master.Call_GET_HEALTH}); err != nil {
			t.Fatal(err)
		}
		if got := m.auth.Load(); got != c.auth {
			t.Errorf("call with principal %q: Authorization %q, want %q", c.principal, got, c.auth)
		}
		m.auth.Store("unset")
		if err := ep.Probe(ctx); err != nil {
			t.Fatal(err)
		}
		if got := m.auth.Load(); got != c.auth {
			t.Errorf("probe with principal %q: Authorization %q, want %q", c.principal, got, c.auth)
		}
	}
}

// TestProbeMovesOn: a probe of a master that does not answer fails and
// leaves it for the next master of the list, which the next probe asks.
func TestProbeMovesOn(t *testing.T) {
	ctx := context.Background()
	m := &countingMaster{code: http.StatusOK, limit: 1 << 20}
	srv := httptest.NewServer(m)
	defer srv.Close()
	dead := deadAddr(t)
	ep, _ := NewEndpoint(dead+","+hostOf(srv.URL), "", "", WithLogger(quietLog()))
	if err := ep.Probe(ctx); err == nil || !strings.Contains(err.Error(), dead) {
		t.Fatalf("probe of a dead master: %v", err)
	}
	if ep.Host() != hostOf(srv.URL) {
		t.Fatalf("after a failed probe at %s, want the next master %s", ep.Host(), hostOf(srv.URL))
	}
	if err := ep.Probe(ctx); err != nil || m.n.Load() != 1 {
		t.Fatalf("probe of the answering master: %v, %d requests", err, m.n.Load())
	}
}

// TestUnreachableSaysWhatToDo: the error of a call no master answered
// names what to check: a single master, a list, or ZooKeeper's leader.
func TestUnreachableSaysWhatToDo(t *testing.T) {
	base := errors.New("connection refused")
	for _, c := range []struct {
		master, want string
	}{
		{"a:1", "is the Mesos master running?"},
		{"a:1,b:2", "no master of a:1,b:2 answered"},
		{"zk://z:2181/mesos", "the leader named by ZooKeeper"},
	} {
		ep, err := NewEndpoint(c.master, "", "", WithLogger(quietLog()))
		if err != nil {
			t.Fatal(err)
		}
		err = ep.unreachable(base)
		if !errors.Is(err, base) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want it to say %q", c.master, err, c.want)
		}
	}
}

// TestStatusErrorCutsLongBodies: a Mesos error body is shown up to 300
// bytes; a longer one is cut there and marked.
func TestStatusErrorCutsLongBodies(t *testing.T) {
	b300 := strings.Repeat("x", 300)
	if got := (&StatusError{Code: 409, Body: " " + b300 + "\n", Call: "RESERVE_RESOURCES"}).Error(); got != "Mesos RESERVE_RESOURCES: 409 Conflict: "+b300 {
		t.Errorf("300 bytes: %q", got)
	}
	if got := (&StatusError{Code: 409, Body: b300 + "yz", Call: "RESERVE_RESOURCES"}).Error(); got != "Mesos RESERVE_RESOURCES: 409 Conflict: "+b300+"..." {
		t.Errorf("302 bytes: %q", got)
	}
}

// TestBackoff: the delay is min/2 plus a random part drawn below min
// doubled per attempt, up to max (full jitter): with a draw of its whole
// range (rnd returning n) and min 100 ms, max 1 s: 150, 250, 450, 850,
// then 50 + 1000 ms.
func TestBackoff(t *testing.T) {
	all := func(n int64) int64 { return n }
	ms := time.Millisecond
	for attempt, want := range []time.Duration{150 * ms, 250 * ms, 450 * ms, 850 * ms, 1050 * ms, 1050 * ms} {
		if got := backoff(attempt, 100*ms, time.Second, all); got != want {
			t.Errorf("attempt %d: %v, want %v", attempt, got, want)
		}
	}
	// The range handed to rnd: min doubled per attempt, capped at max.
	var mu sync.Mutex
	var asked []int64
	rec := func(n int64) int64 { mu.Lock(); asked = append(asked, n); mu.Unlock(); return 0 }
	for attempt := range 5 {
		if got := backoff(attempt, 100*ms, 400*ms, rec); got != 50*ms {
			t.Errorf("attempt %d with no random part: %v, want 50ms", attempt, got)
		}
	}
	want := []int64{int64(100 * ms), int64(200 * ms), int64(400 * ms), int64(400 * ms), int64(400 * ms)}
	for i := range want {
		if asked[i] != want[i] {
			t.Errorf("ranges drawn from %v, want %v", asked, want)
			break
		}
	}
	// A max that is not a doubling of min is the cap: 100 ms, 300 ms.
	asked = nil
	backoff(5, 100*ms, 300*ms, rec)
	if asked[0] != int64(300*ms) {
		t.Errorf("range %v, want the cap 300ms", time.Duration(asked[0]))
	}
}

func mustURL(s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil {
		panic(err)
	}
	return u
}

// TestEndpointClose: closing an endpoint without ZooKeeper is harmless
// (its calls go on); a closed zk:// endpoint refuses calls without
// contacting ZooKeeper.
func TestEndpointClose(t *testing.T) {
	m := &countingMaster{code: http.StatusAccepted, limit: 1 << 20}
	srv := httptest.NewServer(m)
	defer srv.Close()
	ep, _ := NewEndpoint(srv.URL, "", "", WithLogger(quietLog()))
	ep.Close()
	if _, err := NewOperator(ep).Call(context.Background(), &master.Call{Type: master.Call_GET_HEALTH}); err != nil {
		t.Fatalf("a call after closing an endpoint without ZooKeeper: %v", err)
	}
	zk, err := NewEndpoint("zk://"+deadAddr(t)+"/mesos", "", "", WithLogger(quietLog()))
	if err != nil {
		t.Fatal(err)
	}
	zk.Close()
	if _, err := NewOperator(zk).Call(context.Background(), &master.Call{Type: master.Call_GET_HEALTH}); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Fatalf("a call on a closed zk:// endpoint: %v", err)
	}
}

// TestEndpointScheme: a master given as host:port is reached over http,
// or over https when a CA is set; https:// is kept; an http:// master
// with a CA set is refused (the CA would not be used).
func TestEndpointScheme(t *testing.T) {
	ca := &tls.Config{MinVersion: tls.VersionTLS12}
	for _, c := range []struct {
		master string
		tls    bool
		want   string // "" : refused
	}{
		{"a:1", false, "http://a:1"},
		{"a:1", true, "https://a:1"},
		{"http://a:1", false, "http://a:1"},
		{"https://a:1", false, "https://a:1"},
		{"https://a:1", true, "https://a:1"},
		{"http://a:1", true, ""},
	} {
		var opts []EndpointOption
		if c.tls {
			opts = append(opts, WithTLS(ca))
		}
		e, err := NewEndpoint(c.master, "", "", opts...)
		if c.want == "" {
			if err == nil || !strings.Contains(err.Error(), "write https://a:1") {
				t.Errorf("%s with a CA: %v, want it refused", c.master, err)
			}
			continue
		}
		if err != nil || e.Base() != c.want || e.TLS() != strings.HasPrefix(c.want, "https") {
			t.Errorf("%s (CA %v): %v, at %s; want %s", c.master, c.tls, err, e.Base(), c.want)
		}
	}
}

// TestFailoverWithZooKeeper: a zk:// endpoint moves away from a master
// only to the leader ZooKeeper names: while that is still the master
// that failed (or none is known) there is nowhere else to try.
func TestFailoverWithZooKeeper(t *testing.T) {
	e, err := NewEndpoint("zk://127.0.0.1:2181/mesos", "", "", WithLogger(quietLog()))
	if err != nil {
		t.Fatal(err)
	}
	if e.failover("a:1") {
		t.Error("no leader known: somewhere else to try")
	}
	// A watcher that has not heard from ZooKeeper yet: the leader stays
	// the one last known, a:1.
	e.mu.Lock()
	e.zk = masterdetect.NewWatcher(*e.spec.ZK, quietLog())
	e.setBaseLocked("a:1")
	e.mu.Unlock()
	if e.failover("a:1") {
		t.Error("the failed master is still the leader known: somewhere else to try")
	}
	if !e.failover("b:2") || e.Host() != "a:1" {
		t.Errorf("a master that is no longer the leader failed: at %s, want the leader a:1 to try", e.Host())
	}
}

// TestGuard: with a guard, a call is sent only while the guard allows it;
// otherwise it fails with the guard's error and the master hears nothing.
func TestGuard(t *testing.T) {
	m := &countingMaster{code: http.StatusAccepted, limit: 1 << 20}
	srv := httptest.NewServer(m)
	defer srv.Close()
	notLeader := errors.New("not the leading sparkpack")
	var refuse atomic.Bool
	ep, _ := NewEndpoint(srv.URL, "", "", WithLogger(quietLog()), WithGuard(func() error {
		if refuse.Load() {
			return notLeader
		}
		return nil
	}))
	op := NewOperator(ep)
	if _, err := op.Call(context.Background(), &master.Call{Type: master.Call_GET_HEALTH}); err != nil || m.n.Load() != 1 {
		t.Fatalf("guard allows: %v, %d calls heard", err, m.n.Load())
	}
	refuse.Store(true)
	if _, err := op.Call(context.Background(), &master.Call{Type: master.Call_GET_HEALTH}); !errors.Is(err, notLeader) || !strings.Contains(err.Error(), "not sent") || m.n.Load() != 1 {
		t.Fatalf("guard refuses: %v, %d calls heard; want the guard's error and no call", err, m.n.Load())
	}
}
