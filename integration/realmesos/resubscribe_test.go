package realmesos

import (
	"context"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/internal/pgtest"
)

// TestResubscribesSoonAfterTheRealMasterRestarts (#34): the real master is
// killed and kept down for 8 s (sparkpack's reconnect backoff grows
// meanwhile to several seconds); once it answers again, sparkpack is
// subscribed within a few seconds: it probes the master while backing
// off. (Target 2 s; asserted with room for a loaded machine.) The
// backoff is jittered, so without probing this passes now and then too:
// offers.TestResubscribesSoonAfterTheMasterIsBack is the deterministic
// check (a backoff of at least 10 s); this one checks the probe against a
// real master and gives the figure.
func TestResubscribesSoonAfterTheRealMasterRestarts(t *testing.T) {
	c := privateCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	startSparkpack(t, c.URL, pgtest.URL(t))
	connected := func() bool {
		fws, err := c.Observer().Frameworks(ctx)
		if err != nil {
			return false
		}
		for _, f := range fws {
			if f.Name == "sparkpack" && f.Connected && !f.Completed {
				return true
			}
		}
		return false
	}
	waitConnected := func(what string) time.Time {
		t.Helper()
		deadline := time.Now().Add(time.Minute)
		for !connected() {
			if time.Now().After(deadline) {
				t.Fatalf("sparkpack not subscribed a minute %s", what)
			}
			time.Sleep(50 * time.Millisecond)
		}
		return time.Now()
	}
	waitConnected("after it started")
	back, err := c.RestartMaster(ctx, 8*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	took := waitConnected("after the master restarted").Sub(back)
	t.Logf("sparkpack subscribed again %s after the restarted master answered", took.Round(10*time.Millisecond))
	if took > 6*time.Second {
		t.Errorf("sparkpack subscribed again %s after the master answered; want within about 2 s (probing while backing off)", took)
	}
}
