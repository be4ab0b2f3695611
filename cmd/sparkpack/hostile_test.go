package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/sirupsen/logrus"
)

// The hostile-request run: malformed and mutated requests against both
// listeners of a real serve (PostgreSQL, tokens, --protect-reads, the
// Spark REST allowlist, the waiting cap): bodies, headers, paths, query
// strings, invalid UTF-8, huge numbers, deep nesting, oversized bodies,
// raw bytes on the socket. Nothing may answer 5xx or panic, and every 4xx
// of sparkpack's own handlers is a JSON error body in the listener's
// format.
//
// The suite sends a short run; SPARKPACK_FUZZ_REQUESTS=10000 (and
// optionally SPARKPACK_FUZZ_SEED) sends more: scripts/fuzz-listeners.sh.

const hostileTokens = `ops:ops-token-0123456789abcdef:admin
ci:ci-token-0123456789abcdef:submit,cancel
reader:reader-token-0123456789ab:read
`

var hostileSeedsAPI = []string{
	`{"name":"wordcount","app":{"appResource":"local:///opt/spark/examples/jars/spark-examples.jar","mainClass":"org.apache.spark.examples.JavaWordCount","args":["/data/in"],"sparkConf":{"spark.eventLog.enabled":"true"},"environment":{"A":"b"}},"executors":4,"executorCores":2,"executorMemoryMB":4096,"memoryOverheadMB":512,"driver":{"cores":1,"memoryMB":1024},"deadline":3600,"estimatedDurationSeconds":600,"retries":1,"labels":{"team":"analytics"}}`,
	`{"app":{"appResource":"local:///a.jar","mainClass":"a.B"},"executors":1,"executorCores":1,"executorMemoryMB":1024}`,
	`{"id":"6f1d2c1e-8a7b-4c1d-9e2f-3a4b5c6d7e8f","app":{"appResource":"hdfs:///x.jar","mainClass":"a.B"},"executors":2,"executorCores":1,"executorMemoryMB":512,"deadline":"2099-01-01T00:00:00Z"}`,
}

var hostileSeedsSpark = []string{
	sparkCreate,
	`{"action":"CreateSubmissionRequest","appArgs":[],"appResource":"local:///a.jar","clientSparkVersion":"3.5.8","environmentVariables":{"SPARK_SCALA_VERSION":"2.12"},"mainClass":"a.B","sparkProperties":{"spark.cores.max":"4","spark.executor.cores":"2","spark.executor.memory":"2g","spark.driver.memory":"1g","spark.sparkpack.deadline":"3600","spark.sparkpack.label.team":"x","spark.jars":"local:///a.jar,local:///b.jar"}}`,
}

// nasty fragments spliced into bodies, paths, queries and headers.
var nasty = []string{
	"\xff\xfe", "\xc3\x28", "\xed\xa0\x80", `\ud800`, `\udfff\ud800`, `\u0000`, "\x00", "\u202e", "\ufeff",
	"1e400", "-1e400", "99999999999999999999999999999", "-9223372036854775809", "0.0000000000000000000001", "NaN", "Infinity", "-0",
	`"`, `\`, `\"`, "{", "}", "[", "]", ",", ":", "null", "true", `""`, "[]", "{}",
	"../../etc/passwd", "%00", "%zz", "%", "%ff%fe", "%2e%2e%2f", "\r\n", "\n", " ", "\t", "?", "#", ";",
	"--conf=spark.mesos.role=*", "-c", "\u2014conf", "<script>alert(1)</script>", "'; DROP TABLE jobs; --",
	strings.Repeat("A", 5000), strings.Repeat("9", 400),
}

var jsonKeysAPI = []string{"id", "name", "app", "appResource", "mainClass", "args", "sparkConf", "environment", "executors", "executorCores",
	"executorMemoryMB", "memoryOverheadMB", "driver", "cores", "memoryMB", "deadline", "estimatedDurationSeconds", "retries", "labels", "state", "unknown"}

var jsonKeysSpark = []string{"action", "appArgs", "appResource", "clientSparkVersion", "environmentVariables", "mainClass", "sparkProperties",
	"spark.executor.instances", "spark.cores.max", "spark.executor.memory", "spark.sparkpack.id", "spark.sparkpack.deadline", "spark.mesos.role"}

type hostileReq struct {
	listener string // "api" or "spark-rest"
	method   string
	path     string // raw path and query, may be invalid
	header   [][2]string
	body     []byte
	raw      bool // written on the socket as is
}

