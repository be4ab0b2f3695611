package scheduler

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/sparkpack/sparkpack/placement"
)

// gatedSnapCluster holds every Snapshot call, once gated, until released,
// and notices two at once.
type gatedSnapCluster struct {
	*testCluster
	gated   atomic.Bool
	in      atomic.Int32
	overlap atomic.Bool
	entered chan struct{}
	release chan struct{}
}

func (g *gatedSnapCluster) Snapshot(ctx context.Context) (placement.Snapshot, error) {
	if !g.gated.Load() {
		return g.testCluster.Snapshot(ctx)
	}
	if g.in.Add(1) > 1 {
		g.overlap.Store(true)
	}
	defer g.in.Add(-1)
	g.entered <- struct{}{}
	<-g.release
	return g.testCluster.Snapshot(ctx)
}

// parkedIn counts the goroutines waiting for a mutex inside fn.
func parkedIn(fn string) int {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	n := 0
	for _, g := range bytes.Split(buf, []byte("\n\n")) {
		if bytes.Contains(g, []byte("[sync.Mutex.Lock")) && bytes.Contains(g, []byte(fn)) {
			n++
		}
	}
	return n
}

// Many jobs ending at once: their reports hold a snapshot of the cluster
// for the cost meter one at a time, not one each (at 30,000 agents a
// snapshot is 3.2 MB, and 51 jobs end within a second). The first
// report's snapshot is held until every other report waits its turn or
// takes a snapshot beside it; no timing is involved.
func TestEndingReportsHoldOneSnapshotAtATime(t *testing.T) {
	const n = 8
	var agents []placement.Agent
	for i := range n {
		agents = append(agents, agent(fmt.Sprintf("a%d", i), 4, 16384, 0.24))
	}
	h := &harness{t: t, store: newTestStore(), cluster: newTestCluster(agents...), clock: newManualClock(t0)}
	g := &gatedSnapCluster{testCluster: h.cluster, entered: make(chan struct{}), release: make(chan struct{})}
	core, err := New(Config{Log: DiscardLogger()}, g, h.store, h.clock)
	if err != nil {
		t.Fatal(err)
	}
	h.core = core
	ctx := context.Background()
	for i := range n {
		h.submit(mkJob(fmt.Sprintf("j%d", i), 1, 4))
	}
	h.schedule()
	for i := range n {
		for _, st := range []State{Launching, Running} {
			if err := core.Report(ctx, fmt.Sprintf("j%d", i), st, ""); err != nil {
				t.Fatal(err)
			}
		}
	}
	if r := core.Cost(); r.ActiveAgents != n {
		t.Fatalf("%d agents active, want %d", r.ActiveAgents, n)
	}

	g.gated.Store(true)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := core.Report(ctx, fmt.Sprintf("j%d", i), Finished, ""); err != nil {
				t.Error(err)
			}
		}()
	}
	<-g.entered // one report's snapshot, held
	entered := 1
	for entered == 1 && parkedIn("observeReleased") < n-1 {
		select {
		case <-g.entered:
			entered++
		default:
			runtime.Gosched()
		}
	}
	if entered > 1 || g.overlap.Load() {
		close(g.release)
		go func() {
			for range g.entered {
			}
		}()
		wg.Wait()
		t.Fatal("two ending reports held a snapshot of the cluster at once")
	}
	close(g.release)
	for range n - 1 {
		<-g.entered
	}
	wg.Wait()
	if r := core.Cost(); r.ActiveAgents != 0 || r.BurnRateUSDPerHour != 0 {
		t.Fatalf("after every job ended: %d agents active, $%g/h; want none", r.ActiveAgents, r.BurnRateUSDPerHour)
	}
}
