package offers

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/sparkpack/sparkpack/placement"
	"github.com/sparkpack/sparkpack/scheduler"
)

// orderPinner is a Pinner that records, when Reserve is called, whether
// the driver's launch was already announced to the framework.
type orderPinner struct {
	fromOffers bool
	fw         *Framework
	mu         sync.Mutex
	announced  []bool // per Reserve: was the job's launch announced before?
	reserved   chan struct{}
}

func (p *orderPinner) Reserve(_ context.Context, j scheduler.Job, _ placement.Plan) error {
	p.fw.mu.Lock()
	_, announced := p.fw.expected[j.ID]
	p.fw.mu.Unlock()
	p.mu.Lock()
	p.announced = append(p.announced, announced)
	p.mu.Unlock()
	select {
	case p.reserved <- struct{}{}:
	default:
	}
	return nil
}
func (p *orderPinner) Release(context.Context, string) error { return nil }
func (p *orderPinner) Orphans(context.Context, func(string) bool) ([]string, error) {
	return nil, nil
}
func (p *orderPinner) FromOffers() bool { return p.fromOffers }
func (p *orderPinner) DropStrays(context.Context, string, []Reserved) []string {
	return nil
}

// wrappedPinner wraps a Pinner as cmd/sparkpack's metrics wrapper does.
type wrappedPinner struct{ Pinner }

// TestReserveBeforeAnnounceFromOffers (#32.1): reserving from offers, the
// driver's launch is announced (offers kept in sparkpack's role) only
// after the reservations are made, even when the reserver is wrapped (as
// the metrics wrapper in production does); with the operator API it is
// announced first, so offers for the driver are at hand once reserved.
func TestReserveBeforeAnnounceFromOffers(t *testing.T) {
	for _, c := range []struct {
		name       string
		fromOffers bool
		announced  bool // announced before Reserve
	}{
		{"offer mode, wrapped", true, false},
		{"operator mode, wrapped", false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			log := logrus.New()
			log.SetLevel(logrus.PanicLevel)
			fw := NewFramework(FrameworkConfig{}, NewSchedClient(nil, log), nil, nil, log)
			p := &orderPinner{fromOffers: c.fromOffers, fw: fw, reserved: make(chan struct{}, 1)}
			j := testJob(0)
			j.State = scheduler.Reserving
			cl := NewCluster(ClusterConfig{Store: newMemStore(j), Framework: fw, Reserver: wrappedPinner{p}, Log: log})
			cl.SetReporter(&nopReporter{})
			ctx, cancel := context.WithCancel(context.Background())
			defer func() { cancel(); cl.Wait() }()
			cl.mu.Lock()
			cl.ctx = ctx
			cl.agents = []Agent{{ID: "A", CPUs: 4, FreeCPUs: 4, FreeMemMB: 8192}}
			cl.loaded = true
			cl.mu.Unlock()
			plan := placement.Plan{Assignments: []placement.Assignment{{AgentID: "A", Executors: 1}}}
			if err := cl.Apply(ctx, j, plan); err != nil {
				t.Fatal(err)
			}
			select {
			case <-p.reserved:
			case <-time.After(30 * time.Second):
				t.Fatal("Reserve was never called")
			}
			p.mu.Lock()
			defer p.mu.Unlock()
			if len(p.announced) != 1 || p.announced[0] != c.announced {
				t.Fatalf("launch announced before Reserve: %v, want %v", p.announced, c.announced)
			}
		})
	}
}
