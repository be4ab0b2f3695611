// Package loadgen drives a running sparkpack over its REST API the way a
// busy cluster's users would, and measures what the scale targets name:
// submissions per second and their latency, how soon stored jobs are
// queued, how fast the queue view answers, how soon a small job starts
// while many wait, and sparkpack's memory. cmd/sparkpack-load and
// scripts/bench-scale.sh run it at full size; the integration tests run a
// small version. It talks HTTP and, for event timestamps, SQL; it must not
// import sparkpack's internals beyond the job JSON.
package loadgen

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lib/pq"

	"github.com/sparkpack/sparkpack/internal/jsontext"
)

// Client talks to one sparkpack API.
type Client struct {
	API   string
	Token string
	HTTP  *http.Client
}

// NewClient makes a client with enough idle connections for conns
// concurrent requests.
func NewClient(api, token string, conns int) *Client {
	tr := &http.Transport{MaxIdleConns: conns * 2, MaxIdleConnsPerHost: conns * 2, IdleConnTimeout: time.Minute}
	return &Client{API: strings.TrimRight(api, "/"), Token: token, HTTP: &http.Client{Transport: tr, Timeout: 60 * time.Second}}
}

func (c *Client) do(ctx context.Context, method, path string, body []byte) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.API+path, rd)
	if err != nil {
		return 0, nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// GetJSON reads path into out.
func (c *Client) GetJSON(ctx context.Context, path string, out any) error {
	code, b, err := c.do(ctx, http.MethodGet, path, nil)
	if err != nil {
		return fmt.Errorf("GET %s: %w", path, err)
	}
	if code != http.StatusOK {
		return fmt.Errorf("GET %s: HTTP %d: %s", path, code, truncate(b))
	}
	return json.Unmarshal(b, out)
}

// GetRaw reads path and returns the size of the body (an error unless 200).
func (c *Client) GetRaw(ctx context.Context, path string) (int, error) {
	code, b, err := c.do(ctx, http.MethodGet, path, nil)
	if err != nil {
		return 0, fmt.Errorf("GET %s: %w", path, err)
	}
	if code != http.StatusOK {
		return 0, fmt.Errorf("GET %s: HTTP %d: %s", path, code, truncate(b))
	}
	return len(b), nil
}

// Submit posts one job; it returns the HTTP status.
func (c *Client) Submit(ctx context.Context, job map[string]any) (int, error) {
	b, err := json.Marshal(job)
	if err != nil {
		return 0, err
	}
	return c.submitBody(ctx, b)
}

// SubmitBody posts one encoded job.
func (c *Client) SubmitBody(ctx context.Context, b []byte) error {
	_, err := c.submitBody(ctx, b)
	return err
}

func (c *Client) submitBody(ctx context.Context, b []byte) (int, error) {
	code, body, err := c.do(ctx, http.MethodPost, "/api/v1/jobs", b)
	if err != nil {
		return 0, err
	}
	if code != http.StatusCreated && code != http.StatusOK {
		return code, fmt.Errorf("POST /api/v1/jobs: HTTP %d: %s", code, truncate(body))
	}
	return code, nil
}

// submitOn posts one encoded job over pc.
func (c *Client) submitOn(ctx context.Context, pc *poster, b []byte) error {
	code, body, err := pc.post(ctx, "/api/v1/jobs", b)
	if err != nil {
		return err
	}
	if code != http.StatusCreated && code != http.StatusOK {
		return fmt.Errorf("POST /api/v1/jobs: HTTP %d: %s", code, truncate(body))
	}
	return nil
}

func truncate(b []byte) string {
	if len(b) > 300 {
		b = b[:300]
	}
	return strings.TrimSpace(string(b))
}

// NewID returns a random UUID (clients send their own ids so that retries
// are idempotent).
func NewID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// Job is a Spark job body of e executors of cores cpus and memMB MiB.
func Job(id, name string, e, cores, memMB int, estimateSeconds float64) map[string]any {
	return map[string]any{
		"id": id, "name": name,
		"app": map[string]any{
			"appResource": "local:///opt/spark/examples/jars/spark-examples.jar",
			"mainClass":   "org.apache.spark.examples.SparkPi",
		},
		"executors": e, "executorCores": cores, "executorMemoryMB": memMB,
		"estimatedDurationSeconds": estimateSeconds,
	}
}

// JobBody is Job encoded: the same JSON object (fields in another order),
// built without encoding/json, for generators that submit thousands a
// second.
func JobBody(id, name string, e, cores, memMB int, estimateSeconds float64) []byte {
	b := make([]byte, 0, 320)
	b = append(b, `{"id":`...)
	b = jsontext.AppendString(b, id)
	b = append(b, `,"name":`...)
	b = jsontext.AppendString(b, name)
	b = append(b, `,"app":{"appResource":"local:///opt/spark/examples/jars/spark-examples.jar","mainClass":"org.apache.spark.examples.SparkPi"},"executors":`...)
	b = strconv.AppendInt(b, int64(e), 10)
	b = append(b, `,"executorCores":`...)
	b = strconv.AppendInt(b, int64(cores), 10)
	b = append(b, `,"executorMemoryMB":`...)
	b = strconv.AppendInt(b, int64(memMB), 10)
	b = append(b, `,"estimatedDurationSeconds":`...)
	b = strconv.AppendFloat(b, estimateSeconds, 'g', -1, 64)
	return append(b, '}')
}

// Burst configures a run of submissions.
type Burst struct {
	Clients  int           // concurrent submitters
	Duration time.Duration // stop after this long (0: only MaxJobs)
	MaxJobs  int           // stop after this many (0: only Duration)
	Rate     float64       // submissions per second in all (0: as fast as possible)
	// Body returns the i-th job's id and its encoded body (JobBody builds
	// one without encoding/json, which matters at thousands a second).
	Body func(i int) (id string, body []byte)
	// Progress, if set, is called about once a second.
	Progress func(sent int, elapsed time.Duration)
	// Stop, if set, is polled about once a second; true ends the burst.
	Stop func() bool
}

// BurstResult is what a burst measured.
type BurstResult struct {
	Sent, OK, Failed int
	FirstError       string
	Elapsed          time.Duration
	Latencies        []time.Duration // of the successful submissions
	IDs              []string        // of the successful submissions
	PostedAt         []time.Time     // when each successful submission was answered
}

// PerSecond is the rate of successful submissions.
func (r BurstResult) PerSecond() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.OK) / r.Elapsed.Seconds()
}

