package offers

import (
	"context"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/sparkpack/sparkpack/mesossim"
)

// memIDs is an in-memory IDStore.
type memIDs struct {
	mu sync.Mutex
	id string
}

func (s *memIDs) FrameworkID(context.Context) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.id, nil
}
func (s *memIDs) SetFrameworkID(_ context.Context, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.id = id
	return nil
}

// connObserver hears the subscription's ups and downs.
type connObserver struct {
	nopObserver
	ups, downs chan time.Time
}

func (o connObserver) ObserveConnected(up bool) {
	ch := o.downs
	if up {
		ch = o.ups
	}
	select {
	case ch <- time.Now():
	default:
	}
}

// serveOn serves the emulator's API on addr until the returned server is
// closed (which also cuts every open stream, as a master that dies does).
func serveOn(t *testing.T, m *mesossim.Master, addr string) (*http.Server, string) {
	t.Helper()
	var ln net.Listener
	var err error
	for i := 0; i < 50; i++ { // the port of a closed listener may take a moment to be free
		if ln, err = net.Listen("tcp", addr); err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: m.Handler()}
	go func() { _ = srv.Serve(ln) }()
	return srv, ln.Addr().String()
}

// TestResubscribesSoonAfterTheMasterIsBack (#34): with a reconnect backoff
// of at least 10 s, a framework whose master went away and came back
// subscribes again as soon as the master answers (it probes the master
// while backing off), long before the backoff runs out.
func TestResubscribesSoonAfterTheMasterIsBack(t *testing.T) {
	quiet := logrus.New()
	quiet.SetLevel(logrus.PanicLevel)
	m, err := mesossim.New(mesossim.Config{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	m.Start()
	defer m.Close()
	srv, addr := serveOn(t, m, "127.0.0.1:0")
	defer func() { srv.Close() }()

	ep, err := NewEndpoint(addr, "", "")
	if err != nil {
		t.Fatal(err)
	}
	log := quiet
	obs := connObserver{ups: make(chan time.Time, 8), downs: make(chan time.Time, 8)}
	fw := NewFramework(FrameworkConfig{Observer: obs}, NewSchedClient(ep, log), &memIDs{}, nil, log)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		// A backoff of 10 to 30 s (min/2 plus jitter up to 20 s).
		_ = fw.Run(ctx, RunOptions{MinBackoff: 20 * time.Second, MaxBackoff: 20 * time.Second, ProbeEvery: 200 * time.Millisecond})
	}()
	defer func() { cancel(); <-done }()

	wait := func(ch chan time.Time, what string, d time.Duration) time.Time {
		t.Helper()
		select {
		case at := <-ch:
			return at
		case <-time.After(d):
			t.Fatalf("no %s within %s", what, d)
		}
		return time.Time{}
	}
	<-obs.downs // Run starts disconnected
	wait(obs.ups, "first subscription", 30*time.Second)

	srv.Close() // the master goes away
	wait(obs.downs, "disconnection", 30*time.Second)
	time.Sleep(time.Second) // probes fail meanwhile
	back := time.Now()
	srv, _ = serveOn(t, m, addr)
	up := wait(obs.ups, "re-subscription", 30*time.Second)
	// Bounded generously (the target is 2 s), but far below the 10 s the
	// shortest backoff would take.
	if took := up.Sub(back); took > 8*time.Second {
		t.Fatalf("re-subscribed %s after the master was back; want well within the 10 s minimum backoff", took)
	}
}
