package masterdetect

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/sirupsen/logrus"
)

// MasterInfo is the part of Mesos' MasterInfo (as the masters write it in
// their json.info_ znodes) that locates a master.
type MasterInfo struct {
	ID       string `json:"id"`
	Hostname string `json:"hostname"`
	Port     int    `json:"port"`
	PID      string `json:"pid"`
	Version  string `json:"version"`
	Address  struct {
		Hostname string `json:"hostname"`
		IP       string `json:"ip"`
		Port     int    `json:"port"`
	} `json:"address"`
}

// HostPort is where the master answers HTTP: the address's hostname (as
// in the master's own 307 redirects) or else its IP, and its port; the
// pid (master@ip:port) when the address is missing.
func (m MasterInfo) HostPort() (string, error) {
	port := m.Address.Port
	if port == 0 {
		port = m.Port
	}
	for _, host := range []string{m.Address.Hostname, m.Address.IP, m.Hostname} {
		if host == "" {
			continue
		}
		// A name a dial cannot use (a bracket, a space: whatever wrote the
		// znode wrote garbage) falls through to the next field, as a
		// missing one does.
		if hp := net.JoinHostPort(host, strconv.Itoa(port)); usableHostPort(hp, host) {
			return hp, nil
		}
	}
	if _, hp, ok := strings.Cut(m.PID, "@"); ok && usableHostPort(hp, "") {
		return hp, nil
	}
	return "", errors.New("MasterInfo has no usable address, hostname or pid; check what registers under the masters' znode path")
}

// usableHostPort reports whether hp splits into a host (equal to want
// unless want is empty) with no brackets, white space or control characters in it and a port
// in 1..65535.
func usableHostPort(hp, want string) bool {
	host, p, err := net.SplitHostPort(hp)
	if err != nil || host == "" || (want != "" && host != want) || strings.ContainsAny(host, "[]/@") || unusableHost(host) {
		return false
	}
	n, err := strconv.Atoi(p)
	return err == nil && n >= 1 && n <= 65535
}

func decodeMasterInfo(data []byte) (MasterInfo, error) {
	var mi MasterInfo
	err := json.Unmarshal(data, &mi)
	return mi, err
}

// LeaderNode picks the leading master's znode among the children of the
// masters' path: the json.info_ node with the lowest sequence number
// (ZooKeeper's ten-digit suffix), as Mesos' detector does. ok is false
// when no master is registered.
func LeaderNode(children []string) (string, bool) {
	var nodes []string
	for _, c := range children {
		if seq, ok := strings.CutPrefix(c, "json.info_"); ok {
			if _, err := strconv.ParseUint(seq, 10, 64); err == nil {
				nodes = append(nodes, c)
			}
		}
	}
	if len(nodes) == 0 {
		return "", false
	}
	sort.Slice(nodes, func(i, j int) bool {
		a, _ := strconv.ParseUint(strings.TrimPrefix(nodes[i], "json.info_"), 10, 64)
		b, _ := strconv.ParseUint(strings.TrimPrefix(nodes[j], "json.info_"), 10, 64)
		return a < b
	})
	return nodes[0], true
}

// Watcher follows the leading Mesos master in ZooKeeper. Start it once;
// Close ends its goroutine and its ZooKeeper session.
type Watcher struct {
	spec ZKSpec
	log  logrus.FieldLogger
	// hostProvider, when set, resolves the servers instead of the ZooKeeper
	// client's DNS provider (tests: a resolver that does not answer).
	hostProvider zk.HostProvider

	mu      sync.Mutex
	leader  string // host:port, "" while none is known
	err     error  // why no leader is known
	changed chan struct{}
	conn    *zk.Conn // once connected; closed by Close too: a pending call takes no context
	stopped bool     // Close was called: a connection made since is closed at once

	cancel context.CancelFunc
	done   chan struct{}
}

// NewWatcher returns a Watcher of the spec's path; it does nothing until
// Start.
func NewWatcher(spec ZKSpec, log logrus.FieldLogger) *Watcher {
	return &Watcher{spec: spec, log: log, changed: make(chan struct{}),
		err: fmt.Errorf("ZooKeeper %s has not answered yet (check that it runs and that sparkpack reaches it)", spec)}
}