type gen struct {
	r        *rand.Rand
	knownIDs []string
}

func (g *gen) pick(xs []string) string { return xs[g.r.IntN(len(xs))] }

// mutate applies 1-4 random mutations to a JSON seed.
func (g *gen) mutate(seed string, keys []string) []byte {
	b := []byte(seed)
	for n := 1 + g.r.IntN(4); n > 0; n-- {
		switch g.r.IntN(14) {
		case 0: // flip bytes
			for i := 0; i < 1+g.r.IntN(4) && len(b) > 0; i++ {
				b[g.r.IntN(len(b))] ^= byte(1 << g.r.IntN(8))
			}
		case 1: // truncate
			if len(b) > 0 {
				b = b[:g.r.IntN(len(b))]
			}
		case 2: // splice a nasty fragment
			i := g.r.IntN(len(b) + 1)
			b = append(b[:i:i], append([]byte(g.pick(nasty)), b[i:]...)...)
		case 3: // replace a value after a key by a nasty literal
			k := `"` + g.pick(keys) + `":`
			if i := bytes.Index(b, []byte(k)); i >= 0 {
				j := i + len(k)
				end := j
				for end < len(b) && b[end] != ',' && b[end] != '}' {
					end++
				}
				v := g.pick([]string{"1e400", "-1", "0", "99999999999999999999", "null", "true", `"x"`, "[]", "{}", `"\ud800"`, "\"\xff\"", `"` + strings.Repeat("x", 70000) + `"`, "1.5", "-0", "2147483648"})
				b = append(b[:j:j], append([]byte(v), b[end:]...)...)
			}
		case 4: // duplicate a key
			if i := bytes.IndexByte(b, '{'); i >= 0 {
				k := g.pick(keys)
				b = append(b[:i+1:i+1], append([]byte(`"`+k+`":1,`), b[i+1:]...)...)
			}
		case 5: // deep nesting
			d := 1 + g.r.IntN(20000)
			nest := strings.Repeat(`{"a":`, d) + "1" + strings.Repeat("}", d)
			if g.r.IntN(2) == 0 {
				nest = strings.Repeat("[", d) + strings.Repeat("]", d)
			}
			if i := bytes.Index(b, []byte(`"app":`)); i >= 0 && g.r.IntN(2) == 0 {
				b = append(b[:i+6:i+6], append([]byte(nest+`,"x":`), b[i+6:]...)...)
			} else {
				b = []byte(nest)
			}
		case 6: // wrong type at the top
			b = []byte(g.pick([]string{"[]", "null", `"job"`, "42", "true", "", " ", "{", "}{", `{"a":1}{"b":2}`, "{}", `{"":""}`}))
		case 7: // random bytes
			b = make([]byte, g.r.IntN(600))
			for i := range b {
				b[i] = byte(g.r.UintN(256))
			}
		case 8: // unknown fields
			if i := bytes.IndexByte(b, '{'); i >= 0 {
				b = append(b[:i+1:i+1], append([]byte(fmt.Sprintf(`"x%d":{"y":[1,2,{"z":null}]},`, g.r.IntN(1000))), b[i+1:]...)...)
			}
		case 9: // oversized
			pad := strings.Repeat("p", 1<<20+g.r.IntN(1000))
			if i := bytes.IndexByte(b, '{'); i >= 0 {
				b = append(b[:i+1:i+1], append([]byte(`"name":"`+pad+`",`), b[i+1:]...)...)
			}
		case 10: // huge arrays
			var sb strings.Builder
			sb.WriteString(`{"app":{"appResource":"local:///a.jar","mainClass":"a.B","args":[`)
			for i := 0; i < 1+g.r.IntN(20000); i++ {
				if i > 0 {
					sb.WriteByte(',')
				}
				sb.WriteString(`"a"`)
			}
			sb.WriteString(`]},"executors":1,"executorCores":1,"executorMemoryMB":1024}`)
			b = []byte(sb.String())
		case 11: // many labels / properties
			var sb strings.Builder
			sb.WriteString(`{"labels":{`)
			for i := 0; i < 1+g.r.IntN(5000); i++ {
				if i > 0 {
					sb.WriteByte(',')
				}
				fmt.Fprintf(&sb, `"k%d":"v"`, i)
			}
			sb.WriteString(`},`)
			b = append([]byte(sb.String()), bytes.TrimPrefix(b, []byte("{"))...)
		case 12: // escaped control characters and invalid escapes
			b = bytes.Replace(b, []byte(`"a.B"`), []byte(g.pick([]string{`"a\u0000B"`, `"a\qB"`, `"a\u12"`, "\"a\nB\"", `"\ud83d\ude00"`, `"\udc00"`})), 1)
		case 13: // reuse a known id
			if len(g.knownIDs) > 0 {
				b = bytes.Replace(b, []byte(`"app":`), []byte(`"id":"`+g.pick(g.knownIDs)+`","app":`), 1)
			}
		}
	}
	return b
}

