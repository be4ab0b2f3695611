package offers

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/sirupsen/logrus"

	"github.com/sparkpack/sparkpack/internal/zktest"
	"github.com/sparkpack/sparkpack/mesossim"
)

// switchable serves whatever handler it holds now: a master that is a
// follower can become the leader (the emulator's state moves with the
// handler, as Mesos' registry carries it to a new leader).
type switchable struct{ h atomic.Value }

func (s *switchable) set(h http.Handler) { s.h.Store(&h) }
func (s *switchable) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	(*s.h.Load().(*http.Handler)).ServeHTTP(w, r)
}

// listenOn serves h on addr ("127.0.0.1:0" for a new port).
func listenOn(t *testing.T, h http.Handler, addr string) (*http.Server, string) {
	t.Helper()
	var ln net.Listener
	var err error
	for i := 0; i < 50; i++ { // a closed listener's port may take a moment to be free
		if ln, err = net.Listen("tcp", addr); err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { srv.Close() })
	return srv, ln.Addr().String()
}

// deadAddr is a loopback address nothing listens on (connections are refused).
func deadAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

func emulator(t *testing.T) (*mesossim.Master, *logrus.Logger) {
	t.Helper()
	quiet := logrus.New()
	quiet.SetOutput(io.Discard)
	m, err := mesossim.New(mesossim.Config{Logger: quiet, DisableSpark: true})
	if err != nil {
		t.Fatal(err)
	}
	m.Start()
	t.Cleanup(func() { m.Close() })
	return m, quiet
}

// TestSeveralMastersFindTheLeader: whatever the order of a master list, a
// call reaches the leading master: a master that refuses connections is
// skipped, a non-leading master's 307 is followed, one with no leader
// (503 "No leader elected") is left for the next; the endpoint then stays
// with the leader.
func TestSeveralMastersFindTheLeader(t *testing.T) {
	m, quiet := emulator(t)
	_, leader := listenOn(t, m.Handler(), "127.0.0.1:0")
	_, follower := listenOn(t, mesossim.Follower(func() string { return leader }), "127.0.0.1:0")
	_, lost := listenOn(t, mesossim.Follower(func() string { return "" }), "127.0.0.1:0")
	// A master still starting answers /version but 404 on the v1 API: its
	// routes are installed once it has initialised (seen on a real 1.12
	// master started beside a leader: TestSparkpackFollowsTheRealMastersThroughZooKeeper).
	_, starting := listenOn(t, http.NotFoundHandler(), "127.0.0.1:0")
	dead := deadAddr(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, list := range []string{
		leader,
		follower + "," + leader,
		starting + "," + leader,
		starting + "," + dead + "," + follower,
		dead + "," + follower,
		dead + "," + lost + "," + follower,
		lost + "," + dead + "," + leader,
		"http://" + dead + ",http://" + follower,
	} {
		ep, err := NewEndpoint(list, "", "", WithLogger(quiet))
		if err != nil {
			t.Fatal(err)
		}
		agents, err := NewOperator(ep).GetAgents(ctx)
		if err != nil {
			t.Fatalf("GET_AGENTS with --mesos-master %s: %v", list, err)
		}
		if len(agents) != 14 {
			t.Fatalf("%d agents with %s, want the 14 of thesis14", len(agents), list)
		}
		if ep.Base() != "http://"+leader || ep.SparkMaster() != "mesos://"+leader {
			t.Fatalf("with %s the endpoint is at %s (Spark: %s), want the leader %s", list, ep.Base(), ep.SparkMaster(), leader)
		}
	}
	// No master answers: the error says which were tried and what to do.
	ep, _ := NewEndpoint(dead+","+deadAddr(t), "", "", WithLogger(quiet))
	_, err := NewOperator(ep).GetAgents(ctx)
	if err == nil || !strings.Contains(err.Error(), "no master of "+dead) || !strings.Contains(err.Error(), "--mesos-master") {
		t.Fatalf("no master answers: %v", err)
	}
	// Only a master still starting: its 404 comes back.
	ep, _ = NewEndpoint(starting+","+starting, "", "", WithLogger(quiet))
	_, err = NewOperator(ep).GetAgents(ctx)
	if !strings.Contains(fmt.Sprint(err), "404") {
		t.Fatalf("only a starting master: %v", err)
	}
	// Only followers without a leader: Mesos' 503 comes back.
	ep, _ = NewEndpoint(lost+","+lost, "", "", WithLogger(quiet))
	_, err = NewOperator(ep).GetAgents(ctx)
	if !strings.Contains(fmt.Sprint(err), "503") || !strings.Contains(fmt.Sprint(err), "No leader elected") {
		t.Fatalf("no leader: %v", err)
	}
}

// subscriptions records where and when a framework subscribed.
type subscriptions struct {
	nopObserver
	ep  *Endpoint
	ups chan string // the master of each subscription
}

func (o *subscriptions) ObserveConnected(up bool) {
	if up {
		o.ups <- o.ep.Base()
	}
}

// runFramework runs a framework observed by a subscriptions recorder on
// ep (fast retries, so a moved master is found at once) until the test
// ends; it returns the framework, its id store, the recorder and a
// context that ends with the test.
func runFramework(t *testing.T, ep *Endpoint, cfg FrameworkConfig, quiet *logrus.Logger) (*Framework, *memIDs, *subscriptions, context.Context) {
	t.Helper()
	obs := &subscriptions{ep: ep, ups: make(chan string, 16)}
	cfg.Observer = obs
	ids := &memIDs{}
	fw := NewFramework(cfg, NewSchedClient(ep, quiet), ids, nil, quiet)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = fw.Run(ctx, RunOptions{MinBackoff: 200 * time.Millisecond, MaxBackoff: time.Second, ProbeEvery: 100 * time.Millisecond})
	}()
	t.Cleanup(func() { cancel(); <-done })
	return fw, ids, obs, ctx
}

