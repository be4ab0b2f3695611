package realmesos

import (
	"context"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/sparkpack/sparkpack/internal/pgtest"
	"github.com/sparkpack/sparkpack/internal/zktest"
	"github.com/sparkpack/sparkpack/offers"
)

// TestSparkpackFollowsTheRealMastersThroughZooKeeper (#28): two real
// Mesos 1.12 masters elect their leader in a real ZooKeeper (--zk,
// --quorum=1), the agents find it there too. A master list in either
// order reaches the leader (the other redirects); `serve --mesos-master
// zk://.../mesos` subscribes with the leader, and when the leader is
// killed it subscribes with the new one.
func TestSparkpackFollowsTheRealMastersThroughZooKeeper(t *testing.T) {
	bin := mesosBin(t)
	zkAddr := zktest.Start(t)
	zkURL := "zk://" + zkAddr + "/mesos"
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	// A dead leader's znode goes with its ZooKeeper session: 3 s here
	// (Mesos' default: 10 s).
	zkFlags := []string{"--zk=" + zkURL, "--quorum=1", "--zk_session_timeout=3secs"}
	c, err := Start(ctx, Options{Bin: bin, Cluster: ThreeAgents(), Logf: t.Logf,
		MasterFlags: zkFlags, AgentMaster: zkURL})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Close(context.Background()); err != nil {
			t.Errorf("closing the cluster: %v", err)
		}
	})
	port2, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	url2 := "http://127.0.0.1:" + strconv.Itoa(port2)
	m2, err := c.run("master2", filepath.Join(bin, "mesos-master"), append([]string{"--ip=127.0.0.1", "--port=" + strconv.Itoa(port2),
		"--work_dir=" + filepath.Join(c.Dir, "master2"), "--registry=in_memory",
		"--agent_ping_timeout=1secs", "--max_agent_ping_timeouts=3"}, zkFlags...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m2.stop(syscall.SIGTERM, 15*time.Second) })
	obs2 := NewObserver(url2)
	if err := c.waitFor(ctx, time.Minute, "the second master to answer", func() (bool, error) {
		resp, err := http.Get(url2 + "/version")
		if err == nil {
			resp.Body.Close()
		}
		return err == nil, m2.exited()
	}); err != nil {
		t.Fatal(err)
	}

	// A list in either order reaches the leader (the first master).
	quiet := logrus.New()
	quiet.SetOutput(io.Discard)
	leaderPort := c.URL[len("http://127.0.0.1:"):]
	for _, list := range []string{url2 + "," + c.URL, c.URL + "," + url2} {
		ep, err := offers.NewEndpoint(list, "", "", offers.WithLogger(quiet))
		if err != nil {
			t.Fatal(err)
		}
		agents, err := offers.NewOperator(ep).GetAgents(ctx)
		if err != nil || len(agents) != 3 {
			t.Fatalf("GET_AGENTS through %s: %d agents, %v", list, len(agents), err)
		}
		if _, port, _ := net.SplitHostPort(ep.Host()); port != leaderPort {
			t.Fatalf("through %s the endpoint is at %s, want the leader's port %s", list, ep.Host(), leaderPort)
		}
	}

	startSparkpack(t, zkURL, pgtest.URL(t))
	connected := func(o *Observer) bool {
		fws, err := o.Frameworks(ctx)
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
	if err := c.waitFor(ctx, time.Minute, "sparkpack to subscribe with the leader found in ZooKeeper", func() (bool, error) {
		return connected(c.Observer()), nil
	}); err != nil {
		t.Fatal(err)
	}

	c.master.stop(syscall.SIGKILL, 10*time.Second)
	killed := time.Now()
	if err := c.waitFor(ctx, 2*time.Minute, "sparkpack to subscribe with the new leader", func() (bool, error) {
		return connected(obs2), m2.exited()
	}); err != nil {
		t.Logf("second master's log:\n%s", tailFile(m2.log, 30))
		t.Fatal(err)
	}
	t.Logf("sparkpack subscribed with the new leader %s after the leader was killed (ZooKeeper session timeout 3 s)", time.Since(killed).Round(100*time.Millisecond))
}
