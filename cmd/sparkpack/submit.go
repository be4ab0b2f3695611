package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/sparkpack/sparkpack/internal/tlsutil"
	"github.com/sparkpack/sparkpack/scheduler"
)

// kvFlag collects repeated key=value flags.
type kvFlag map[string]string

func (k kvFlag) String() string { return fmt.Sprint(map[string]string(k)) }
func (k kvFlag) Set(v string) error {
	key, val, ok := strings.Cut(v, "=")
	if !ok || key == "" {
		return fmt.Errorf("want key=value, got %q", v)
	}
	k[key] = val
	return nil
}

// listFlag collects repeated values.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, " ") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

type submitConfig struct {
	server, token, file, name, appResource, mainClass, deadline string
	caFile                                                      string
	client                                                      *http.Client
	executors, cores, memMB, overheadMB                         int
	duration                                                    float64
	follow                                                      bool
	poll, timeout                                               time.Duration
	args                                                        listFlag
	conf, env, labels                                           kvFlag
}

func runSubmit(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c := submitConfig{conf: kvFlag{}, env: kvFlag{}, labels: kvFlag{}}
	fs := newFlagSet("submit", stderr)
	fs.StringVar(&c.server, "server", envDefault("SPARKPACK_SERVER", "http://127.0.0.1:8080"), withEnv("sparkpack API base URL", "SPARKPACK_SERVER"))
	fs.StringVar(&c.token, "token", "", "bearer token (default: env SPARKPACK_TOKEN)")
	fs.StringVar(&c.caFile, "ca-file", envDefault("SPARKPACK_CA_FILE", ""), withEnv("PEM CA certificates to trust for an https:// --server (default: the system's roots)", "SPARKPACK_CA_FILE"))
	fs.StringVar(&c.file, "f", "", "job JSON file ('-' for standard input); other job flags override its fields")
	fs.StringVar(&c.name, "name", "", "job name")
	fs.StringVar(&c.appResource, "app-resource", "", "application jar or file, e.g. local:///opt/spark/examples/jars/spark-examples.jar")
	fs.StringVar(&c.mainClass, "main-class", "", "main class, e.g. org.apache.spark.examples.SparkPi")
	fs.Var(&c.args, "arg", "an application argument (repeat for more)")
	fs.Var(c.conf, "conf", "a Spark property key=value (repeat)")
	fs.Var(c.env, "env", "an environment variable NAME=value (repeat)")
	fs.Var(c.labels, "label", "a label key=value (repeat)")
	fs.IntVar(&c.executors, "executors", 0, "number of executors")
	fs.IntVar(&c.cores, "executor-cores", 0, "cpus per executor")
	fs.IntVar(&c.memMB, "executor-memory-mb", 0, "memory per executor in MiB")
	fs.IntVar(&c.overheadMB, "memory-overhead-mb", 0, "memory overhead per executor in MiB (default: Spark's max(384, 10%))")
	fs.StringVar(&c.deadline, "deadline", "", "deadline: an RFC 3339 time or seconds from now")
	fs.Float64Var(&c.duration, "estimated-duration", 0, "estimated run time in seconds")
	fs.BoolVar(&c.follow, "follow", false, "follow the job until it ends, printing its state")
	fs.DurationVar(&c.poll, "poll", time.Second, "with --follow: how often to ask")
	fs.DurationVar(&c.timeout, "timeout", 0, "with --follow: give up after this long (0: never)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if c.token == "" {
		c.token = os.Getenv("SPARKPACK_TOKEN")
	}
	tc, err := tlsutil.ClientConfig(c.caFile)
	if err != nil {
		return fmt.Errorf("--ca-file: %w", err)
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = tc
	c.client = &http.Client{Transport: tr}
	body, err := c.jobBody()
	if err != nil {
		return err
	}
	job, err := postJob(ctx, c.client, c.server, c.token, body, stderr)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, job.ID)
	if !c.follow {
		return nil
	}
	return followJob(ctx, c, job, stderr)
}

// jobBody builds the job JSON from -f and the flags, validated locally
// with the same rules as the server, with a client-chosen id so that
// retries are idempotent.
func (c *submitConfig) jobBody() ([]byte, error) {
	var spec scheduler.Spec
	if c.file != "" {
		var r io.Reader = os.Stdin
		if c.file != "-" {
			f, err := os.Open(c.file)
			if err != nil {
				return nil, fmt.Errorf("job file: %w", err)
			}
			defer f.Close()
			r = f
		}
		s, err := scheduler.DecodeSpec(io.LimitReader(r, 1<<20))
		if err != nil {
			return nil, fmt.Errorf("job file %s: %w", c.file, err)
		}
		spec = s
	}
	set := func(dst *string, v string) {
		if v != "" {
			*dst = v
		}
	}
	set(&spec.Name, c.name)
	set(&spec.App.AppResource, c.appResource)
	set(&spec.App.MainClass, c.mainClass)
	if len(c.args) > 0 {
		spec.App.Args = c.args
	}
	merge := func(dst *map[string]string, src kvFlag) {
		if len(src) == 0 {
			return
		}
		if *dst == nil {
			*dst = map[string]string{}
		}
		for k, v := range src {
			(*dst)[k] = v
		}
	}
	merge(&spec.App.SparkConf, c.conf)
	merge(&spec.App.Environment, c.env)
	merge(&spec.Labels, c.labels)
	for _, p := range []struct {
		dst *int
		v   int
	}{{&spec.Executors, c.executors}, {&spec.ExecutorCores, c.cores}, {&spec.ExecutorMemoryMB, c.memMB}, {&spec.MemoryOverheadMB, c.overheadMB}} {
		if p.v != 0 {
			*p.dst = p.v
		}
	}
	if c.duration != 0 {
		spec.EstimatedDurationSeconds = c.duration
	}
	if c.deadline != "" {
		var d scheduler.Deadline
		raw := strconv.Quote(c.deadline)
		if _, err := strconv.ParseFloat(c.deadline, 64); err == nil {
			raw = c.deadline
		}
		if err := d.UnmarshalJSON([]byte(raw)); err != nil {
			return nil, fmt.Errorf("--deadline: %w", err)
		}
		spec.Deadline = &d
	}
	if spec.ID == "" {
		spec.ID = uuid.NewString()
	}
	if err := spec.Validate(); err != nil {
		return nil, fmt.Errorf("invalid job: %w", err)
	}
	return json.Marshal(&spec)
}

