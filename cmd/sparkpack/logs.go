package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"time"

	"github.com/sparkpack/sparkpack/api"
	"github.com/sparkpack/sparkpack/offers"
	"github.com/sparkpack/sparkpack/scheduler"
)

// ReadLog implements api.LogReader on the leader (followers forward
// GET /api/v1/jobs/{id}/logs to it).
func (h *leadership) ReadLog(ctx context.Context, jobID string, q api.LogQuery) (api.LogChunk, error) {
	if lv := h.cur.Load(); lv != nil {
		return lv.readLog(ctx, jobID, q)
	}
	return api.LogChunk{}, &api.LogError{Status: http.StatusServiceUnavailable, Msg: h.notLeading().Error()}
}

// sparkUIRE finds the web UI address a Spark driver logs at start
// ("Bound SparkUI to 0.0.0.0, and started at http://host:4040").
var sparkUIRE = regexp.MustCompile(`SparkUI[^\n]*started at (https?://[^\s]+)`)

// readLog reads a job's driver log from its sandbox on the agent that ran
// the driver (the latest launch, or launch q.Attempt: driver_launches
// keeps each launch's agent).
func (l *live) readLog(ctx context.Context, jobID string, q api.LogQuery) (api.LogChunk, error) {
	j, err := l.st.GetJob(ctx, jobID)
	if errors.Is(err, scheduler.ErrNotFound) {
		return api.LogChunk{}, &api.LogError{Status: http.StatusNotFound, Field: "id", Msg: "no job with id " + jobID}
	}
	if err != nil {
		return api.LogChunk{}, err
	}
	d, err := l.st.Driver(ctx, jobID)
	if errors.Is(err, scheduler.ErrNotFound) {
		if j.State.Terminal() {
			return api.LogChunk{}, &api.LogError{Status: http.StatusNotFound, Msg: fmt.Sprintf(
				"job %s ended (%s) without launching a Spark driver: it has no log (sparkpack job %s says why)", jobID, j.State, jobID)}
		}
		return api.LogChunk{}, &api.LogError{Status: http.StatusNotFound, Msg: fmt.Sprintf(
			"job %s (%s) has launched no Spark driver yet: its log appears once the driver runs", jobID, j.State)}
	}
	if err != nil {
		return api.LogChunk{}, err
	}
	if q.Attempt != 0 && q.Attempt != d.Attempt {
		latest := d.Attempt
		d, err = l.st.DriverLaunch(ctx, jobID, q.Attempt)
		if errors.Is(err, scheduler.ErrNotFound) {
			return api.LogChunk{}, &api.LogError{Status: http.StatusNotFound, Field: "attempt", Msg: fmt.Sprintf(
				"job %s has no driver launch %d (its launches are 1 to %d): give --attempt between them", jobID, q.Attempt, latest)}
		}
		if err != nil {
			return api.LogChunk{}, err
		}
	}
	if d.AgentID == "" {
		return api.LogChunk{}, &api.LogError{Status: http.StatusNotFound, Msg: fmt.Sprintf(
			"the driver of job %s (attempt %d) has not started on an agent yet: its log appears once it runs", jobID, d.Attempt)}
	}
	fwID, err := l.st.FrameworkID(ctx)
	if err != nil {
		return api.LogChunk{}, err
	}
	out := api.LogChunk{JobID: jobID, Attempt: d.Attempt, TaskID: d.TaskID, AgentID: d.AgentID, File: q.File, Ended: d.Ended}
	if a, ok := l.agentIndex()[d.AgentID]; ok {
		out.Hostname = a.Hostname
	}
	c, err := l.op.ReadSandbox(ctx, d.AgentID, fwID, d.TaskID, q.File, q.Offset, q.Length)
	switch {
	case errors.Is(err, offers.ErrAgentGone):
		return api.LogChunk{}, &api.LogError{Status: http.StatusGone, Msg: fmt.Sprintf(
			"the agent that ran the driver of job %s (%s) is no longer in the cluster: its sandbox cannot be read", jobID, agentName(out.Hostname, d.AgentID))}
	case errors.Is(err, offers.ErrSandboxGone):
		return api.LogChunk{}, &api.LogError{Status: http.StatusGone, Msg: fmt.Sprintf(
			"agent %s no longer keeps the sandbox of job %s's driver (Mesos removes the sandboxes of ended tasks after a while)", agentName(out.Hostname, d.AgentID), jobID)}
	case err != nil:
		return api.LogChunk{}, err
	}
	out.Data, out.Offset, out.Size, out.SandboxURL = c.Data, c.Offset, c.Size, c.BrowseURL
	out.NextOffset = c.Offset + int64(len(c.Data))
	if !d.Ended {
		// The UI's address, from the first lines the driver logged.
		if s, err := l.op.ReadSandbox(ctx, d.AgentID, fwID, d.TaskID, "stderr", 0, 64<<10); err == nil {
			if m := sparkUIRE.FindStringSubmatch(s.Data); m != nil {
				out.SparkUIURL = m[1]
			}
		}
	}
	return out, nil
}

// Preview implements api.Config.Preview on the leader (followers forward
// POST /api/v1/plan to it).
func (h *leadership) Preview(ctx context.Context, j scheduler.Job, now time.Time) (scheduler.Preview, error) {
	if lv := h.cur.Load(); lv != nil {
		return lv.core.Preview(ctx, j, now)
	}
	return scheduler.Preview{}, h.notLeading()
}
