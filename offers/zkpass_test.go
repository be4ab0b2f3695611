package offers

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/sirupsen/logrus"

	"github.com/sparkpack/sparkpack/internal/syncbuf"
	"github.com/sparkpack/sparkpack/internal/zktest"
)

// silentZKCluster is a Cluster on a zk:// master whose ZooKeeper accepts
// connections and never answers, logging to logs, and Start's result; the
// test's end stops it (ZooKeeper lets go: the watcher's pending request
// fails and Close returns).
func silentZKCluster(t *testing.T, logs *syncbuf.Buffer) (cl *Cluster, accepted <-chan struct{}, started chan error, ctx context.Context) {
	t.Helper()
	addr, accepted, release := zktest.Silent(t)
	log := logrus.New()
	log.SetOutput(logs)
	ep, err := NewEndpoint("zk://"+addr+"/mesos", "", "", WithLogger(log))
	if err != nil {
		t.Fatal(err)
	}
	op := NewOperator(ep)
	cl = NewCluster(ClusterConfig{Operator: op, Store: newMemStore(), Reserver: &Reserver{Op: op, Journal: &memJournal{}, Log: log},
		Log: log, Sweep: time.Hour})
	ctx, cancel := context.WithCancel(context.Background())
	started = make(chan error, 1)
	go func() { started <- cl.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		release()
		<-started
		cl.Wait()
		ep.Close()
	})
	return cl, accepted, started, ctx
}

// TestStartDoesNotWaitOnASilentZooKeeper: with --mesos-master zk://...
// and ZooKeeper taking connections but never answering, Start made its
// first GET_AGENTS inline, which waited for ZooKeeper to name a leader
// (zkLeaderWait, 15 s): the leader's term, its scheduler and the
// dashboard's views waited with it. Start must return without that
// GET_AGENTS having answered or given up, say that it waits for a leader,
// and leave the asking to the refresh loop.
func TestStartDoesNotWaitOnASilentZooKeeper(t *testing.T) {
	var logs syncbuf.Buffer
	_, accepted, started, _ := silentZKCluster(t, &logs)
	select {
	case err := <-started:
		started <- err
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("Start has not returned after 2 minutes")
	}
	out := logs.String()
	if strings.Contains(out, "GET_AGENTS failed") {
		t.Fatalf("Start returned only once its GET_AGENTS gave up waiting on ZooKeeper:\n%s", out)
	}
	if !strings.Contains(out, "waiting for ZooKeeper to name the leading Mesos master") {
		t.Fatalf("nothing says sparkpack waits for a leader:\n%s", out)
	}
	select {
	case <-accepted: // the refresh loop asks ZooKeeper
	case <-time.After(time.Minute):
		t.Fatal("sparkpack never connected to ZooKeeper")
	}
}

// TestSnapshotDoesNotWaitOnZooKeeper: with ZooKeeper silent, a scheduling
// pass used to wait in Snapshot for GET_AGENTS, that is for ZooKeeper to
// name a leader (zkLeaderWait, 15 s, and again after joining a fetch
// begun earlier: "slow scheduling pass", about 25 s). The snapshot must
// fail at once while ZooKeeper's answer is still withheld: well within
// zkLeaderWait, while the refresh loop's first GET_AGENTS is still waiting
// on it (it has not given up: no failure is logged).
func TestSnapshotDoesNotWaitOnZooKeeper(t *testing.T) {
	var logs syncbuf.Buffer
	cl, accepted, _, ctx := silentZKCluster(t, &logs)
	select {
	case <-accepted: // the first GET_AGENTS is asking ZooKeeper for the leader
	case <-time.After(time.Minute):
		t.Fatal("sparkpack never connected to ZooKeeper")
	}
	asked := time.Now()
	if _, err := cl.Snapshot(ctx); err == nil {
		t.Fatal("a snapshot before any GET_AGENTS answer worked")
	}
	// Waiting on ZooKeeper takes zkLeaderWait (15 s) at least: it has no
	// other way out. The bound leaves a loaded machine 10 s for a lock.
	if took := time.Since(asked); took > 10*time.Second {
		t.Fatalf("the snapshot took %s: it waited on ZooKeeper", took.Round(time.Millisecond))
	}
	if out := logs.String(); strings.Contains(out, "GET_AGENTS failed") {
		t.Fatalf("the snapshot returned only after the first GET_AGENTS gave up waiting on ZooKeeper: the pass waited on the network\n%s", out)
	}
}

// TestAgentsReadOnceZooKeeperNamesALeader: sparkpack starts before any
// Mesos master has registered in ZooKeeper (a real one). The refresh
// loop's first GET_AGENTS waits for a leader (zkLeaderWait, 15 s) and
// fails; it then slept 8 times that (2 minutes) before it looked again,
// so a master registering meanwhile was not read for up to 105 s (only a
// scheduling pass's kick, 30 s apart, woke it). The loop now wakes when
// ZooKeeper names the leader. The bound, 60 s, leaves a loaded machine
// ample room and is far below the old wait.
func TestAgentsReadOnceZooKeeperNamesALeader(t *testing.T) {
	zkAddr := zktest.Start(t)
	m, _ := emulator(t)
	_, master := listenOn(t, m.Handler(), "127.0.0.1:0")
	zc, err := zktest.Connect(zkAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer zc.Close()
	if _, err := zc.Create("/mesos", nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	var logs syncbuf.Buffer
	log := logrus.New()
	log.SetOutput(&logs)
	ep, err := NewEndpoint("zk://"+zkAddr+"/mesos", "", "", WithLogger(log))
	if err != nil {
		t.Fatal(err)
	}
	op := NewOperator(ep)
	cl := NewCluster(ClusterConfig{Operator: op, Store: newMemStore(), Reserver: &Reserver{Op: op, Journal: &memJournal{}, Log: log},
		Log: log, Sweep: time.Hour, Refresh: 200 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	if err := cl.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); cl.Wait(); ep.Close() }()
	deadline := time.Now().Add(2 * time.Minute)
	for !strings.Contains(logs.String(), "GET_AGENTS failed") {
		if time.Now().After(deadline) {
			t.Fatalf("the first GET_AGENTS did not fail for want of a leader:\n%s", logs.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	host, port, _ := net.SplitHostPort(master)
	p, _ := strconv.Atoi(port)
	info := fmt.Sprintf(`{"address":{"hostname":%q,"ip":%q,"port":%d},"hostname":%q,"pid":"master@%s","port":%d,"version":"1.12.0"}`, host, host, p, host, master, p)
	if _, err := zc.Create("/mesos/json.info_", []byte(info), zk.FlagEphemeral|zk.FlagSequence, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	registered := time.Now()
	for len(cl.Agents()) == 0 {
		if took := time.Since(registered); took > 60*time.Second {
			t.Fatalf("no agents %s after a master registered in ZooKeeper:\n%s", took.Round(time.Second), logs.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("agents read %s after the master registered", time.Since(registered).Round(time.Millisecond))
}