// RunBurst submits jobs from b.Clients goroutines until a limit is reached.
func (c *Client) RunBurst(ctx context.Context, b Burst) BurstResult {
	if b.Clients <= 0 {
		b.Clients = 1
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if b.Duration > 0 {
		var c2 context.CancelFunc
		ctx, c2 = context.WithTimeout(ctx, b.Duration)
		defer c2()
	}
	var next atomic.Int64
	var mu sync.Mutex
	var res BurstResult
	start := time.Now()
	var wg sync.WaitGroup
	for w := 0; w < b.Clients; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pc := newPoster(c.API, c.Token, c.HTTP.Timeout)
			if pc != nil {
				defer pc.close()
			}
			for {
				if ctx.Err() != nil {
					return
				}
				i := int(next.Add(1)) - 1
				if b.MaxJobs > 0 && i >= b.MaxJobs {
					return
				}
				if b.Rate > 0 {
					// The i-th submission is due at start + i/rate.
					due := start.Add(time.Duration(float64(i) / b.Rate * float64(time.Second)))
					if d := time.Until(due); d > 0 {
						select {
						case <-ctx.Done():
							return
						case <-time.After(d):
						}
					}
				}
				id, body := b.Body(i)
				t0 := time.Now()
				var err error
				if pc != nil {
					err = c.submitOn(ctx, pc, body)
				} else {
					err = c.SubmitBody(ctx, body)
				}
				lat := time.Since(t0)
				if err != nil && ctx.Err() != nil {
					return // the burst ended while this one was in flight
				}
				mu.Lock()
				res.Sent++
				if err != nil {
					res.Failed++
					if res.FirstError == "" {
						res.FirstError = err.Error()
					}
				} else {
					res.OK++
					res.Latencies = append(res.Latencies, lat)
					res.IDs = append(res.IDs, id)
					res.PostedAt = append(res.PostedAt, time.Now())
				}
				mu.Unlock()
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-done:
			res.Elapsed = time.Since(start)
			return res
		case <-tick.C:
			mu.Lock()
			sent := res.Sent
			mu.Unlock()
			if b.Progress != nil {
				b.Progress(sent, time.Since(start))
			}
			if b.Stop != nil && b.Stop() {
				cancel()
			}
		}
	}
}

