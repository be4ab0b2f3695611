package offers

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/sparkpack/sparkpack/masterdetect"
)

// Message is a mesos-go protobuf message.
type Message interface {
	Marshal() ([]byte, error)
	Unmarshal([]byte) error
}

const protobufType = "application/x-protobuf"

// Endpoint is the leading Mesos master reached over HTTP. It follows 307
// redirects to the leading master and remembers the leader for later
// calls. Given several masters it tries each in turn when the current one
// does not answer (or has no leader); given zk://, it reads the leader
// from ZooKeeper (package masterdetect) and follows its changes. Close
// ends the ZooKeeper session.
type Endpoint struct {
	mu        sync.Mutex
	spec      masterdetect.Spec
	scheme    string
	base      *url.URL // nil until a zk:// endpoint knows a leader
	next      int      // index in spec.Masters of the master tried next
	moved     chan struct{}
	principal string
	secret    string
	client    *http.Client
	guard     func() error
	log       logrus.FieldLogger
	zk        *masterdetect.Watcher
	closed    bool
}

// EndpointOption configures an Endpoint.
type EndpointOption func(*endpointOptions)

type endpointOptions struct {
	tls   *tls.Config
	guard func() error
	log   logrus.FieldLogger
}

// WithGuard makes every call to the master first ask guard, and fail with
// its error instead of being sent: a sparkpack instance that is no longer
// sure it leads (package leader) sends nothing to Mesos.
func WithGuard(guard func() error) EndpointOption {
	return func(o *endpointOptions) { o.guard = guard }
}

// WithTLS sets the TLS configuration for an https:// master (typically
// one trusting the master's CA: tlsutil.ClientConfig(--mesos-ca-file)).
// A master given as host:port is then reached over https.
func WithTLS(cfg *tls.Config) EndpointOption {
	return func(o *endpointOptions) { o.tls = cfg }
}

// WithLogger sets where the endpoint says which master it uses.
func WithLogger(log logrus.FieldLogger) EndpointOption {
	return func(o *endpointOptions) { o.log = log }
}

// NewEndpoint parses the master address (masterdetect.Parse): host:port,
// http(s)://host:port, a comma-separated list of those, or
// zk://servers/path. Principal and secret, when set, are sent with HTTP
// basic authentication. Nothing is contacted until the first call.
func NewEndpoint(master, principal, secret string, opts ...EndpointOption) (*Endpoint, error) {
	var o endpointOptions
	for _, f := range opts {
		f(&o)
	}
	if o.log == nil {
		o.log = logrus.StandardLogger()
	}
	spec, err := masterdetect.Parse(master)
	if err != nil {
		return nil, err
	}
	scheme := spec.Scheme
	switch {
	case scheme == "" && o.tls != nil:
		scheme = "https"
	case scheme == "":
		scheme = "http"
	case o.tls != nil && scheme != "https":
		return nil, fmt.Errorf("Mesos master %q: a CA file is set (--mesos-ca-file) but the master is http://; write https://%s", master, spec.Masters[0])
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	if o.tls != nil {
		transport.TLSClientConfig = o.tls.Clone()
	}
	e := &Endpoint{
		spec:      spec,
		scheme:    scheme,
		moved:     make(chan struct{}),
		principal: principal,
		secret:    secret,
		guard:     o.guard,
		log:       o.log,
		client: &http.Client{
			Transport: transport,
			// Redirects are followed by hand: Mesos answers 307 with a
			// Location of the leading master, and the body must be resent.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
	}
	if spec.ZK == nil {
		e.base = &url.URL{Scheme: scheme, Host: spec.Masters[0]}
		e.next = 1 % len(spec.Masters)
	}
	return e, nil
}

// Close ends the ZooKeeper session of a zk:// endpoint (nothing else).
func (e *Endpoint) Close() {
	e.mu.Lock()
	w := e.zk
	e.closed = true
	e.mu.Unlock()
	if w != nil {
		w.Close()
	}
}

// TLS reports whether the master is reached over https.
func (e *Endpoint) TLS() bool {
	return e.scheme == "https"
}

// Base returns the current master URL (the zk:// address while no
// leader is known yet).
func (e *Endpoint) Base() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.syncLocked()
	if e.base == nil {
		return e.spec.String()
	}
	return e.base.String()
}

// Host returns host:port of the current master ("" while a zk://
// endpoint knows no leader).
func (e *Endpoint) Host() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.syncLocked()
	if e.base == nil {
		return ""
	}
	return e.base.Host
}

// Masters is the master address as given, without ZooKeeper credentials.
func (e *Endpoint) Masters() string { return e.spec.String() }

// SparkMaster is the master URL for a Spark driver launched now: with
// ZooKeeper, mesos://zk://servers/path (Spark's Mesos client reads the
// leader there itself; ZooKeeper credentials are left out: set
// --spark-master to pass them); otherwise the current leader,
// mesos://host:port, which Spark's client cannot find among several.
func (e *Endpoint) SparkMaster() string {
	if e.spec.ZK != nil {
		return "mesos://" + e.spec.ZK.String()
	}
	return "mesos://" + e.Host()
}

