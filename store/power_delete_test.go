package store

import (
	"context"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/power"
)

// TestDeletePowerRecord: the record of an agent id whose machine came back
// under a new id is forgotten for good (a reopen does not bring it back);
// deleting one that is not there is not an error.
func TestDeletePowerRecord(t *testing.T) {
	s, url := openStore(t)
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Microsecond)
	for _, r := range []power.Record{{AgentID: "S1", Hostname: "agent-1", State: power.StateBooting, Since: now},
		{AgentID: "S9", Hostname: "agent-1", State: power.StateOn, Since: now}} {
		if err := s.PutPowerRecord(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	for range 2 {
		if err := s.DeletePowerRecord(ctx, "S1"); err != nil {
			t.Fatal(err)
		}
	}
	s2, err := Open(ctx, url, WithLogger(quietLog()))
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	got, err := s2.PowerRecords(ctx)
	if err != nil || len(got) != 1 || got[0].AgentID != "S9" {
		t.Fatalf("read back %+v %v, want S9 only", got, err)
	}
}