func (g *gen) id() string {
	switch g.r.IntN(8) {
	case 0, 1, 2:
		if len(g.knownIDs) > 0 {
			id := g.pick(g.knownIDs)
			if g.r.IntN(3) == 0 {
				id = strings.ToUpper(id)
			}
			return id
		}
		return uuid.NewString()
	case 3:
		return uuid.NewString()
	case 4:
		return g.pick(nasty)
	case 5:
		return "driver-20261122120000-0001"
	case 6:
		return uuid.NewString() + g.pick([]string{"x", "/", "%2F", "/extra/path", "\xff"})
	}
	return strings.Repeat("6f1d2c1e-", 1+g.r.IntN(50))
}

func (g *gen) query() string {
	keys := []string{"state", "label", "limit", "cursor", "bogus", "", "state[]", "limit"}
	vals := append([]string{"QUEUED", "RUNNING,FAILED", "queued", "team=a", "=", "team", "0", "1", "1000", "1001", "-1",
		"99999999999999999999", "1e3", "bmV4dDo5", "next:-1", "next:99999999999999999999", "next:abc"}, nasty...)
	var parts []string
	for i := 0; i < g.r.IntN(5); i++ {
		parts = append(parts, g.pick(keys)+"="+g.pick(vals))
	}
	if len(parts) == 0 {
		return ""
	}
	return "?" + strings.Join(parts, "&")
}

func (g *gen) headers(listener string) [][2]string {
	var h [][2]string
	switch g.r.IntN(10) {
	case 0:
	case 1:
		h = append(h, [2]string{"Content-Type", g.pick([]string{"text/plain", "application/json; charset=latin1", "application/xml", "application/json;;", "multipart/form-data; boundary=x", "*/*", strings.Repeat("a", 3000)})})
	default:
		h = append(h, [2]string{"Content-Type", "application/json"})
	}
	switch g.r.IntN(10) {
	case 0, 1, 2, 3:
		h = append(h, [2]string{"Authorization", "Bearer ops-token-0123456789abcdef"})
	case 4:
		h = append(h, [2]string{"Authorization", "Bearer ci-token-0123456789abcdef"})
	case 5:
		h = append(h, [2]string{"Authorization", "Bearer reader-token-0123456789ab"})
	case 6:
		h = append(h, [2]string{"Authorization", g.pick([]string{"Bearer", "Bearer ", "bearer ops-token-0123456789abcdef", "Basic b3BzOng=", "Bearer " + strings.Repeat("t", 8000),
			"Bearer ops-token-0123456789abcdef ops-token-0123456789abcdef", "Token x", "Bearer \x01\x02", "Bearer wrong-token-0123456789abcdef"})})
	}
	if g.r.IntN(5) == 0 {
		h = append(h, [2]string{"X-Request-Id", g.pick(append([]string{"ok-id-1", strings.Repeat("r", 200), "../../x"}, nasty...))})
	}
	if g.r.IntN(10) == 0 {
		h = append(h, [2]string{"Accept", g.pick([]string{"text/event-stream", "*/*", "application/json", "\xff"})})
	}
	return h
}

