package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/sparkpack/sparkpack/api"
)

// runLogs is `sparkpack logs JOB`: the Spark driver's stdout (or stderr)
// from its Mesos sandbox; --follow goes on printing as the driver writes,
// until it ends.
func runLogs(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var cf clientFlags
	fs := newFlagSet("logs", stderr)
	cf.register(fs)
	errFile := fs.Bool("stderr", false, "the driver's stderr (Spark's own log) instead of its stdout (the application's output)")
	follow := fs.Bool("follow", false, "keep printing what the driver writes until it ends (also -f); waits for a driver that has not started")
	fs.BoolVar(follow, "f", false, "the same as --follow")
	attempt := fs.Int("attempt", 0, "the driver launch to read (default: the latest; an older launch is read from the agent that ran it while Mesos keeps its sandbox)")
	interval := fs.Duration("interval", time.Second, "how often --follow asks for more")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: sparkpack logs [flags] JOB-ID   (the Spark driver's output, read from its Mesos sandbox)")
		fs.PrintDefaults()
	}
	ids, err := parseWithIDs(fs, args, 1)
	if err != nil {
		return err
	}
	if *interval < 100*time.Millisecond {
		return fmt.Errorf("--interval %s: want at least 100ms", *interval)
	}
	if *attempt < 0 {
		return fmt.Errorf("--attempt %d: want a launch number from 1", *attempt)
	}
	cl, err := cf.client()
	if err != nil {
		return err
	}
	cl.retries = 2
	if ids, err = resolveIDs(ctx, cl, ids); err != nil {
		return err
	}
	file := "stdout"
	if *errFile {
		file = "stderr"
	}
	id := ids[0]
	var offset int64
	waiting, ended := false, false
	for {
		q := url.Values{"file": {file}, "offset": {strconv.FormatInt(offset, 10)}, "length": {strconv.Itoa(api.MaxLogRead)}}
		if *attempt > 0 {
			q.Set("attempt", strconv.Itoa(*attempt))
		}
		var c api.LogChunk
		_, err := cl.do(ctx, http.MethodGet, "/api/v1/jobs/"+id+"/logs?"+q.Encode(), nil, &c)
		var he *httpError
		switch {
		case err == nil:
		case ctx.Err() != nil:
			return nil
		case errors.As(err, &he) && he.Status == http.StatusNotFound && !he.foreign && *follow && he.Field == "":
			// No driver yet: wait for one (a bad job id is a 404 too,
			// but the job route says so first), unless the job has ended:
			// then none is coming. Its log is asked for once more first,
			// for a driver that ran and ended between the two requests.
			var j api.JobView
			if _, gerr := cl.do(ctx, http.MethodGet, "/api/v1/jobs/"+id, nil, &j); gerr != nil {
				return explain(notFound(gerr, id), "job "+id)
			}
			if j.State.Terminal() {
				if ended {
					return fmt.Errorf("logs of job %s: %w", id, err)
				}
				ended = true
				continue
			}
			if !waiting {
				fmt.Fprintf(stderr, "(%s; waiting)\n", he.Msg)
				waiting = true
			}
			if !sleepCtx(ctx, *interval) {
				return nil
			}
			continue
		case errors.As(err, &he) && he.Status == http.StatusNotFound && !he.foreign:
			// A 404 of the log route is the job's only when the job is
			// gone; otherwise the server says why there is no log (no
			// driver yet, no such --attempt).
			if _, gerr := cl.do(ctx, http.MethodGet, "/api/v1/jobs/"+id, nil, nil); gerr != nil {
				return explain(notFound(gerr, id), "job "+id)
			}
			return fmt.Errorf("logs of job %s: %w", id, err)
		default:
			return explain(notFound(err, id), "logs of job "+id)
		}
		if _, err := io.WriteString(stdout, c.Data); err != nil {
			return err
		}
		offset = c.NextOffset
		if offset < c.Size {
			continue // more is there already
		}
		if !*follow || c.Ended {
			return nil
		}
		if !sleepCtx(ctx, *interval) {
			return nil
		}
	}
}

// sleepCtx waits d, or less if ctx ends first (then it reports false).
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
