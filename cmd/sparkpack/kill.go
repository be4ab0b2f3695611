package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/sparkpack/sparkpack/scheduler"
)

// runKill is `sparkpack kill ID...`: DELETE /api/v1/jobs/{id} for each job,
// the same path as every other kill (a waiting job is cancelled, one that
// holds resources has its driver killed and its reservations released).
func runKill(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("kill", stderr)
	server := fs.String("server", envDefault("SPARKPACK_SERVER", "http://127.0.0.1:8080"), withEnv("sparkpack API base URL", "SPARKPACK_SERVER"))
	token := fs.String("token", "", "bearer token (default: env SPARKPACK_TOKEN)")
	wait := fs.Bool("wait", false, "wait until each job has ended (KILLED or CANCELLED), printing its state")
	timeout := fs.Duration("timeout", 2*time.Minute, "with --wait: give up after this long")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: sparkpack kill [flags] JOB-ID...")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return errUsage
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(stderr, "sparkpack kill: name at least one job id (see sparkpack kill --help)")
		return errUsage
	}
	if *token == "" {
		*token = os.Getenv("SPARKPACK_TOKEN")
	}
	base := strings.TrimRight(*server, "/")
	failed := 0
	for _, id := range fs.Args() {
		if !jobIDRE.MatchString(id) {
			fmt.Fprintf(stderr, "%q is not a job id (a UUID such as 6f1d2c1e-8a7b-4c1d-9e2f-3a4b5c6d7e8f)\n", id)
			failed++
			continue
		}
		job, err := deleteJob(ctx, base, *token, id)
		if err != nil {
			fmt.Fprintf(stderr, "job %s: %v\n", id, err)
			failed++
			continue
		}
		switch {
		case job.State.Terminal():
			fmt.Fprintf(stdout, "job %s: %s\n", job.ID, job.State)
		default:
			fmt.Fprintf(stdout, "job %s: kill requested (%s); its driver is stopped and its reservations released\n", job.ID, job.State)
		}
		if *wait && !job.State.Terminal() {
			end, err := waitEnded(ctx, base, *token, job.ID, *timeout, stderr)
			if err != nil {
				fmt.Fprintf(stderr, "job %s: %v\n", job.ID, err)
				failed++
				continue
			}
			fmt.Fprintf(stdout, "job %s: %s\n", job.ID, end.State)
		}
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d jobs could not be killed", failed, fs.NArg())
	}
	return nil
}

var jobIDRE = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

func authorized(req *http.Request, token string) *http.Request {
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	return req
}

// deleteJob sends the DELETE, retrying while the server is unreachable or
// answers 503 (a kill request is idempotent).
func deleteJob(ctx context.Context, base, token, id string) (scheduler.Job, error) {
	var job scheduler.Job
	backoff := 500 * time.Millisecond
	for attempt := 1; ; attempt++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodDelete, base+"/api/v1/jobs/"+id, nil)
		if err != nil {
			return job, fmt.Errorf("--server %q: %w", base, err)
		}
		resp, err := http.DefaultClient.Do(authorized(req, token))
		retry := err != nil
		if err == nil {
			b, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
			resp.Body.Close()
			switch resp.StatusCode {
			case http.StatusOK, http.StatusAccepted:
				if err := json.Unmarshal(b, &job); err != nil {
					return job, fmt.Errorf("unreadable answer from %s: %w", base, err)
				}
				return job, nil
			case http.StatusServiceUnavailable, http.StatusBadGateway:
				retry = true
				err = fmt.Errorf("server answered %s", resp.Status)
			default:
				var e apiError
				_ = json.Unmarshal(b, &e)
				msg := e.Error
				if msg == "" {
					msg = strings.TrimSpace(string(b))
				}
				return job, fmt.Errorf("server answered %s: %s", resp.Status, msg)
			}
		} else {
			err = fmt.Errorf("cannot reach %s: %w", base, err)
		}
		if !retry || attempt == 6 {
			return job, err
		}
		select {
		case <-ctx.Done():
			return job, ctx.Err()
		case <-time.After(backoff):
		}
		backoff *= 2
	}
}

// waitEnded polls the job until it has ended.
func waitEnded(ctx context.Context, base, token, id string, timeout time.Duration, stderr io.Writer) (scheduler.Job, error) {
	deadline := time.Now().Add(timeout)
	var job scheduler.Job
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/api/v1/jobs/"+id, nil)
		if err != nil {
			return job, err
		}
		resp, err := http.DefaultClient.Do(authorized(req, token))
		if err == nil {
			b, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK && json.Unmarshal(b, &job) == nil && job.State.Terminal() {
				return job, nil
			}
		} else {
			fmt.Fprintf(stderr, "kill: %v (retrying)\n", err)
		}
		if time.Now().After(deadline) {
			return job, fmt.Errorf("still %s after %s; the kill stays requested and is carried out when it can be (check with GET %s/api/v1/jobs/%s)", job.State, timeout, base, id)
		}
		select {
		case <-ctx.Done():
			return job, ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}