func (g *gen) next() hostileReq {
	spark := g.r.IntN(2) == 0
	q := hostileReq{listener: "api", header: nil}
	if spark {
		q.listener = "spark-rest"
	}
	q.header = g.headers(q.listener)
	if spark {
		switch g.r.IntN(10) {
		case 0, 1, 2, 3, 4:
			q.method, q.path = "POST", "/v1/submissions/create"
			q.body = g.mutate(g.pick(hostileSeedsSpark), jsonKeysSpark)
		case 5, 6:
			q.method, q.path = "POST", "/v1/submissions/kill/"+g.id()
		case 7:
			q.method, q.path = "GET", "/v1/submissions/status/"+g.id()
		case 8:
			q.method = g.pick([]string{"PUT", "DELETE", "PATCH", "OPTIONS", "GET", "POST", "HEAD"})
			q.path = g.pick([]string{"/", "/v1", "/v2/submissions/create", "/v1/submissions", "/v1/submissions/", "/v1/submissions/create/extra", "/v1/submissions/status/", "/v1/submissions/kill", "//v1//submissions//create", "/v1/submissions/bogus"})
			if g.r.IntN(2) == 0 {
				q.body = g.mutate(g.pick(hostileSeedsSpark), jsonKeysSpark)
			}
		default:
			q.method, q.path = "POST", "/v1/submissions/create"+g.query()
			q.body = []byte(g.pick(hostileSeedsSpark))
		}
	} else {
		switch g.r.IntN(10) {
		case 0, 1, 2, 3, 4:
			q.method, q.path = "POST", "/api/v1/jobs"+g.pick([]string{"", "", "", g.query()})
			q.body = g.mutate(g.pick(hostileSeedsAPI), jsonKeysAPI)
		case 5:
			q.method, q.path = "DELETE", "/api/v1/jobs/"+g.id()
		case 6:
			q.method, q.path = "GET", "/api/v1/jobs/"+g.id()
		case 7:
			q.method, q.path = "GET", "/api/v1/jobs"+g.query()
		case 8:
			q.method, q.path = "GET", g.pick([]string{"/metrics", "/healthz", "/readyz", "/", "/static/app.js", "/static/../../etc/passwd", "/api/v1/cluster", "/api/v1/queues", "/api/v1/cost"})
		default:
			q.method = g.pick([]string{"PUT", "PATCH", "OPTIONS", "POST", "DELETE", "GET"})
			q.path = g.pick([]string{"/api/v1/jobs/", "/api/v1/jobs/a/b", "/api/v2/jobs", "/api/v1/jobs?" + g.pick(nasty), "/api//v1/jobs", "/api/v1/jobs/%2e%2e"})
			if g.r.IntN(2) == 0 {
				q.body = g.mutate(g.pick(hostileSeedsAPI), jsonKeysAPI)
			}
		}
	}
	// A fifth go on the socket as raw bytes: invalid UTF-8 and control
	// characters in the request line and headers, bad encodings.
	if g.r.IntN(5) == 0 {
		q.raw = true
		switch g.r.IntN(6) {
		case 0:
			q.path += g.pick(nasty)
		case 1:
			q.header = append(q.header, [2]string{"X-Bad", g.pick(nasty)})
		case 2:
			q.header = append(q.header, [2]string{g.pick([]string{"Bad Name", "\xff", "X\x00", ""}), "v"})
		case 3:
			q.header = append(q.header, [2]string{"Transfer-Encoding", g.pick([]string{"chunked", "gzip", "identity, chunked", "\xff"})})
		case 4:
			q.header = append(q.header, [2]string{"Content-Length", g.pick([]string{"-1", "99999999999999999999", "1e3", "abc", "5, 6"})})
		case 5:
			q.method = g.pick([]string{"G\xffT", "get", "POST ", "BREW", strings.Repeat("P", 300)})
		}
	}
	return q
}

type hostileResult struct {
	status  int
	body    []byte
	ctype   string
	noReply bool
	err     error
}

func sendRaw(addr string, q hostileReq) hostileResult {
	conn, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		return hostileResult{err: err}
	}
	defer conn.Close()
	// A request that declares more body than it sends keeps the server
	// reading until its ReadTimeout: that is not an answer to wait for.
	conn.SetDeadline(time.Now().Add(5 * time.Second))
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n", q.method, q.path, addr)
	hasLen, hasTE := false, false
	for _, h := range q.header {
		fmt.Fprintf(&b, "%s: %s\r\n", h[0], h[1])
		hasLen = hasLen || strings.EqualFold(h[0], "Content-Length")
		hasTE = hasTE || strings.EqualFold(h[0], "Transfer-Encoding")
	}
	if !hasLen && !hasTE {
		fmt.Fprintf(&b, "Content-Length: %d\r\n", len(q.body))
	}
	b.WriteString("\r\n")
	b.Write(q.body)
	if _, err := conn.Write(b.Bytes()); err != nil {
		// The server may answer and close before reading everything.
		_ = err
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return hostileResult{noReply: true, err: err}
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return hostileResult{status: resp.StatusCode, body: body, ctype: resp.Header.Get("Content-Type")}
}

