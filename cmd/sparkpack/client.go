package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/sparkpack/sparkpack/internal/tlsutil"
)

// clientFlags are the flags every command that talks to a running
// sparkpack shares.
type clientFlags struct {
	server, token, caFile string
}

func (c *clientFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&c.server, "server", envDefault("SPARKPACK_SERVER", "http://127.0.0.1:8080"), withEnv("sparkpack API base URL (the demo prints it)", "SPARKPACK_SERVER"))
	fs.StringVar(&c.token, "token", "", "bearer token, when the server has tokens (default: env SPARKPACK_TOKEN)")
	fs.StringVar(&c.caFile, "ca-file", envDefault("SPARKPACK_CA_FILE", ""), withEnv("PEM CA certificates to trust for an https:// --server (default: the system's roots)", "SPARKPACK_CA_FILE"))
}

// client builds the API client from the flags.
func (c *clientFlags) client() (*apiClient, error) {
	if c.token == "" {
		c.token = os.Getenv("SPARKPACK_TOKEN")
	}
	u, err := url.Parse(c.server)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("--server %q is not a URL such as http://127.0.0.1:8080 (set --server or SPARKPACK_SERVER)", c.server)
	}
	if strings.Contains(u.Path+"/", "/api/v1/") {
		// The demo prints the REST API as http://HOST:PORT/api/v1/jobs:
		// the client adds the API's paths itself.
		return nil, fmt.Errorf("--server %q holds the API's path: give sparkpack's base URL, %s://%s (set --server or SPARKPACK_SERVER)", c.server, u.Scheme, u.Host)
	}
	tc, err := tlsutil.ClientConfig(c.caFile)
	if err != nil {
		return nil, fmt.Errorf("--ca-file: %w", err)
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = tc
	return &apiClient{base: strings.TrimRight(c.server, "/"), token: c.token, http: &http.Client{Transport: tr, Timeout: 30 * time.Second}}, nil
}

// apiClient talks to sparkpack's REST API and turns its answers into
// errors that say what to do next.
type apiClient struct {
	base  string
	token string
	http  *http.Client
	// retries is how often a request that may succeed later (503, 429
	// with Retry-After, a timeout or a reset connection) is tried again.
	retries int
	// retryFor, when positive, bounds retrying by time instead of by
	// count: a request is tried again, for up to that long from its first
	// try, when it may succeed later (as retries; connection refused too,
	// a server restarting), never on another 4xx. Only for idempotent
	// requests (submit sends its own job id).
	retryFor time.Duration
	// stderr, if set, hears about retries.
	stderr io.Writer
}

// httpError is an answer other than 2xx.
type httpError struct {
	Status     int
	Msg, Field string
	retryAfter time.Duration
	// foreign: the answer is not sparkpack's error JSON (another server
	// answered: --server names the wrong port or service); base is the
	// server asked.
	foreign bool
	base    string
}

func (e *httpError) Error() string {
	msg := e.Msg
	if e.Field != "" && !strings.HasPrefix(msg, e.Field) {
		msg = e.Field + ": " + msg
	}
	return fmt.Sprintf("the server answered %d %s: %s", e.Status, http.StatusText(e.Status), msg)
}

// unreachable is a server that is not there: retrying will not help.
type unreachable struct {
	base string
	err  error
}

func (e *unreachable) Error() string {
	return fmt.Sprintf("cannot reach sparkpack at %s (%v): is sparkpack running there? Start it (make demo, or sparkpack serve), or point --server or SPARKPACK_SERVER at it", e.base, rootCause(e.err))
}

func (e *unreachable) Unwrap() error { return e.err }

// rootCause strips net/http's wrapping down to the system error.
func rootCause(err error) error {
	var op *net.OpError
	if errors.As(err, &op) && op.Err != nil {
		return op.Err
	}
	return err
}

// transient reports whether err may go away by itself.
func transient(err error) (bool, time.Duration) {
	var he *httpError
	if errors.As(err, &he) {
		switch he.Status {
		case http.StatusServiceUnavailable:
			return true, he.retryAfter
		case http.StatusBadGateway, http.StatusGatewayTimeout:
			return true, 0
		case http.StatusTooManyRequests:
			return he.retryAfter > 0, he.retryAfter
		}
		return false, 0
	}
	var ur *unreachable
	if errors.As(err, &ur) {
		return false, 0
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return true, 0
	}
	return errors.Is(err, syscall.ECONNRESET) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF), 0
}

// retryPolicy bounds retrying a request: by count (retries) or, when
// retryFor is positive, by the time since its first try.
type retryPolicy struct {
	retries  int
	retryFor time.Duration
}

// retryBackoff is the wait before the n-th retry (from 0): 500ms doubling,
// at most 5s.
func retryBackoff(n int) time.Duration {
	return min(500*time.Millisecond<<min(n, 4), 5*time.Second)
}

