package masterdetect

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/sirupsen/logrus"

	"github.com/sparkpack/sparkpack/internal/zktest"
)

// register writes a master's znode as Mesos' leader contender does: an
// ephemeral sequential json.info_ node holding its MasterInfo in JSON.
func register(t *testing.T, c *zk.Conn, path, host string, port int) string {
	t.Helper()
	info := fmt.Sprintf(`{"address":{"hostname":%q,"ip":"127.0.0.1","port":%d},"hostname":%q,"id":"m-%d","pid":"master@127.0.0.1:%d","port":%d,"version":"1.12.0"}`, host, port, host, port, port, port)
	node, err := c.Create(path+"/json.info_", []byte(info), zk.FlagEphemeral|zk.FlagSequence, zk.WorldACL(zk.PermAll))
	if err != nil {
		t.Fatal(err)
	}
	return node
}

// waitLeader waits (generously) until the watcher names want.
func waitLeader(t *testing.T, w *Watcher, want string) {
	t.Helper()
	deadline := time.After(60 * time.Second)
	for {
		leader, changed, err := w.Current()
		if leader == want {
			return
		}
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("the watcher names %q (%v), want %q", leader, err, want)
		}
	}
}

// TestWatcherFollowsTheLeaderInZooKeeper runs against a real ZooKeeper:
// the leader is the lowest json.info_ node; when it goes, the next one
// leads; with none, the watcher says why and what to check.
func TestWatcherFollowsTheLeaderInZooKeeper(t *testing.T) {
	addr := zktest.Start(t)
	quiet := logrus.New()
	quiet.SetOutput(io.Discard)
	w := NewWatcher(ZKSpec{Servers: []string{addr}, Path: "/mesos/prod"}, quiet)
	w.Start()
	defer w.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	_, err := w.Leader(ctx)
	cancel()
	if err == nil || !strings.Contains(err.Error(), "does not exist") || !strings.Contains(err.Error(), "--zk=") {
		t.Fatalf("no path yet: %v; want an error naming the path and the masters' --zk", err)
	}

	c, err := zktest.Connect(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, p := range []string{"/mesos", "/mesos/prod"} {
		if _, err := c.Create(p, nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatal(err)
		}
	}
	// Other nodes of the path (the replicated log's) are not masters.
	if _, err := c.Create("/mesos/prod/log_replicas", nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(60 * time.Second)
	for {
		_, changed, err := w.Current()
		if err != nil && strings.Contains(err.Error(), "no Mesos master is registered") {
			break
		}
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("an empty path: %v", err)
		}
	}

	first := register(t, c, "/mesos/prod", "m1", 5051)
	waitLeader(t, w, "m1:5051")
	second := register(t, c, "/mesos/prod", "m2", 5052)
	register(t, c, "/mesos/prod", "m3", 5053)
	ctx, cancel = context.WithTimeout(context.Background(), 30*time.Second)
	if l, err := w.Leader(ctx); l != "m1:5051" {
		t.Fatalf("with three masters the leader is %q (%v), want the first, m1:5051", l, err)
	}
	cancel()
	if err := c.Delete(first, -1); err != nil {
		t.Fatal(err)
	}
	waitLeader(t, w, "m2:5052")
	if err := c.Delete(second, -1); err != nil {
		t.Fatal(err)
	}
	waitLeader(t, w, "m3:5053")
}

// TestWatcherAuthenticatesToZooKeeper: masters registered under a path
// only a digest user may read (zk://user:password@.../path) are found
// with the credentials; without them the watcher says why.
func TestWatcherAuthenticatesToZooKeeper(t *testing.T) {
	addr := zktest.Start(t)
	quiet := logrus.New()
	quiet.SetOutput(io.Discard)
	c, err := zktest.Connect(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.AddAuth("digest", []byte("mesos:s3cret")); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Create("/secure", nil, 0, zk.DigestACL(zk.PermAll, "mesos", "s3cret")); err != nil {
		t.Fatal(err)
	}
	info := `{"address":{"hostname":"m1","ip":"127.0.0.1","port":5051},"port":5051}`
	if _, err := c.Create("/secure/json.info_", []byte(info), zk.FlagEphemeral|zk.FlagSequence, zk.DigestACL(zk.PermAll, "mesos", "s3cret")); err != nil {
		t.Fatal(err)
	}

	sp, err := Parse("zk://mesos:s3cret@" + addr + "/secure")
	if err != nil {
		t.Fatal(err)
	}
	w := NewWatcher(*sp.ZK, quiet)
	w.Start()
	defer w.Close()
	waitLeader(t, w, "m1:5051")

	anon := NewWatcher(ZKSpec{Servers: []string{addr}, Path: "/secure"}, quiet)
	anon.Start()
	defer anon.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if l, err := anon.Leader(ctx); err == nil || !strings.Contains(err.Error(), "not authenticated") || !strings.Contains(err.Error(), "zk://user:password@") {
		t.Fatalf("without credentials: %q, %v; want ZooKeeper's refusal", l, err)
	}
}

// TestCloseDoesNotWaitForASilentZooKeeper: against a ZooKeeper that
// accepts the connection and never answers, Close returns promptly (it
// waited, about 50 s, for the client's pending request to fail, holding
// sparkpack's shutdown). The bound, 20 s, is far above what Close takes
// now (about 1 s: the client's own wait for its close request) and far
// below the wait before.
func TestCloseDoesNotWaitForASilentZooKeeper(t *testing.T) {
	addr, accepted, _ := zktest.Silent(t)
	quiet := logrus.New()
	quiet.SetLevel(logrus.PanicLevel)
	sp, err := Parse("zk://" + addr + "/mesos")
	if err != nil {
		t.Fatal(err)
	}
	w := NewWatcher(*sp.ZK, quiet)
	w.Start()
	select {
	case <-accepted:
	case <-time.After(time.Minute):
		t.Fatal("the watcher never connected to the listener")
	}
	closed := make(chan struct{})
	go func() { w.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(20 * time.Second):
		t.Fatal("Close still waits 20 s after it was called, for a ZooKeeper that never answers")
	}
}

// stuckResolver is a resolver that does not answer until released (a DNS
// server that drops queries), then fails as such a lookup does.
type stuckResolver struct {
	entered chan struct{}
	release chan struct{}
	once    sync.Once
}

func (r *stuckResolver) Init([]string) error {
	r.once.Do(func() { close(r.entered) })
	<-r.release
	return errors.New("lookup zk1.example: i/o timeout")
}
func (r *stuckResolver) Len() int             { return 0 }
func (r *stuckResolver) Next() (string, bool) { return "", true }
func (r *stuckResolver) Connected()           {}

// TestStartDoesNotWaitForDNS: Start returns while the ZooKeeper servers'
// names are still being resolved. zk.Connect resolves them before it
// returns, and Start called it inline: under the Endpoint's lock, which
// Base, Host and Changed (the dashboard, every driver launch) wait for.
// A name that does not resolve is the reason Current gives, and is looked
// up again.
func TestStartDoesNotWaitForDNS(t *testing.T) {
	quiet := logrus.New()
	quiet.SetOutput(io.Discard)
	sp, err := Parse("zk://zk1.example:2181/mesos")
	if err != nil {
		t.Fatal(err)
	}
	r := &stuckResolver{entered: make(chan struct{}), release: make(chan struct{})}
	w := NewWatcher(*sp.ZK, quiet)
	w.hostProvider = r
	returned := make(chan struct{})
	go func() { w.Start(); close(returned) }()
	select {
	case <-r.entered:
	case <-time.After(time.Minute):
		t.Fatal("the watcher never resolved the servers")
	}
	// The lookup is held: Start must return all the same.
	select {
	case <-returned:
	case <-time.After(30 * time.Second):
		close(r.release)
		t.Fatal("Start waits for the servers' names to resolve")
	}
	if leader, _, err := w.Current(); leader != "" || err == nil || !strings.Contains(err.Error(), "has not answered yet") {
		t.Fatalf("while resolving: Current = %q, %v; want no leader, not answered yet", leader, err)
	}
	close(r.release)
	deadline := time.After(time.Minute)
	for {
		_, changed, err := w.Current()
		if err != nil && strings.Contains(err.Error(), "resolving its servers: lookup zk1.example: i/o timeout") &&
			strings.Contains(err.Error(), "do their names resolve from here?") {
			break
		}
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("the failed lookup is not the reason given: %v", err)
		}
	}
	w.Close()
}