func sendClient(client *http.Client, addr string, q hostileReq) hostileResult {
	req, err := http.NewRequest(q.method, "http://"+addr+"/", bytes.NewReader(q.body))
	if err != nil {
		return hostileResult{err: err}
	}
	req.URL.Opaque = q.path // sent as written, not re-encoded
	if i := strings.IndexByte(q.path, '?'); i >= 0 {
		req.URL.Opaque, req.URL.RawQuery = q.path[:i], q.path[i+1:]
	}
	for _, h := range q.header {
		req.Header.Add(h[0], h[1])
	}
	resp, err := client.Do(req)
	if err != nil {
		return hostileResult{err: err}
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return hostileResult{status: resp.StatusCode, body: body, ctype: resp.Header.Get("Content-Type")}
}

// panicHook remembers error-level log lines that speak of a panic.
type panicHook struct {
	mu     sync.Mutex
	panics []string
	errors int
}

func (h *panicHook) Levels() []logrus.Level {
	return []logrus.Level{logrus.PanicLevel, logrus.FatalLevel, logrus.ErrorLevel}
}
func (h *panicHook) Fire(e *logrus.Entry) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.errors++
	if strings.Contains(strings.ToLower(e.Message), "panic") {
		h.panics = append(h.panics, e.Message)
	}
	return nil
}

