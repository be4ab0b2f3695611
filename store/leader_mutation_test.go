package store

import (
	"context"
	"testing"
	"time"
)

// Tests written for the mutants of leader.go that mutation testing found
// alive (scripts/mutation.sh store; docs/testing.md).

// TestLeaseUsesItsOwnPool: the lease's statements run on the lease's own
// pool (a renewal never waits behind the main pool): after taking and
// renewing the lease that pool holds a connection and has served both.
func TestLeaseUsesItsOwnPool(t *testing.T) {
	s, _ := openStore(t)
	ctx := context.Background()
	if n := s.lease.Stats().OpenConnections; n != 0 {
		t.Fatalf("the lease pool has %d connections before any lease statement", n)
	}
	l, ok, err := s.TryAcquire(ctx, "a", "http://a", time.Minute)
	if err != nil || !ok {
		t.Fatalf("acquire: %+v %v %v", l, ok, err)
	}
	if _, err := s.Renew(ctx, "a", l.Token, time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := s.Release(ctx, "a", l.Token); err != nil {
		t.Fatal(err)
	}
	if st := s.lease.Stats(); st.OpenConnections == 0 {
		t.Fatalf("the lease pool was not used: %+v", st)
	}
}