// Start follows the path in the background until Close, and returns at
// once: resolving the servers' names, connecting and the digest
// authentication all happen in the watcher's goroutine (zk.Connect looks
// the names up before it returns, up to 3 s a try; a caller holding a lock,
// Endpoint's, held it that long). Names that do not resolve are looked up
// again every second, the reason kept for Current. Leader waits for the
// first answer.
func (w *Watcher) Start() {
	ctx, cancel := context.WithCancel(context.Background())
	w.cancel, w.done = cancel, make(chan struct{})
	go func() {
		defer close(w.done)
		conn := w.connect(ctx)
		if conn == nil {
			return
		}
		defer conn.Close()
		if w.authenticate(ctx, conn) {
			w.follow(ctx, conn)
		}
	}()
}

// connect makes the ZooKeeper client, trying again every second while the
// servers' names do not resolve; nil once ctx ends (or Close was called).
func (w *Watcher) connect(ctx context.Context) *zk.Conn {
	for failures := 0; ; failures++ {
		hosts := w.hostProvider
		if hosts == nil {
			hosts = zk.NewDNSHostProvider()
		}
		conn, _, err := zk.Connect(w.spec.Servers, 10*time.Second, zk.WithHostProvider(hosts),
			zk.WithLogger(debugLogger{w.log}), zk.WithLogInfo(false))
		if err == nil {
			w.mu.Lock()
			defer w.mu.Unlock()
			if w.stopped {
				conn.Close()
				return nil
			}
			w.conn = conn
			if failures > 0 {
				w.log.WithFields(logrus.Fields{"zookeeper": w.spec.String(), "failures": failures}).Info("ZooKeeper servers resolve now; connecting")
			}
			return conn
		}
		err = fmt.Errorf("ZooKeeper %s: resolving its servers: %w (check the ZooKeeper servers of --mesos-master: do their names resolve from here?)", w.spec, err)
		if failures == 0 {
			w.log.WithError(err).WithField("zookeeper", w.spec.String()).Warn("cannot resolve the ZooKeeper servers; trying again every second")
		}
		w.set("", err)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(time.Second):
		}
	}
}

// authenticate adds the digest credentials, if any, once ZooKeeper
// answers (the client sends them again after a reconnection). It returns
// false when ctx ends first.
func (w *Watcher) authenticate(ctx context.Context, conn *zk.Conn) bool {
	if w.spec.Auth == "" {
		return true
	}
	for {
		err := conn.AddAuth("digest", []byte(w.spec.Auth))
		if err == nil {
			return true
		}
		w.set("", fmt.Errorf("ZooKeeper %s: digest authentication: %w", w.spec, err))
		select {
		case <-ctx.Done():
			return false
		case <-time.After(time.Second):
		}
	}
}

// Close stops following and closes the ZooKeeper session. It closes the
// connection itself before it waits: a pending call (ChildrenW, Get) takes
// no context, and against a ZooKeeper that accepted but does not answer it
// returned only when the client's own request failed (about 50 s), which
// held sparkpack's shutdown.
func (w *Watcher) Close() {
	if w.cancel == nil {
		return
	}
	w.cancel()
	w.mu.Lock()
	w.stopped = true
	conn := w.conn
	w.mu.Unlock()
	if conn != nil {
		conn.Close() // idempotent: the follower's deferred Close is a no-op
	}
	<-w.done
}

// Current returns the leader known now (host:port) and a channel closed
// when it changes; the error says why none is known.
func (w *Watcher) Current() (string, <-chan struct{}, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.leader == "" {
		return "", w.changed, w.err
	}
	return w.leader, w.changed, nil
}

// Leader returns the leading master's host:port, waiting until one is
// known or ctx ends.
func (w *Watcher) Leader(ctx context.Context) (string, error) {
	for {
		leader, changed, err := w.Current()
		if leader != "" {
			return leader, nil
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("no leading Mesos master in ZooKeeper %s: %w", w.spec, err)
		case <-changed:
		}
	}
}

