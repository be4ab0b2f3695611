package leader

import (
	"context"
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
)

// memStore is a lease in memory with the same rules as the PostgreSQL one
// (times from one clock: this process's).
type memStore struct {
	mu    sync.Mutex
	lease Lease
	// renewHang, while set, blocks Renew until the context ends; renewErr
	// makes Renew fail.
	renewHang atomic.Bool
	renewErr  atomic.Pointer[error]
}

func (m *memStore) TryAcquire(_ context.Context, instance, url string, ttl time.Duration) (Lease, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := time.Now()
	if m.lease.Instance != "" && m.lease.Instance != instance && now.Before(m.lease.Expires) {
		l := m.lease
		l.Live = true
		return l, false, nil
	}
	m.lease = Lease{Instance: instance, URL: url, Token: m.lease.Token + 1, Since: now, Expires: now.Add(ttl), Live: true}
	return m.lease, true, nil
}

func (m *memStore) Renew(ctx context.Context, instance string, token int64, ttl time.Duration) (Lease, error) {
	if m.renewHang.Load() {
		<-ctx.Done()
		return Lease{}, ctx.Err()
	}
	if e := m.renewErr.Load(); e != nil {
		return Lease{}, *e
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := time.Now()
	if m.lease.Instance != instance || m.lease.Token != token || now.After(m.lease.Expires) {
		return Lease{}, ErrLost
	}
	m.lease.Expires = now.Add(ttl)
	return m.lease, nil
}

func (m *memStore) Release(_ context.Context, instance string, token int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.lease.Instance == instance && m.lease.Token == token {
		m.lease.Expires = time.Now().Add(-time.Microsecond)
	}
	return nil
}

func (m *memStore) Current(context.Context) (Lease, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	l := m.lease
	l.Live = time.Now().Before(l.Expires)
	return l, nil
}

func quiet() logrus.FieldLogger {
	l := logrus.New()
	l.SetOutput(io.Discard)
	return l
}

func elector(t *testing.T, st Store, id string) *Elector {
	e, err := New(Config{Instance: id, URL: "http://" + id, TTL: 400 * time.Millisecond, Renew: 80 * time.Millisecond,
		Retry: 20 * time.Millisecond, Margin: 100 * time.Millisecond, Log: quiet()}, st)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// TestNeverTwoLeaders: three electors on one lease; the leader is stopped
// and paused (its renewals hang) in turn; at no instant do two of them
// consider themselves leader, and a new one takes over each time.
func TestNeverTwoLeaders(t *testing.T) {
	st := &memStore{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	els := []*Elector{elector(t, st, "a"), elector(t, st, "b"), elector(t, st, "c")}
	var mu sync.Mutex
	terms := map[int64]string{}
	var wg sync.WaitGroup
	for _, e := range els {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = e.Run(ctx, func(lctx context.Context, l Lease) {
				mu.Lock()
				terms[l.Token] = e.Instance()
				mu.Unlock()
				<-lctx.Done()
			})
		}()
	}
	stop := make(chan struct{})
	violations := make(chan string, 10)
	go func() {
		for {
			select {
			case <-stop:
				close(violations)
				return
			default:
			}
			n := 0
			for _, e := range els {
				if e.Valid() {
					n++
				}
			}
			if n > 1 {
				violations <- "two leaders at once"
			}
			time.Sleep(time.Millisecond)
		}
	}()
	leaderNow := func() *Elector {
		deadline := time.Now().Add(5 * time.Second)
		for time.Now().Before(deadline) {
			for _, e := range els {
				if e.Valid() {
					return e
				}
			}
			time.Sleep(5 * time.Millisecond)
		}
		t.Fatal("no leader within 5 s")
		return nil
	}
	first := leaderNow()
	st.renewHang.Store(true) // the leader's process stalls (e.g. SIGSTOP)
	waitFor(t, func() bool { return !first.Valid() })
	st.renewHang.Store(false)
	second := leaderNow()
	lost := errors.New("connection refused")
	st.renewErr.Store(&lost) // the leader loses the database
	waitFor(t, func() bool { return !second.Valid() })
	st.renewErr.Store(nil)
	leaderNow()
	close(stop)
	for v := range violations {
		t.Fatal(v)
	}
	cancel()
	wg.Wait()
	if len(terms) < 3 {
		t.Fatalf("terms %v: want at least three leaders in turn", terms)
	}
	if l, _ := st.Current(context.Background()); l.Live {
		t.Fatalf("the lease is still live after every instance stopped: %+v", l)
	}
}

// TestLeadContextEndsWhenTheLeaseRunsOut: the leader's work is stopped by
// the lease time alone when renewals hang (the database does not answer).
func TestLeadContextEndsWhenTheLeaseRunsOut(t *testing.T) {
	st := &memStore{}
	e := elector(t, st, "a")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stopped := make(chan time.Duration, 1)
	go func() {
		_ = e.Run(ctx, func(lctx context.Context, l Lease) {
			st.renewHang.Store(true)
			start := time.Now()
			<-lctx.Done()
			stopped <- time.Since(start)
			cancel()
		})
	}()
	select {
	case d := <-stopped:
		if d > 2*time.Second {
			t.Fatalf("the leader's work stopped %s after renewals hung; want within the lease time", d)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the leader's work never stopped")
	}
	if e.Valid() || e.Token() != 0 {
		t.Fatal("still valid after the lease ran out")
	}
}

func TestNewChecksTiming(t *testing.T) {
	if _, err := New(Config{}, &memStore{}); err == nil {
		t.Fatal("no instance id accepted")
	}
	if _, err := New(Config{Instance: "a", TTL: time.Second, Renew: time.Second}, &memStore{}); err == nil {
		t.Fatal("renewal slower than the lease accepted")
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached within 5 s")
		}
		time.Sleep(2 * time.Millisecond)
	}
}
