package offers

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// Message is a mesos-go protobuf message.
type Message interface {
	Marshal() ([]byte, error)
	Unmarshal([]byte) error
}

const protobufType = "application/x-protobuf"

// Endpoint is a Mesos master reached over HTTP. It follows 307 redirects to
// the leading master and remembers the leader for later calls.
type Endpoint struct {
	mu        sync.Mutex
	base      *url.URL
	principal string
	secret    string
	client    *http.Client
	guard     func() error
}

// EndpointOption configures an Endpoint.
type EndpointOption func(*endpointOptions)

type endpointOptions struct {
	tls   *tls.Config
	guard func() error
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

// NewEndpoint parses the master address: host:port, http://host:port or
// https://host:port. Principal and secret, when set, are sent with HTTP
// basic authentication.
func NewEndpoint(master, principal, secret string, opts ...EndpointOption) (*Endpoint, error) {
	var o endpointOptions
	for _, f := range opts {
		f(&o)
	}
	if master == "" {
		return nil, errors.New("no Mesos master address (set --mesos-master, e.g. http://127.0.0.1:5050)")
	}
	if !strings.Contains(master, "://") {
		scheme := "http://"
		if o.tls != nil {
			scheme = "https://"
		}
		master = scheme + master
	}
	u, err := url.Parse(master)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, fmt.Errorf("Mesos master %q: want host:port or http(s)://host:port", master)
	}
	if o.tls != nil && u.Scheme != "https" {
		return nil, fmt.Errorf("Mesos master %q: a CA file is set (--mesos-ca-file) but the master is http://; write https://%s", master, u.Host)
	}
	u.Path = ""
	transport := http.DefaultTransport.(*http.Transport).Clone()
	if o.tls != nil {
		transport.TLSClientConfig = o.tls.Clone()
	}
	return &Endpoint{
		base:      u,
		principal: principal,
		secret:    secret,
		guard:     o.guard,
		client: &http.Client{
			Transport: transport,
			// Redirects are followed by hand: Mesos answers 307 with a
			// Location of the leading master, and the body must be resent.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
	}, nil
}

// TLS reports whether the master is reached over https.
func (e *Endpoint) TLS() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.base.Scheme == "https"
}

// Base returns the current master URL.
func (e *Endpoint) Base() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.base.String()
}

// Host returns host:port of the current master (for mesos:// URLs).
func (e *Endpoint) Host() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.base.Host
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
// up to 5 leader redirects. The caller closes the body.
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
	for redirects := 0; ; redirects++ {
		e.mu.Lock()
		target := e.base.ResolveReference(&url.URL{Path: path}).String()
		e.mu.Unlock()
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
			return nil, fmt.Errorf("Mesos %s to %s: %w", callName, target, err)
		}
		if resp.StatusCode != http.StatusTemporaryRedirect {
			return resp, nil
		}
		loc := resp.Header.Get("Location")
		resp.Body.Close()
		if redirects >= 5 || loc == "" {
			return nil, fmt.Errorf("Mesos %s: too many redirects (last to %q); is a leading master elected?", callName, loc)
		}
		if err := e.follow(loc); err != nil {
			return nil, err
		}
	}
}

// follow moves the endpoint to the leader named by a 307 Location, which
// Mesos writes as //host:port/path.
func (e *Endpoint) follow(loc string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	u, err := e.base.Parse(loc)
	if err != nil || u.Host == "" {
		return fmt.Errorf("Mesos redirect to %q: not a master address", loc)
	}
	e.base = &url.URL{Scheme: e.base.Scheme, Host: u.Host}
	return nil
}

// Probe asks the master cheaply whether it answers (GET /version, at most
// a second): any HTTP answer counts. It is how a framework that lost its
// master notices it is back without waiting out a long backoff.
func (e *Endpoint) Probe(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	e.mu.Lock()
	target := e.base.ResolveReference(&url.URL{Path: "/version"}).String()
	e.mu.Unlock()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return err
	}
	if e.principal != "" {
		req.SetBasicAuth(e.principal, e.secret)
	}
	resp, err := e.client.Do(req)
	if err != nil {
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