func (w *Watcher) set(leader string, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if leader == w.leader && fmt.Sprint(err) == fmt.Sprint(w.err) {
		return
	}
	if leader != w.leader {
		if leader != "" {
			w.log.WithFields(logrus.Fields{"leader": leader, "zookeeper": w.spec.String()}).Info("leading Mesos master found in ZooKeeper")
		} else {
			w.log.WithError(err).WithField("zookeeper", w.spec.String()).Warn("no leading Mesos master in ZooKeeper; watching for one (check that the masters run and register under this znode)")
		}
	}
	w.leader, w.err = leader, err
	close(w.changed)
	w.changed = make(chan struct{})
}

// follow reads the leader and waits for a change of the path's children
// (or of the path's existence), until ctx ends.
func (w *Watcher) follow(ctx context.Context, conn *zk.Conn) {
	for ctx.Err() == nil {
		wait, err := w.lookup(conn)
		if err != nil {
			w.set("", err)
			// The session is down or the request failed: ask again soon.
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Second):
			}
			continue
		}
		select {
		case <-ctx.Done():
			return
		case <-wait:
		}
	}
}

// lookup reads the leader once and returns the watch that fires when it
// may have changed.
func (w *Watcher) lookup(conn *zk.Conn) (<-chan zk.Event, error) {
	children, _, wait, err := conn.ChildrenW(w.spec.Path)
	if errors.Is(err, zk.ErrNoNode) {
		ok, _, ewait, err := conn.ExistsW(w.spec.Path)
		if err != nil {
			return nil, fmt.Errorf("ZooKeeper %s: %w", w.spec, err)
		}
		if ok { // created meanwhile: look again
			now := make(chan zk.Event)
			close(now)
			return now, nil
		}
		w.set("", fmt.Errorf("the znode %s does not exist in ZooKeeper %s: no Mesos master has registered there (do the masters run with --zk=%s?)", w.spec.Path, strings.Join(w.spec.Servers, ","), w.spec))
		return ewait, nil
	}
	if errors.Is(err, zk.ErrNoAuth) {
		return nil, fmt.Errorf("ZooKeeper %s: %w (the path needs credentials: zk://user:password@%s%s)", w.spec, err, strings.Join(w.spec.Servers, ","), w.spec.Path)
	}
	if err != nil {
		return nil, fmt.Errorf("ZooKeeper %s: %w", w.spec, err)
	}
	node, ok := LeaderNode(children)
	if !ok {
		w.set("", fmt.Errorf("no Mesos master is registered under %s in ZooKeeper %s (is a master running with --zk=%s and --quorum?)", w.spec.Path, strings.Join(w.spec.Servers, ","), w.spec))
		return wait, nil
	}
	data, _, err := conn.Get(w.spec.Path + "/" + node)
	if errors.Is(err, zk.ErrNoAuth) {
		return nil, fmt.Errorf("ZooKeeper %s: reading %s: %w (the masters' znodes need credentials: zk://user:password@%s%s)", w.spec, node, err, strings.Join(w.spec.Servers, ","), w.spec.Path)
	}
	if errors.Is(err, zk.ErrNoNode) {
		return wait, nil // the leader just left; the children watch fires
	}
	if err != nil {
		return nil, fmt.Errorf("ZooKeeper %s: reading %s: %w", w.spec, node, err)
	}
	mi, err := decodeMasterInfo(data)
	if err != nil {
		return nil, fmt.Errorf("ZooKeeper %s: %s is not a JSON MasterInfo: %w", w.spec, node, err)
	}
	hp, err := mi.HostPort()
	if err != nil {
		return nil, fmt.Errorf("ZooKeeper %s: %s: %w", w.spec, node, err)
	}
	w.set(hp, nil)
	return wait, nil
}

// debugLogger sends the ZooKeeper client's own lines to debug level.
type debugLogger struct{ log logrus.FieldLogger }

func (d debugLogger) Printf(format string, args ...any) {
	d.log.WithField("component", "zookeeper").Debugf(format, args...)
}