// Changed returns a channel closed when the endpoint may have moved to
// another master (a redirect, a failover, a new leader in ZooKeeper):
// compare Base with the master of a subscription to know.
func (e *Endpoint) Changed() <-chan struct{} {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.zk != nil {
		_, ch, _ := e.zk.Current()
		return ch
	}
	return e.moved
}

// setBaseLocked moves to host and tells Changed's waiters.
func (e *Endpoint) setBaseLocked(host string) {
	if e.base != nil && e.base.Host == host {
		return
	}
	from := ""
	if e.base != nil {
		from = e.base.Host
	}
	e.base = &url.URL{Scheme: e.scheme, Host: host}
	close(e.moved)
	e.moved = make(chan struct{})
	if from != "" {
		e.log.WithFields(logrus.Fields{"from": from, "to": host}).Info("Mesos master changed")
	}
}

// syncLocked moves a zk:// endpoint to the leader ZooKeeper names now.
func (e *Endpoint) syncLocked() {
	if e.zk == nil {
		return
	}
	if leader, _, _ := e.zk.Current(); leader != "" {
		e.setBaseLocked(leader)
	}
}

// zkLeaderWait bounds how long a call waits for ZooKeeper to name a
// leader before it fails with the reason.
const zkLeaderWait = 15 * time.Second

// resolve returns the master to call: the current one, or for zk:// the
// leader ZooKeeper names (waiting up to zkLeaderWait for the first).
func (e *Endpoint) resolve(ctx context.Context) (*url.URL, error) {
	e.mu.Lock()
	if e.spec.ZK == nil {
		u := *e.base
		e.mu.Unlock()
		return &u, nil
	}
	if e.closed {
		e.mu.Unlock()
		return nil, errors.New("the Mesos endpoint is closed")
	}
	w := e.watcherLocked()
	e.syncLocked()
	if e.base != nil {
		u := *e.base
		e.mu.Unlock()
		return &u, nil
	}
	e.mu.Unlock()
	wctx, cancel := context.WithTimeout(ctx, zkLeaderWait)
	defer cancel()
	if _, err := w.Leader(wctx); err != nil {
		return nil, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.syncLocked()
	u := *e.base
	return &u, nil
}

// watcherLocked returns the ZooKeeper watcher of a zk:// endpoint,
// started on first use. Start returns at once: the servers' names are
// resolved and ZooKeeper connected in the watcher's goroutine, never under
// e.mu (zk.Connect resolves before it returns, up to 3 s a try, and every
// caller of Base, Host or Changed waited that long behind it).
func (e *Endpoint) watcherLocked() *masterdetect.Watcher {
	if e.zk == nil {
		e.zk = masterdetect.NewWatcher(*e.spec.ZK, e.log)
		e.zk.Start()
	}
	return e.zk
}

// LeaderKnown reports whether a call would go out at once: always for
// masters given by address; for zk:// once ZooKeeper has named the leader
// (it starts following ZooKeeper if it did not yet, without waiting). A
// call made before waits for ZooKeeper, up to zkLeaderWait (15 s), which
// sparkpack's start does not (Cluster.Start).
func (e *Endpoint) LeaderKnown() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.spec.ZK == nil {
		return true
	}
	if e.closed {
		return false
	}
	e.watcherLocked()
	e.syncLocked()
	return e.base != nil
}

// failover moves away from host, which did not answer or had no leader:
// to the next master of a list, or to the leader ZooKeeper names now. It
// reports whether there is somewhere else to try.
func (e *Endpoint) failover(host string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.zk != nil {
		e.syncLocked()
		return e.base != nil && e.base.Host != host
	}
	n := len(e.spec.Masters)
	if n < 2 || e.base == nil || e.base.Host != host {
		return n >= 2
	}
	// A redirect may have taken us to a master outside the list: go on
	// with the list's next one.
	to := e.spec.Masters[e.next]
	if to == host {
		e.next = (e.next + 1) % n
		to = e.spec.Masters[e.next]
	}
	e.next = (e.next + 1) % n
	e.setBaseLocked(to)
	return true
}

// tries is how many masters a call may try after a refused connection,
// a 503 or a 404: every other master of a list, or a new ZooKeeper leader.
func (e *Endpoint) tries() int {
	if e.spec.ZK != nil {
		return 1
	}
	return len(e.spec.Masters) - 1
}

// unreachable adds what to do next to a transport error.
func (e *Endpoint) unreachable(err error) error {
	switch {
	case e.spec.ZK != nil:
		return fmt.Errorf("%w (the leader named by ZooKeeper %s does not answer; a new one is elected within the masters' --zk_session_timeout)", err, e.spec.ZK)
	case len(e.spec.Masters) > 1:
		return fmt.Errorf("%w (no master of %s answered; start one or fix --mesos-master)", err, e.spec)
	default:
		return fmt.Errorf("%w (is the Mesos master running? with several masters give them all, host1:5050,host2:5050, or zk://zk1:2181/mesos)", err)
	}
}

