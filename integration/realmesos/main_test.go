package realmesos

import (
	"context"
	"fmt"
	"log"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/internal/pgtest"
)

// One real cluster (master + 3 agents) is shared by the tests of this
// package: it is started by the first test that needs it, reset after
// every test (frameworks torn down, reservations and quotas removed,
// killed agents restarted) and closed when the package's tests end.
var shared struct {
	once sync.Once
	c    *Cluster
	err  error
}

func TestMain(m *testing.M) {
	code := pgtest.Main(m)
	if shared.c != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		if err := shared.c.Close(ctx); err != nil {
			log.Printf("realmesos: closing the cluster: %v", err)
		}
		cancel()
	}
	if bins.dir != "" {
		_ = os.RemoveAll(bins.dir)
	}
	os.Exit(code)
}

// mesosBin returns the Mesos build to test against, or skips the test
// with one line saying how to enable it.
func mesosBin(t *testing.T) string {
	t.Helper()
	dir, skip, err := Find()
	if err != nil {
		t.Fatal(err)
	}
	if skip != "" {
		t.Skip(skip)
	}
	return dir
}

// realCluster returns the shared cluster, clean, and resets it when the
// test ends.
func realCluster(t *testing.T) *Cluster {
	t.Helper()
	bin := mesosBin(t)
	shared.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		start := time.Now()
		shared.c, shared.err = Start(ctx, Options{Bin: bin, Cluster: ThreeAgents(), Logf: log.Printf})
		if shared.err == nil {
			log.Printf("realmesos: master and %d agents up in %s", len(shared.c.agents), time.Since(start).Round(time.Millisecond))
		}
	})
	if shared.err != nil {
		t.Fatalf("starting a real Mesos cluster: %v", shared.err)
	}
	c := shared.c
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("master log (last 40 lines):\n%s", c.MasterLog(40))
			for _, a := range c.Agents() {
				t.Logf("agent %s log (last 15 lines):\n%s", a, c.AgentLog(a, 15))
			}
		}
		if err := c.Reset(context.Background()); err != nil {
			t.Errorf("resetting the real cluster after the test: %v", err)
		}
	})
	return c
}

// Reset brings the cluster back to its initial state: killed agents
// restarted, every framework torn down, every reservation and quota
// removed.
func (c *Cluster) Reset(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	for _, a := range c.agents {
		if a.d == nil {
			if err := c.RestartAgent(ctx, a.name); err != nil {
				return err
			}
		}
	}
	if err := c.teardownAll(ctx); err != nil {
		return err
	}
	var last string
	err := c.waitFor(ctx, 30*time.Second, "reservations and quotas to be removed", func() (bool, error) {
		rs, err := c.obs.Reservations(ctx)
		if err != nil {
			return false, nil
		}
		qs, err := c.obs.QuotaLimits(ctx)
		if err != nil {
			return false, nil
		}
		if len(rs) == 0 && len(qs) == 0 {
			return true, nil
		}
		var left []string
		for _, r := range rs {
			left = append(left, fmt.Sprintf("%s on %s", r.Role, r.Hostname))
			_ = c.obs.Unreserve(ctx, r)
		}
		for role := range qs {
			left = append(left, "quota "+role)
			_ = c.obs.ClearQuota(ctx, role)
		}
		last = strings.Join(left, ", ")
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("%w (left: %s)", err, last)
	}
	return nil
}

func TestClusterRunsAndIsObservable(t *testing.T) {
	c := realCluster(t)
	agents, err := c.Observer().Agents(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{}
	for _, a := range ThreeAgents().Agents {
		want[a.Hostname] = a.CPUs
	}
	if len(agents) != len(want) {
		t.Fatalf("GET_AGENTS lists %d agents, want %d: %+v", len(agents), len(want), agents)
	}
	for _, a := range agents {
		if !a.Active || want[a.Hostname] != a.CPUs || c.AgentID(a.Hostname) != a.ID {
			t.Errorf("agent %+v: want active with %g cpus and id %s", a, want[a.Hostname], c.AgentID(a.Hostname))
		}
	}
}
