package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/sparkpack/sparkpack/api"
	"github.com/sparkpack/sparkpack/scheduler"
)

// runCancel is `sparkpack cancel ID...`: DELETE /api/v1/jobs/{id}. A
// waiting job is cancelled; one that holds resources has its driver
// killed and its reservations released (202: kill requested).
// A job that has already ended is not an error (nothing is left to stop).
// `sparkpack kill` is the same command.
func runCancel(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return cancelJobs(ctx, "cancel", args, stdout, stderr)
}

func cancelJobs(ctx context.Context, name string, args []string, stdout, stderr io.Writer) error {
	var cf clientFlags
	fs := newFlagSet(name, stderr)
	cf.register(fs)
	wait := fs.Bool("wait", false, "wait until each job has ended, printing its final state")
	timeout := fs.Duration("timeout", 2*time.Minute, "with --wait: give up after this long (0: never)")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: sparkpack %s [flags] JOB-ID...   (a waiting job is cancelled; a running one killed and its reservations released)\n", name)
		fs.PrintDefaults()
	}
	ids, err := parseWithIDs(fs, args, 0)
	if err != nil {
		return err
	}
	if *timeout < 0 {
		return fmt.Errorf("--timeout %s: want a duration >= 0 (0: wait as long as it takes)", *timeout)
	}
	cl, err := cf.client()
	if err != nil {
		return err
	}
	cl.retries, cl.stderr = 3, stderr
	if ids, err = resolveIDs(ctx, cl, ids); err != nil {
		return err
	}
	failed := 0
	for _, id := range ids {
		var v api.JobView
		status, err := cl.do(ctx, http.MethodDelete, "/api/v1/jobs/"+id, nil, &v)
		var he *httpError
		switch {
		case errors.As(err, &he) && he.Status == http.StatusConflict:
			fmt.Fprintf(stderr, "%s; nothing to cancel (%d)\n", he.Msg, he.Status)
			continue
		case err != nil:
			fmt.Fprintf(stderr, "job %s: %v\n", id, explain(notFound(err, id), "cancel"))
			failed++
			continue
		case status == http.StatusAccepted:
			fmt.Fprintf(stdout, "job %s: kill requested (%s); its driver is stopped and its reservations released\n", id, v.State)
		default:
			fmt.Fprintf(stdout, "job %s: %s\n", id, v.State)
		}
		if *wait && !v.State.Terminal() {
			end, err := waitJobEnd(ctx, cl, id, *timeout)
			if err != nil {
				fmt.Fprintf(stderr, "job %s: %v\n", id, err)
				failed++
				continue
			}
			fmt.Fprintf(stdout, "job %s: %s\n", id, end.State)
		}
	}
	if failed > 0 {
		verb := "cancelled"
		if name == "kill" {
			verb = "killed"
		}
		return fmt.Errorf("%d of %d jobs could not be %s", failed, len(ids), verb)
	}
	return nil
}

// waitJobEnd polls a job until it has ended.
func waitJobEnd(ctx context.Context, cl *apiClient, id string, timeout time.Duration) (scheduler.Job, error) {
	deadline := time.Now().Add(timeout)
	var j scheduler.Job
	for {
		if _, err := cl.do(ctx, http.MethodGet, "/api/v1/jobs/"+id, nil, &j); err != nil {
			if retry, _ := transient(err); !retry {
				return j, explain(err, "job "+id)
			}
		} else if j.State.Terminal() {
			return j, nil
		}
		if timeout > 0 && time.Now().After(deadline) {
			return j, fmt.Errorf("still %s after %s; the kill stays requested and is carried out when it can be (check with sparkpack job %s)", j.State, timeout, id)
		}
		select {
		case <-ctx.Done():
			return j, ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}
