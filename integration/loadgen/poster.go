package loadgen

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// poster submits jobs over one kept-alive HTTP/1.1 connection, writing the
// request bytes itself and reading the answer with net/http's parser. A
// burst's clients use one each instead of http.Client: on a 2-core machine
// that shares its cpus with sparkpack and PostgreSQL, the standard client's
// per-request goroutine hand-offs cost about as much cpu as sparkpack's own
// handling of a submission, which made the load generator, not the server,
// a large part of what was measured (pgbench, the raw limit it is compared
// with, is a lean C client). It speaks plain HTTP only; the burst falls
// back to http.Client for https.
type poster struct {
	addr, host, token string
	base              string // the API's path prefix, if any
	timeout           time.Duration
	conn              net.Conn
	br                *bufio.Reader
	bw                *bufio.Writer
}

// newPoster returns a poster for api, or nil when api is not plain http.
func newPoster(api, token string, timeout time.Duration) *poster {
	u, err := url.Parse(api)
	if err != nil || u.Scheme != "http" || u.Host == "" {
		return nil
	}
	addr := u.Host
	if u.Port() == "" {
		addr = net.JoinHostPort(u.Hostname(), "80")
	}
	return &poster{addr: addr, host: u.Host, token: token, timeout: timeout, base: strings.TrimSuffix(u.Path, "/")}
}

func (p *poster) close() {
	if p.conn != nil {
		p.conn.Close()
		p.conn = nil
	}
}

// post sends body to POST path and returns the status and the answer's
// body. On any error the connection is dropped (the next post dials anew).
func (p *poster) post(ctx context.Context, path string, body []byte) (int, []byte, error) {
	if p.conn == nil {
		var d net.Dialer
		conn, err := d.DialContext(ctx, "tcp", p.addr)
		if err != nil {
			return 0, nil, err
		}
		p.conn, p.br, p.bw = conn, bufio.NewReaderSize(conn, 8192), bufio.NewWriterSize(conn, 8192)
	}
	if p.timeout > 0 {
		_ = p.conn.SetDeadline(time.Now().Add(p.timeout))
	}
	w := p.bw
	w.WriteString("POST ")
	w.WriteString(p.base)
	w.WriteString(path)
	w.WriteString(" HTTP/1.1\r\nHost: ")
	w.WriteString(p.host)
	w.WriteString("\r\nUser-Agent: sparkpack-load\r\nContent-Type: application/json\r\nContent-Length: ")
	w.WriteString(strconv.Itoa(len(body)))
	if p.token != "" {
		w.WriteString("\r\nAuthorization: Bearer ")
		w.WriteString(p.token)
	}
	w.WriteString("\r\n\r\n")
	w.Write(body)
	if err := w.Flush(); err != nil {
		p.close()
		return 0, nil, fmt.Errorf("POST %s: %w", path, err)
	}
	resp, err := http.ReadResponse(p.br, nil)
	if err != nil {
		p.close()
		return 0, nil, fmt.Errorf("POST %s: read the answer: %w", path, err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.Close {
		p.close()
	}
	if err != nil {
		return 0, nil, fmt.Errorf("POST %s: read the answer: %w", path, err)
	}
	return resp.StatusCode, b, nil
}