func waitUp(t *testing.T, ups chan string, want string) {
	t.Helper()
	deadline := time.After(90 * time.Second)
	for {
		select {
		case at := <-ups:
			if at == want {
				return
			}
			t.Logf("subscribed at %s; waiting for %s", at, want)
		case <-deadline:
			t.Fatalf("no subscription at %s within 90 s", want)
		}
	}
}

// TestFrameworkFailsOverToAnotherMaster: with --mesos-master A,B and A
// leading, the framework subscribes with A (B redirects there); when A
// dies and B takes over, it subscribes again with B, keeping its
// framework id.
func TestFrameworkFailsOverToAnotherMaster(t *testing.T) {
	m, quiet := emulator(t)
	a := &switchable{}
	a.set(m.Handler())
	srvA, addrA := listenOn(t, a, "127.0.0.1:0")
	b := &switchable{}
	b.set(mesossim.Follower(func() string { return addrA }))
	_, addrB := listenOn(t, b, "127.0.0.1:0")

	ep, err := NewEndpoint(addrB+","+addrA, "", "", WithLogger(quiet))
	if err != nil {
		t.Fatal(err)
	}
	_, ids, obs, ctx := runFramework(t, ep, FrameworkConfig{}, quiet)
	waitUp(t, obs.ups, "http://"+addrA)
	id, _ := ids.FrameworkID(ctx)

	// A fails; B becomes the leader with A's state.
	b.set(m.Handler())
	srvA.Close()
	waitUp(t, obs.ups, "http://"+addrB)
	if now, _ := ids.FrameworkID(ctx); now != id || id == "" {
		t.Fatalf("framework id %q after the failover, want %q", now, id)
	}
}

// TestFrameworkFollowsTheLeaderInZooKeeper: with --mesos-master
// zk://.../mesos the framework subscribes with the master ZooKeeper names
// (a real ZooKeeper; emulated masters), and when ZooKeeper names another
// leader it moves its subscription there at once, although the old
// master still answers.
func TestFrameworkFollowsTheLeaderInZooKeeper(t *testing.T) {
	zkAddr := zktest.Start(t)
	m, quiet := emulator(t)
	_, addrA := listenOn(t, m.Handler(), "127.0.0.1:0")
	_, addrB := listenOn(t, m.Handler(), "127.0.0.1:0")
	c, err := zktest.Connect(zkAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Create("/mesos", nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	register := func(addr string) string {
		host, port, _ := net.SplitHostPort(addr)
		p, _ := strconv.Atoi(port)
		info := fmt.Sprintf(`{"address":{"hostname":%q,"ip":%q,"port":%d},"hostname":%q,"pid":"master@%s","port":%d,"version":"1.12.0"}`, host, host, p, host, addr, p)
		node, err := c.Create("/mesos/json.info_", []byte(info), zk.FlagEphemeral|zk.FlagSequence, zk.WorldACL(zk.PermAll))
		if err != nil {
			t.Fatal(err)
		}
		return node
	}
	nodeA := register(addrA)

	ep, err := NewEndpoint("zk://"+zkAddr+"/mesos", "", "", WithLogger(quiet))
	if err != nil {
		t.Fatal(err)
	}
	defer ep.Close()
	if sm := ep.SparkMaster(); sm != "mesos://zk://"+zkAddr+"/mesos" {
		t.Fatalf("Spark master %q", sm)
	}
	// The old master keeps answering: only the watch can move the
	// subscription.
	_, _, obs, _ := runFramework(t, ep, FrameworkConfig{}, quiet)
	waitUp(t, obs.ups, "http://"+addrA)

	register(addrB)
	if err := c.Delete(nodeA, -1); err != nil {
		t.Fatal(err)
	}
	waitUp(t, obs.ups, "http://"+addrB)
}