// Percentile is the p-th percentile (0..100) of ds (nearest rank).
func Percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	k := int(math.Ceil(p/100*float64(len(s)))) - 1
	return s[max(0, min(k, len(s)-1))]
}

// Totals are the queue lengths of GET /api/v1/queues.
type Totals struct {
	Deadline int `json:"deadline"`
	Regular  int `json:"regular"`
	Intake   int `json:"intake"`
}

// QueueTotals reads the queues' lengths (one small page).
func (c *Client) QueueTotals(ctx context.Context) (Totals, error) {
	var v struct {
		Totals Totals `json:"totals"`
	}
	err := c.GetJSON(ctx, "/api/v1/queues?limit=1", &v)
	return v.Totals, err
}

// TimeGets times n GETs of path from conc goroutines.
func (c *Client) TimeGets(ctx context.Context, path string, n, conc int) ([]time.Duration, error) {
	var mu sync.Mutex
	var out []time.Duration
	var firstErr error
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < conc; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for int(next.Add(1)) <= n {
				t0 := time.Now()
				code, _, err := c.do(ctx, http.MethodGet, path, nil)
				d := time.Since(t0)
				mu.Lock()
				if err == nil && code != http.StatusOK {
					err = fmt.Errorf("GET %s: HTTP %d", path, code)
				}
				if err != nil && firstErr == nil {
					firstErr = err
				}
				out = append(out, d)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return out, firstErr
}

// JobEvent is one event of a job.
type JobEvent struct {
	At   time.Time `json:"at"`
	To   string    `json:"to"`
	From string    `json:"from"`
}

// JobState is a job's state with its events.
type JobState struct {
	ID          string     `json:"id"`
	State       string     `json:"state"`
	SubmittedAt time.Time  `json:"submittedAt"`
	Reason      string     `json:"waitingReason"`
	Events      []JobEvent `json:"events"`
}

// WaitFor polls a job until it reaches one of the states or ctx ends.
func (c *Client) WaitFor(ctx context.Context, id string, states ...string) (JobState, error) {
	var j JobState
	for {
		err := c.GetJSON(ctx, "/api/v1/jobs/"+id, &j)
		if err == nil && slices.Contains(states, j.State) {
			return j, nil
		}
		select {
		case <-ctx.Done():
			return j, fmt.Errorf("job %s is %s (%s), not %v: %w", id, j.State, j.Reason, states, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// EventAt is when the job first entered state to (zero when it did not).
func (j JobState) EventAt(to string) time.Time {
	for _, e := range j.Events {
		if e.To == to {
			return e.At
		}
	}
	return time.Time{}
}

// IntakeLag reads, for the given jobs, the time from their submission
// (stored) to their admission to a queue (QUEUED), from the database. A job
// stored QUEUED at once (the core decided at submission) has no lag. Jobs
// not queued yet are counted in notQueued.
func IntakeLag(ctx context.Context, db *sql.DB, ids []string) (lags []time.Duration, notQueued int, err error) {
	for start := 0; start < len(ids); start += 10000 {
		chunk := ids[start:min(start+10000, len(ids))]
		// submit_state and submitted_at record the submission (migration
		// 0009); jobs stored before it have their submission as events.
		rows, err := db.QueryContext(ctx, `SELECT j.submit_state, coalesce(s.at, j.submitted_at), q.at FROM jobs j
			LEFT JOIN job_events s ON s.job_id = j.id AND s.to_state = 'SUBMITTED' AND s.from_state IS NULL
			LEFT JOIN LATERAL (SELECT min(at) AS at FROM job_events WHERE job_id = j.id AND to_state = 'QUEUED') q ON true
			WHERE j.id = ANY($1::uuid[])`, pq.Array(chunk))
		if err != nil {
			return nil, 0, fmt.Errorf("read intake events: %w", err)
		}
		for rows.Next() {
			var state string
			var s time.Time
			var q sql.NullTime
			if err := rows.Scan(&state, &s, &q); err != nil {
				rows.Close()
				return nil, 0, err
			}
			switch {
			case state == "QUEUED":
				lags = append(lags, 0)
			case !q.Valid:
				notQueued++
			default:
				lags = append(lags, q.Time.Sub(s))
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, 0, err
		}
	}
	return lags, notQueued, nil
}

// Metric reads one sample of a Prometheus text exposition (the first line
// of that name whose labels contain every one given, e.g. `le="0.1"`).
func (c *Client) Metric(ctx context.Context, name string, labels ...string) (float64, bool, error) {
	code, b, err := c.do(ctx, http.MethodGet, "/metrics", nil)
	if err != nil {
		return 0, false, err
	}
	if code != http.StatusOK {
		return 0, false, fmt.Errorf("GET /metrics: HTTP %d", code)
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
lines:
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, name) || strings.HasPrefix(line, "#") {
			continue
		}
		rest := line[len(name):]
		if rest != "" && rest[0] != ' ' && rest[0] != '{' {
			continue
		}
		for _, l := range labels {
			if !strings.Contains(rest, l) {
				continue lines
			}
		}
		f := strings.Fields(rest)
		v, err := strconv.ParseFloat(f[len(f)-1], 64)
		if err != nil {
			return 0, false, fmt.Errorf("metric %s: %w", name, err)
		}
		return v, true, nil
	}
	return 0, false, sc.Err()
}

// Bucket is one cumulative bucket of a Prometheus histogram.
type Bucket struct {
	LE    float64
	Count float64
}

// HistogramQuantile reads a histogram from /metrics (the series whose
// labels contain label) and returns the upper bound of the bucket that
// holds quantile q, and the number of observations.
func (c *Client) HistogramQuantile(ctx context.Context, name, label string, q float64) (bound, count float64, err error) {
	code, b, err := c.do(ctx, http.MethodGet, "/metrics", nil)
	if err != nil {
		return 0, 0, err
	}
	if code != http.StatusOK {
		return 0, 0, fmt.Errorf("GET /metrics: HTTP %d", code)
	}
	var buckets []Bucket
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, name+"_bucket{") || !strings.Contains(line, label) {
			continue
		}
		i := strings.Index(line, `le="`)
		if i < 0 {
			continue
		}
		rest := line[i+4:]
		le, after, ok := strings.Cut(rest, `"`)
		if !ok {
			continue
		}
		f := strings.Fields(after)
		n, err := strconv.ParseFloat(f[len(f)-1], 64)
		if err != nil {
			continue
		}
		bound := math.Inf(1)
		if le != "+Inf" {
			if bound, err = strconv.ParseFloat(le, 64); err != nil {
				continue
			}
		}
		buckets = append(buckets, Bucket{LE: bound, Count: n})
	}
	if len(buckets) == 0 {
		return math.NaN(), 0, sc.Err()
	}
	slices.SortFunc(buckets, func(a, b Bucket) int {
		switch {
		case a.LE < b.LE:
			return -1
		case a.LE > b.LE:
			return 1
		}
		return 0
	})
	count = buckets[len(buckets)-1].Count
	for _, bk := range buckets {
		if count > 0 && bk.Count >= q*count {
			return bk.LE, count, nil
		}
	}
	return math.NaN(), count, nil
}

// Events reads the server-sent event stream /api/v1/events until ctx ends
// or the stream closes, calling fn with each event's name and data.
func (c *Client) Events(ctx context.Context, fn func(name string, data []byte)) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.API+"/api/v1/events", nil)
	if err != nil {
		return err
	}
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	resp, err := (&http.Client{Transport: c.HTTP.Transport}).Do(req) // no overall timeout: a stream
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET /api/v1/events: HTTP %d", resp.StatusCode)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var name string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			fn(name, []byte(strings.TrimPrefix(line, "data: ")))
		case line == "":
			name = ""
		}
	}
	return sc.Err()
}
