package offers

import (
	"context"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/sparkpack/sparkpack/internal/zktest"
)

// TestSnapshotDoesNotWaitOnZooKeeper: with --mesos-master zk://... and
// ZooKeeper taking connections but never answering, a scheduling pass
// used to wait in Snapshot for GET_AGENTS, that is for ZooKeeper to name
// a leader (zkLeaderWait, 15 s, and again after joining a fetch begun
// earlier: "slow scheduling pass", about 25 s). The snapshot must fail at
// once while ZooKeeper's answer is still withheld: here, while Start's own
// first GET_AGENTS is still waiting on it.
func TestSnapshotDoesNotWaitOnZooKeeper(t *testing.T) {
	addr, accepted, release := zktest.Silent(t)
	quiet := logrus.New()
	quiet.SetLevel(logrus.PanicLevel)
	ep, err := NewEndpoint("zk://"+addr+"/mesos", "", "", WithLogger(quiet))
	if err != nil {
		t.Fatal(err)
	}
	op := NewOperator(ep)
	cl := NewCluster(ClusterConfig{Operator: op, Store: newMemStore(), Reserver: &Reserver{Op: op, Journal: &memJournal{}, Log: quiet},
		Log: quiet, Sweep: time.Hour})
	ctx, cancel := context.WithCancel(context.Background())
	started := make(chan error, 1)
	go func() { started <- cl.Start(ctx) }()
	defer func() {
		// ZooKeeper lets go: the watcher's pending request fails and
		// Close returns.
		cancel()
		release()
		<-started
		cl.Wait()
		ep.Close()
	}()
	select {
	case <-accepted: // Start is asking ZooKeeper for the leader
	case <-time.After(time.Minute):
		t.Fatal("sparkpack never connected to ZooKeeper")
	}

	if _, err := cl.Snapshot(ctx); err == nil {
		t.Fatal("a snapshot before any GET_AGENTS answer worked")
	}
	select {
	case err := <-started:
		started <- err
		t.Fatalf("the snapshot returned only after Start's GET_AGENTS gave up waiting on ZooKeeper (%v): the pass waited on the network", err)
	default:
	}
}
