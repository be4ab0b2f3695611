package realmesos

import (
	"context"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/internal/pgtest"
)

// TestSubscribesAnewAfterTheRealMasterRemovedIt: an operator tears
// sparkpack's framework down on the real master (as its failover timeout
// passing would); the master then refuses the stored id ("Framework has
// been removed"), and sparkpack subscribes as a new framework within a
// minute instead of retrying the dead id for ever.
func TestSubscribesAnewAfterTheRealMasterRemovedIt(t *testing.T) {
	c := privateCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	startSparkpack(t, c.URL, pgtest.URL(t))
	connected := func(not string) string {
		t.Helper()
		deadline := time.Now().Add(90 * time.Second)
		for time.Now().Before(deadline) {
			fws, err := c.Observer().Frameworks(ctx)
			if err == nil {
				for _, f := range fws {
					if f.Name == "sparkpack" && f.Connected && !f.Completed && f.ID != not {
						return f.ID
					}
				}
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Fatalf("no sparkpack framework (other than %q) subscribed within 90 s\n%s", not, c.MasterLog(30))
		return ""
	}
	old := connected("")
	if err := c.Observer().Teardown(ctx, old); err != nil {
		t.Fatal(err)
	}
	now := connected(old)
	t.Logf("framework %s torn down; sparkpack subscribed again as %s", old, now)
}