type apiError struct {
	Error string `json:"error"`
	Field string `json:"field"`
}

// postJob submits the job, retrying with the same body (and id) while the
// server is unreachable, answers 503, or 429 with Retry-After (the rate
// limit): the id makes retries safe.
func postJob(ctx context.Context, client *http.Client, server, token string, body []byte, stderr io.Writer) (scheduler.Job, error) {
	backoff := 500 * time.Millisecond
	for attempt := 1; ; attempt++ {
		job, retry, wait, err := postOnce(ctx, client, server, token, body)
		if err == nil || !retry || attempt == 6 {
			return job, err
		}
		if wait < backoff {
			wait = backoff
		}
		fmt.Fprintf(stderr, "submit: %v; retrying in %s (attempt %d of 6)\n", err, wait, attempt)
		select {
		case <-ctx.Done():
			return job, ctx.Err()
		case <-time.After(wait):
		}
		backoff *= 2
	}
}

// postOnce posts once; it reports whether a retry may help and, for a
// 429 with Retry-After, how long to wait first (at most a minute).
func postOnce(ctx context.Context, client *http.Client, server, token string, body []byte) (scheduler.Job, bool, time.Duration, error) {
	var job scheduler.Job
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(server, "/")+"/api/v1/jobs", bytes.NewReader(body))
	if err != nil {
		return job, false, 0, fmt.Errorf("--server %q: %w", server, err)
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := client.Do(req)
	if err != nil {
		return job, true, 0, fmt.Errorf("cannot reach %s: %w", server, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if resp.StatusCode == http.StatusCreated || resp.StatusCode == http.StatusOK {
		if err := json.Unmarshal(b, &job); err != nil {
			return job, false, 0, fmt.Errorf("unreadable answer from %s: %w", server, err)
		}
		return job, false, 0, nil
	}
	var e apiError
	_ = json.Unmarshal(b, &e)
	msg := e.Error
	if msg == "" {
		msg = strings.TrimSpace(string(b))
	}
	if e.Field != "" {
		msg = e.Field + ": " + msg
	}
	retry := resp.StatusCode == http.StatusServiceUnavailable || resp.StatusCode == http.StatusBadGateway
	var wait time.Duration
	if resp.StatusCode == http.StatusTooManyRequests {
		// The rate limit says when to come back; the waiting cap does not
		// (retrying would not help until jobs start).
		if n, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && n > 0 {
			retry, wait = true, min(time.Duration(n)*time.Second, time.Minute)
		}
	}
	return job, retry, wait, fmt.Errorf("server answered %s: %s", resp.Status, msg)
}

// followJob prints the job's state whenever it changes until it ends; the
// exit status is 0 only when it finished.
func followJob(ctx context.Context, c submitConfig, job scheduler.Job, stderr io.Writer) error {
	start := time.Now()
	last := scheduler.State("")
	url := strings.TrimRight(c.server, "/") + "/api/v1/jobs/" + job.ID
	for {
		if job.State != last {
			line := fmt.Sprintf("job %s: %s after %s", job.ID, job.State, time.Since(start).Round(time.Second))
			if job.WaitingReason != "" {
				line += " (" + job.WaitingReason + ")"
			}
			fmt.Fprintln(stderr, line)
			last = job.State
		}
		if job.State.Terminal() {
			if job.State == scheduler.Finished {
				return nil
			}
			return exitCode(1)
		}
		if c.timeout > 0 && time.Since(start) > c.timeout {
			return fmt.Errorf("job %s still %s after %s; it goes on running (check with GET %s)", job.ID, job.State, c.timeout, url)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(c.poll):
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if c.token != "" {
			req.Header.Set("Authorization", "Bearer "+c.token)
		}
		resp, err := c.client.Do(req)
		if err != nil {
			fmt.Fprintf(stderr, "follow: %v (retrying)\n", err)
			continue
		}
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			var e apiError
			_ = json.Unmarshal(b, &e)
			if resp.StatusCode >= 500 {
				fmt.Fprintf(stderr, "follow: server answered %s (retrying)\n", resp.Status)
				continue
			}
			return fmt.Errorf("follow job %s: %s: %s", job.ID, resp.Status, e.Error)
		}
		var next scheduler.Job
		if err := json.Unmarshal(b, &next); err != nil {
			return fmt.Errorf("follow job %s: unreadable answer: %w", job.ID, err)
		}
		job = next
	}
}