// decideRetry says whether a request that failed with err, after attempt
// retries and elapsed since its first try, is tried again, and after how
// long: what transient allows (the server's Retry-After when longer than
// the backoff) and, when bounded by time, a refused connection (a
// server restarting) too, never past retryFor. It is pure.
func decideRetry(err error, attempt int, elapsed time.Duration, p retryPolicy) (bool, time.Duration) {
	if err == nil {
		return false, 0
	}
	retry, after := transient(err)
	if p.retryFor <= 0 {
		if !retry || attempt >= p.retries {
			return false, 0
		}
		return true, max(after, retryBackoff(attempt))
	}
	if !retry && !refused(err) {
		return false, 0
	}
	left := p.retryFor - elapsed
	if left <= 0 {
		return false, 0
	}
	return true, min(max(after, retryBackoff(attempt)), left)
}

// refused reports whether err is a refused connection: nothing listens
// there now (a server restarting, or not started yet).
func refused(err error) bool {
	var ur *unreachable
	return errors.As(err, &ur) && errors.Is(ur.err, syscall.ECONNREFUSED)
}

// do sends one request (retrying transient failures: decideRetry) and
// decodes a 2xx JSON answer into out (when not nil). It returns the
// status.
func (c *apiClient) do(ctx context.Context, method, path string, body []byte, out any) (int, error) {
	start := time.Now()
	p := retryPolicy{retries: c.retries, retryFor: c.retryFor}
	for attempt := 0; ; attempt++ {
		status, err := c.once(ctx, method, path, body, out)
		retry, wait := decideRetry(err, attempt, time.Since(start), p)
		if !retry {
			return status, err
		}
		if c.stderr != nil {
			if p.retryFor > 0 {
				fmt.Fprintf(c.stderr, "%s; trying again in %s (%s left of --retry-for %s)\n", retryText(err), wait.Round(100*time.Millisecond),
					max(p.retryFor-time.Since(start), 0).Round(time.Second), p.retryFor)
			} else {
				fmt.Fprintf(c.stderr, "%v; trying again in %s (%d of %d)\n", err, wait, attempt+1, c.retries)
			}
		}
		select {
		case <-ctx.Done():
			return status, ctx.Err()
		case <-time.After(wait):
		}
	}
}

// retryText is a failure that is retried, short: a refused connection
// does not need unreachable's advice yet.
func retryText(err error) string {
	if refused(err) {
		var ur *unreachable
		errors.As(err, &ur)
		return fmt.Sprintf("sparkpack at %s is not answering (%v)", ur.base, rootCause(ur.err))
	}
	return err.Error()
}

func (c *apiClient) once(ctx context.Context, method, path string, body []byte, out any) (int, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return 0, fmt.Errorf("--server %q: %w", c.base, err)
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return 0, ctx.Err()
		}
		var dns *net.DNSError
		if errors.Is(err, syscall.ECONNREFUSED) || errors.As(err, &dns) || errors.Is(err, syscall.EHOSTUNREACH) || errors.Is(err, syscall.ENETUNREACH) {
			return 0, &unreachable{base: c.base, err: err}
		}
		return 0, fmt.Errorf("talking to %s: %w", c.base, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return resp.StatusCode, fmt.Errorf("reading the answer of %s: %w", c.base, err)
	}
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		if out != nil {
			if err := json.Unmarshal(b, out); err != nil {
				return resp.StatusCode, fmt.Errorf("unreadable answer from %s (is --server a sparkpack?): %w", c.base, err)
			}
		}
		return resp.StatusCode, nil
	}
	var e struct {
		Error string `json:"error"`
		Field string `json:"field"`
	}
	foreign := json.Unmarshal(b, &e) != nil || e.Error == ""
	if foreign {
		e.Error = strings.TrimSpace(string(b))
		if len(e.Error) > 300 {
			e.Error = e.Error[:300] + "..."
		}
	}
	he := &httpError{Status: resp.StatusCode, Msg: e.Error, Field: e.Field, foreign: foreign, base: c.base}
	if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable {
		var n int
		if _, err := fmt.Sscanf(resp.Header.Get("Retry-After"), "%d", &n); err == nil && n > 0 {
			he.retryAfter = min(time.Duration(n)*time.Second, time.Minute)
		}
	}
	return resp.StatusCode, he
}

// explain adds what to do next to an API error.
func explain(err error, what string) error {
	var he *httpError
	if !errors.As(err, &he) {
		return err
	}
	if he.foreign && he.Status >= 400 && he.Status < 500 {
		return fmt.Errorf("%s: %w; this is not sparkpack's API answering: is %s sparkpack's address (http://HOST:PORT of serve's --listen; the demo prints it)? Set --server or SPARKPACK_SERVER", what, err, he.base)
	}
	switch he.Status {
	case http.StatusUnauthorized:
		return fmt.Errorf("%s: %w; this server needs a token: pass --token or set SPARKPACK_TOKEN", what, err)
	case http.StatusForbidden:
		return fmt.Errorf("%s: %w", what, err)
	case http.StatusTooManyRequests:
		return fmt.Errorf("%s: %w; wait a little and try again", what, err)
	case http.StatusServiceUnavailable:
		return fmt.Errorf("%s: %w; the server is up but cannot reach its database; try again when it is back (GET /readyz tells)", what, err)
	}
	return fmt.Errorf("%s: %w", what, err)
}