func TestHostileRequests(t *testing.T) {
	n := 600
	if v := os.Getenv("SPARKPACK_FUZZ_REQUESTS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1 {
			t.Fatalf("SPARKPACK_FUZZ_REQUESTS=%q: want a number of requests", v)
		}
	}
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv("SPARKPACK_FUZZ_SEED"); v != "" {
		seed, _ = strconv.ParseUint(v, 10, 64)
	}
	t.Logf("hostile requests: %d, seed %d (SPARKPACK_FUZZ_SEED=%d replays it)", n, seed, seed)

	dir := t.TempDir()
	tokens := filepath.Join(dir, "hostile-tokens")
	if err := os.WriteFile(tokens, []byte(hostileTokens), 0o600); err != nil {
		t.Fatal(err)
	}
	log := logrus.New()
	log.SetOutput(io.Discard)
	log.SetLevel(logrus.DebugLevel) // net/http's recovered panics are logged as errors
	hook := &panicHook{}
	log.AddHook(hook)
	apiAddr, sparkAddr := secureServeLog(t, log, func(c *serveConfig) {
		c.tokensFile = tokens
		c.rateLimit = "0" // every request reaches the handlers
		c.maxWaiting = "1000000"
	})

	client := &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 16}}
	// A few jobs to aim kills, statuses and resubmissions at.
	g0 := &gen{r: rand.New(rand.NewPCG(seed, 1))}
	for i := 0; i < 5; i++ {
		res := sendClient(client, apiAddr, hostileReq{method: "POST", path: "/api/v1/jobs", body: []byte(hostileSeedsAPI[1]),
			header: [][2]string{{"Content-Type", "application/json"}, {"Authorization", "Bearer ci-token-0123456789abcdef"}}})
		var m map[string]any
		if res.status != 201 || json.Unmarshal(res.body, &m) != nil {
			t.Fatalf("seed job: %d %s %v", res.status, res.body, res.err)
		}
		g0.knownIDs = append(g0.knownIDs, m["id"].(string))
	}

	var (
		sent, fiveXX, noReply, clientErr, badBody, netHTTP501, transportErr atomic.Int64
		mu                                                                  sync.Mutex
		statuses                                                            = map[string]int{}
		examples, noReplies                                                 []string
	)
	work := make(chan hostileReq)
	var wg sync.WaitGroup
	start := time.Now()
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for q := range work {
				addr := apiAddr
				if q.listener == "spark-rest" {
					addr = sparkAddr
				}
				var res hostileResult
				if q.raw {
					res = sendRaw(addr, q)
				} else if res = sendClient(client, addr, q); res.err != nil {
					// Go's client refuses to send some of them (invalid
					// header values, methods): they go on the socket as is.
					clientErr.Add(1)
					q.raw = true
					res = sendRaw(addr, q)
				}
				c := sent.Add(1)
				if c%2000 == 0 {
					t.Logf("... %d requests sent", c)
				}
				mu.Lock()
				key := fmt.Sprintf("%s %d", q.listener, res.status)
				switch {
				case res.noReply:
					key = q.listener + " no reply (connection closed)"
					noReply.Add(1)
				case res.err != nil:
					key = q.listener + " transport error"
					transportErr.Add(1)
				}
				statuses[key]++
				bad := ""
				switch {
				case res.err == nil && res.status == 501 && q.raw && string(res.body) == "Unsupported transfer encoding" && unknownTE(q):
					// net/http answers a transfer coding it does not know
					// before any handler runs (RFC 9112 6.1): counted apart.
					netHTTP501.Add(1)
				case res.err == nil && res.status >= 500:
					fiveXX.Add(1)
					bad = "5xx"
				}
				if res.noReply && len(noReplies) < 5 {
					noReplies = append(noReplies, fmt.Sprintf("%s %s %q headers %q body %d bytes: %v", q.listener, q.method, truncateBytes([]byte(q.path), 80), q.header, len(q.body), res.err))
				}
				// sparkpack's own 4xx answers are JSON in the listener's format
				// (net/http's own 400s for unparsable requests are plain text).
				if res.err == nil && res.status >= 400 && res.status < 500 && q.method != "HEAD" && strings.HasPrefix(res.ctype, "application/json") {
					var m map[string]any
					ok := json.Unmarshal(res.body, &m) == nil
					if q.listener == "api" {
						ok = ok && m["error"] != nil
					} else {
						ok = ok && m["action"] == "ErrorResponse" && m["message"] != nil
					}
					if !ok {
						badBody.Add(1)
						bad = "malformed error body"
					}
				}
				if bad != "" && len(examples) < 10 {
					examples = append(examples, fmt.Sprintf("%s: %s %s %q (raw %v) -> %d %.300s", bad, q.listener, q.method, truncateBytes([]byte(q.path), 120), q.raw, res.status, res.body))
				}
				mu.Unlock()
			}
		}()
	}
	g := &gen{r: rand.New(rand.NewPCG(seed, 2)), knownIDs: g0.knownIDs}
	for i := 0; i < n; i++ {
		work <- g.next()
	}
	close(work)
	wg.Wait()
	elapsed := time.Since(start)

	keys := make([]string, 0, len(statuses))
	for k := range statuses {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var lines []string
	for _, k := range keys {
		lines = append(lines, fmt.Sprintf("  %-45s %6d", k, statuses[k]))
	}
	hook.mu.Lock()
	panics, errs := hook.panics, hook.errors
	hook.mu.Unlock()
	t.Logf("sent %d hostile requests in %s (%.0f/s): 5xx from sparkpack %d, panics %d, malformed error bodies %d; "+
		"net/http's own 501 for an unknown Transfer-Encoding %d, no reply within 5 s (a body announced but not sent: the server waits for it) %d, "+
		"sent raw because Go's client refused them %d, transport errors %d, error log lines %d\n%s\nno reply examples:\n  %s",
		sent.Load(), elapsed.Round(time.Millisecond), float64(sent.Load())/elapsed.Seconds(), fiveXX.Load(), len(panics), badBody.Load(),
		netHTTP501.Load(), noReply.Load(), clientErr.Load(), transportErr.Load(), errs, strings.Join(lines, "\n"), strings.Join(noReplies, "\n  "))
	if int(sent.Load()) != n {
		t.Fatalf("sent %d of %d", sent.Load(), n)
	}
	if fiveXX.Load() > 0 || len(panics) > 0 || badBody.Load() > 0 || transportErr.Load() > 0 {
		t.Fatalf("%d answers 5xx, %d panics %v, %d malformed error bodies, %d transport errors; examples:\n%s", fiveXX.Load(), len(panics), panics, badBody.Load(), transportErr.Load(), strings.Join(examples, "\n"))
	}
	// Both listeners still serve.
	if res := sendClient(client, apiAddr, hostileReq{method: "GET", path: "/healthz"}); res.status != 200 {
		t.Fatalf("API after the run: %d %v", res.status, res.err)
	}
	if res := sendClient(client, sparkAddr, hostileReq{method: "GET", path: "/v1/submissions/status/" + g0.knownIDs[0]}); res.status != 200 {
		t.Fatalf("Spark REST after the run: %d %v", res.status, res.err)
	}
}

// unknownTE reports whether q carries a Transfer-Encoding net/http does
// not implement (anything but chunked).
func unknownTE(q hostileReq) bool {
	for _, h := range q.header {
		if strings.EqualFold(h[0], "Transfer-Encoding") && h[1] != "chunked" {
			return true
		}
	}
	return false
}

func truncateBytes(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "..."
	}
	return string(b)
}