// StatusError is a Mesos answer other than the expected success.
type StatusError struct {
	Code int
	Body string // Mesos sends errors as text/plain
	Call string
}

func (e *StatusError) Error() string {
	body := strings.TrimSpace(e.Body)
	if len(body) > 300 {
		body = body[:300] + "..."
	}
	return fmt.Sprintf("Mesos %s: %d %s: %s", e.Call, e.Code, http.StatusText(e.Code), body)
}

// IsConflict reports a 409: not enough unallocated resources for a
// reserve, or resources in use for an unreserve.
func IsConflict(err error) bool {
	var se *StatusError
	return errors.As(err, &se) && se.Code == http.StatusConflict
}

// post sends one protobuf call to path and returns the response, following
// up to 5 leader redirects and, with several masters, moving to another
// master when the connection is refused, the master has no leader (503)
// or is still starting (404). The caller closes the body.
func (e *Endpoint) post(ctx context.Context, path, callName string, msg Message, accept string, header http.Header) (*http.Response, error) {
	if e.guard != nil {
		if err := e.guard(); err != nil {
			return nil, fmt.Errorf("Mesos %s not sent: %w", callName, err)
		}
	}
	body, err := msg.Marshal()
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", callName, err)
	}
	failovers := 0
	for redirects := 0; ; {
		base, err := e.resolve(ctx)
		if err != nil {
			return nil, fmt.Errorf("Mesos %s: %w", callName, err)
		}
		target := base.ResolveReference(&url.URL{Path: path}).String()
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
		if err != nil {
			return nil, err
		}
		req.Header.Set("Content-Type", protobufType)
		req.Header.Set("Accept", accept)
		for k, vs := range header {
			req.Header[k] = vs
		}
		if e.principal != "" {
			req.SetBasicAuth(e.principal, e.secret)
		}
		resp, err := e.client.Do(req)
		if err != nil {
			// A refused connection was not delivered: another master may
			// take it. Any other error may have been, so it is returned
			// (the caller decides whether to repeat the call).
			if notConnected(err) && ctx.Err() == nil {
				if e.failover(base.Host) && failovers < e.tries() {
					failovers++
					continue
				}
			}
			return nil, e.unreachable(fmt.Errorf("Mesos %s to %s: %w", callName, target, err))
		}
		if (resp.StatusCode == http.StatusServiceUnavailable || resp.StatusCode == http.StatusNotFound) && failovers < e.tries() {
			// "No leader elected" or not recovered yet (503), or still
			// starting (404: a master installs its API routes once it has
			// initialised; the v1 API is never absent from a running
			// master): try another.
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
			resp.Body.Close()
			if e.failover(base.Host) {
				failovers++
				continue
			}
			failovers = e.tries() // nowhere else: ask this one again and return its answer
			continue
		}
		if resp.StatusCode != http.StatusTemporaryRedirect {
			return resp, nil
		}
		loc := resp.Header.Get("Location")
		resp.Body.Close()
		redirects++
		if redirects > 5 || loc == "" {
			return nil, fmt.Errorf("Mesos %s: too many redirects (last to %q); is a leading master elected?", callName, loc)
		}
		if err := e.follow(base, loc); err != nil {
			return nil, err
		}
	}
}

// notConnected reports an error of a request that never reached a master:
// the connection was refused or could not be made.
func notConnected(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// follow moves the endpoint to the leader named by a 307 Location, which
// Mesos writes as //host:port/path.
func (e *Endpoint) follow(from *url.URL, loc string) error {
	u, err := from.Parse(loc)
	if err != nil || u.Host == "" {
		return fmt.Errorf("Mesos redirect to %q: not a master address", loc)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.setBaseLocked(u.Host)
	return nil
}

// Probe asks the master cheaply whether it answers (GET /version, at most
// a second): any HTTP answer counts. It is how a framework that lost its
// master notices it is back without waiting out a long backoff. A master
// that does not answer is left for the next one of a list (or the leader
// ZooKeeper names), which the next probe asks.
func (e *Endpoint) Probe(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	base, err := e.resolve(ctx)
	if err != nil {
		return fmt.Errorf("probe Mesos master: %w", err)
	}
	target := base.ResolveReference(&url.URL{Path: "/version"}).String()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return err
	}
	if e.principal != "" {
		req.SetBasicAuth(e.principal, e.secret)
	}
	resp, err := e.client.Do(req)
	if err != nil {
		e.failover(base.Host)
		return fmt.Errorf("probe Mesos master %s: %w", target, err)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	return nil
}

func readError(resp *http.Response, call string) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	return &StatusError{Code: resp.StatusCode, Body: string(b), Call: call}
}

// backoff returns capped exponential backoff with full jitter.
func backoff(attempt int, min, max time.Duration, rnd func(int64) int64) time.Duration {
	d := min
	for i := 0; i < attempt && d < max; i++ {
		d *= 2
	}
	if d > max {
		d = max
	}
	return min/2 + time.Duration(rnd(int64(d)))
}
