package leader_test

import (
	"context"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/sirupsen/logrus/hooks/test"

	"github.com/sparkpack/sparkpack/internal/pgtest"
	"github.com/sparkpack/sparkpack/leader"
	"github.com/sparkpack/sparkpack/store"
)

// countingStore is the real PostgreSQL lease store, counting the tries
// to take the lease.
type countingStore struct {
	*store.Store
	tries atomic.Int64
}

func (c *countingStore) TryAcquire(ctx context.Context, instance, url string, ttl time.Duration) (leader.Lease, bool, error) {
	c.tries.Add(1)
	return c.Store.TryAcquire(ctx, instance, url, ttl)
}

// TestCampaignAgainstADownDatabaseLogsOnceAPeriod: while PostgreSQL is
// down, an instance that tries to take the lease every few milliseconds
// logs the failure once (and then once a FailureLogEvery), not once a
// try, and says when the database answers again. It used to log a
// warning a try: 4 a second per instance with the default --leader-retry.
func TestCampaignAgainstADownDatabaseLogsOnceAPeriod(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a PostgreSQL server of its own")
	}
	pg := pgtest.Private(t)
	quiet := logrus.New()
	quiet.SetOutput(io.Discard)
	st, err := store.Open(context.Background(), pg.URL, store.WithLogger(quiet))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	log, hook := test.NewNullLogger()
	cs := &countingStore{Store: st}
	led := make(chan struct{}, 1)
	el, err := leader.New(leader.Config{Instance: "a", URL: "http://a", Retry: 5 * time.Millisecond, Log: log,
		FailureLogEvery: time.Hour,
		OnChange: func(lead bool, _ leader.Lease) {
			if lead {
				select {
				case led <- struct{}{}:
				default:
				}
			}
		}}, cs)
	if err != nil {
		t.Fatal(err)
	}
	if err := pg.Kill(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = el.Run(ctx, func(ctx context.Context, _ leader.Lease) { <-ctx.Done() })
	}()
	defer func() { cancel(); <-done }()
	deadline := time.Now().Add(60 * time.Second)
	for cs.tries.Load() < 50 {
		if time.Now().After(deadline) {
			t.Fatalf("only %d tries to take the lease in 60 s", cs.tries.Load())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := pg.Resume(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-led:
	case <-time.After(60 * time.Second):
		t.Fatal("no leadership within 60 s of the database's return")
	}
	var warnings, recovered []string
	for _, e := range hook.AllEntries() {
		switch {
		case e.Level == logrus.WarnLevel && strings.Contains(e.Message, "campaign for leadership"):
			warnings = append(warnings, e.Message)
		case strings.Contains(e.Message, "database answers again"):
			recovered = append(recovered, e.Message)
			if n, _ := e.Data["failures"].(int); n < 50 {
				t.Errorf("the recovery line counts %v failures, want >= 50", e.Data["failures"])
			}
		}
	}
	if len(warnings) != 1 || len(recovered) != 1 {
		t.Fatalf("%d tries against the down database logged %d warnings %q and %d recoveries; want 1 and 1",
			cs.tries.Load(), len(warnings), warnings, len(recovered))
	}
	if !strings.Contains(warnings[0], "--database-url") {
		t.Errorf("the warning %q does not say what to check", warnings[0])
	}
}

// TestAFollowerSaysItStandsByOnceATerm: an instance that finds another
// leading says so, naming the leader, once for that leader's term, not at
// every try. Its log used to say nothing after "campaigning".
func TestAFollowerSaysItStandsByOnceATerm(t *testing.T) {
	url := pgtest.URL(t)
	quiet := logrus.New()
	quiet.SetOutput(io.Discard)
	open := func() *countingStore {
		st, err := store.Open(context.Background(), url, store.WithLogger(quiet))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return &countingStore{Store: st}
	}
	run := func(el *leader.Elector) func() {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			_ = el.Run(ctx, func(ctx context.Context, _ leader.Lease) { <-ctx.Done() })
		}()
		return func() { cancel(); <-done }
	}
	led := make(chan struct{}, 1)
	a, err := leader.New(leader.Config{Instance: "standby-a", URL: "http://a", Log: quiet,
		OnChange: func(lead bool, _ leader.Lease) {
			if lead {
				select {
				case led <- struct{}{}:
				default:
				}
			}
		}}, open())
	if err != nil {
		t.Fatal(err)
	}
	stopA := run(a)
	defer stopA()
	select {
	case <-led:
	case <-time.After(60 * time.Second):
		t.Fatal("a did not lead within 60 s")
	}
	log, hook := test.NewNullLogger()
	bs := open()
	b, err := leader.New(leader.Config{Instance: "standby-b", URL: "http://b", Retry: 5 * time.Millisecond, Log: log}, bs)
	if err != nil {
		t.Fatal(err)
	}
	stopB := run(b)
	defer stopB()
	deadline := time.Now().Add(60 * time.Second)
	for bs.tries.Load() < 30 {
		if time.Now().After(deadline) {
			t.Fatalf("only %d tries in 60 s", bs.tries.Load())
		}
		time.Sleep(20 * time.Millisecond)
	}
	var lines []*logrus.Entry
	for _, e := range hook.AllEntries() {
		if strings.Contains(e.Message, "stands by") {
			lines = append(lines, e)
		}
	}
	if len(lines) != 1 || lines[0].Data["leader_instance"] != "standby-a" || lines[0].Data["leader_url"] != "http://a" {
		t.Fatalf("%d tries while standby-a leads: %d stand-by lines %v; want one naming standby-a", bs.tries.Load(), len(lines), lines)
	}
}
