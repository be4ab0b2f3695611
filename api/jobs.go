package api

import (
	"context"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/gorilla/mux"
	"github.com/sirupsen/logrus"

	"github.com/sparkpack/sparkpack/scheduler"
	"github.com/sparkpack/sparkpack/store"
	"github.com/sparkpack/sparkpack/teams"
)

// JobView is a job as the API shows it.
type JobView struct {
	scheduler.Job
	Placement []store.PlacementRow `json:"placement"`
	Events    []store.Event        `json:"events,omitempty"`
	// DriverCommand is the spark-submit argument vector of the driver.
	DriverCommand []string `json:"driverCommand,omitempty"`
	// CostUSD is the job's attributed cost: its share (by dominant share
	// of cpus or memory held) of what its agents cost while it held them
	// (Config.JobCosts); absent when unknown or the job never held any.
	CostUSD *float64 `json:"costUSD,omitempty"`
	// PredictedSeconds and PredictedP90Seconds are the run time the
	// performance model predicted for the job, PredictionLevel where it
	// came from, PredictedAt when: "start" is the prediction the scheduler
	// made when the job's last (or current) run started, the one it
	// decided with (an ended job's from its run history, a running job's
	// from the leader's scheduler: Config.RunPrediction); "now" is what
	// the model predicts today (Config.JobPrediction): a waiting job's, or
	// one whose start had no prediction (no model then, or a running job
	// viewed on a follower). ActualSeconds is its last run's time once it
	// finished (in the estimate's units, see Config.DurationScale): compare
	// it with a "start" prediction, since a "now" one has learned from
	// this very run. See api/models.go.
	PredictedSeconds    *float64 `json:"predictedSeconds,omitempty"`
	PredictedP90Seconds *float64 `json:"predictedP90Seconds,omitempty"`
	PredictionLevel     string   `json:"predictionLevel,omitempty"`
	PredictedAt         string   `json:"predictedAt,omitempty"`
	ActualSeconds       *float64 `json:"actualSeconds,omitempty"`
	// RunTimeUnknown: the ended (FINISHED, FAILED or KILLED) job's last
	// run ended before its driver was seen running, so when it started is
	// not known (startedAt is its launch, or its end): it has no
	// actualSeconds, and how long it ran is unknown, not finishedAt minus
	// startedAt (docs/learning.md, "Runs never seen running"). In the job
	// list too.
	RunTimeUnknown bool `json:"runTimeUnknown,omitempty"`
	// EstimatedWallSeconds is the job's estimatedDurationSeconds on the
	// wall clock, as the scheduler reads it, when the server runs
	// simulated time faster (Config.EstimateScale, the demo's
	// --sim-speed); absent when the estimate is wall time already.
	EstimatedWallSeconds *float64 `json:"estimatedWallSeconds,omitempty"`
	// FailedReason is why a FAILED job failed: the reason of the event
	// that made it FAILED, in the job list (the job's timeline has it
	// too).
	FailedReason string `json:"failedReason,omitempty"`
	// QueuedSeconds is how long the job waited in the queue (SUBMITTED or
	// QUEUED), summed over its waits: not the time it spent placing,
	// starting or running a run that failed or was lost before it waited
	// again. QueuedSince, when it waits now, is since when (add the time
	// since to QueuedSeconds). Absent for a job that never waited (one
	// rejected at submission). "waited" in `sparkpack jobs` and the
	// dashboard.
	QueuedSeconds *float64   `json:"queuedSeconds,omitempty"`
	QueuedSince   *time.Time `json:"queuedSince,omitempty"`
}

// setQueueWait sets v's queue wait from w (ok: the store has one).
func (v *JobView) setQueueWait(w store.QueueWait, ok bool) {
	if !ok {
		return
	}
	sec := w.Seconds
	v.QueuedSeconds, v.QueuedSince = &sec, w.Since
}

func (s *Server) dbContext(r *http.Request) (context.Context, context.CancelFunc) {
	return context.WithTimeoutCause(r.Context(), s.cfg.DBTimeout, errDBTimeout)
}

func (s *Server) createJob(w http.ResponseWriter, r *http.Request) {
	spec, ok := readSpec(w, r)
	if !ok {
		return
	}
	job, created, ok := s.submit(w, r, spec)
	if !ok {
		return
	}
	view := JobView{Job: job, Placement: []store.PlacementRow{}}
	if !created {
		writeJSON(w, http.StatusOK, view)
		return
	}
	w.Header().Set("Location", "/api/v1/jobs/"+job.ID)
	writeJSON(w, http.StatusCreated, view)
}

// Submit stores a validated spec as a new job (or finds the identical one
// submitted before), then tells the notifier. It is shared with other
// front ends (such as Spark's REST submission protocol). On failure it has
// answered the request and returns ok=false.
func (s *Server) Submit(w http.ResponseWriter, r *http.Request, spec scheduler.Spec) (scheduler.Job, bool, bool) {
	return s.submit(w, r, spec)
}

func (s *Server) submit(w http.ResponseWriter, r *http.Request, spec scheduler.Spec) (scheduler.Job, bool, bool) {
	if err := s.cfg.Containment.Check(&spec); err != nil {
		var fe *scheduler.FieldError
		if errors.As(err, &fe) {
			writeError(w, http.StatusBadRequest, fe.Field, fe.Msg)
		} else {
			writeError(w, http.StatusBadRequest, "", err.Error())
		}
		return scheduler.Job{}, false, false
	}
	givenID := spec.ID
	if spec.ID == "" {
		spec.ID = uuid.NewString()
	}
	now := s.cfg.Now().UTC()
	if err := scheduler.CheckNotBefore(&scheduler.Job{Spec: spec, DeadlineAt: spec.ResolveDeadline(now)}); err != nil {
		var fe *scheduler.FieldError
		errors.As(err, &fe)
		writeError(w, http.StatusBadRequest, fe.Field, fe.Msg)
		return scheduler.Job{}, false, false
	}
	// The store computes the fingerprint as it encodes the spec.
	job, p := jobOf(r, spec, now)
	if msg, refused := s.budgetRefused(r, job.Team, givenID); refused {
		writeError(w, http.StatusForbidden, "team", msg)
		return scheduler.Job{}, false, false
	}
	job.DeadlineAt = spec.ResolveDeadline(now)
	if spec.AutoExecutors() {
		// The fingerprint is the body's as sent ("auto"), so that sending
		// it again finds the job whatever count the model would choose now.
		job.Fingerprint = spec.Fingerprint()
		if !s.rightSize(w, &job, now) {
			return scheduler.Job{}, false, false
		}
	}
	var reject string
	if s.cfg.Decide != nil {
		d := s.cfg.Decide(&job, now)
		reject = d.Reject
		if d.Queue {
			d.Apply(&job)
		}
	} else {
		reject = s.cfg.Admit(&job, now)
	}
	ctx, cancel := s.dbContext(r)
	defer cancel()
	if s.cfg.MaxWaitingPerToken > 0 && p.Name != "" && reject == "" {
		unlock := s.submitLocks.Lock(p.Name)
		defer unlock()
		if !s.underWaitingCap(ctx, w, r, p, spec.ID) {
			return scheduler.Job{}, false, false
		}
	}
	if reject == "" && !s.cfg.Teams.Get().Empty() {
		unlock := s.submitLocks.Lock("team\x00" + job.Team)
		defer unlock()
		if !s.underTeamCaps(ctx, w, r, p, &job) {
			return scheduler.Job{}, false, false
		}
	}
	stored, created, err := s.cfg.Store.CreateJob(ctx, job, reject)
	switch {
	case errors.Is(err, scheduler.ErrConflict):
		writeError(w, http.StatusConflict, "id", "a different job with this id exists; use a new id, or resend the identical body")
		return stored, false, false
	case err != nil:
		writeStoreError(w, r, "create job", err)
		return stored, false, false
	}
	if created {
		if l := s.logFor(r.Context()); levelEnabled(l, logrus.InfoLevel) {
			l.WithFields(map[string]any{"job": stored.ID, "state": stored.State}).Info("job submitted")
		}
		if s.cfg.Notifier != nil {
			s.cfg.Notifier.JobSubmitted(stored)
		}
		s.publish("job", map[string]any{"id": stored.ID, "state": stored.State})
	} else if stored.State.Waiting() && s.cfg.Notifier != nil {
		// A retry of a submission that may have failed after its commit
		// (the client saw a 503): the scheduler may never have heard of
		// the job, so tell it again; it ignores a job it already has.
		s.cfg.Notifier.JobSubmitted(stored)
	}
	return stored, created, true
}

// jobOf is the job spec makes when the request's principal submits it at
// now: its team (the token's, else its team label: scheduler.TeamOf) and
// whose estimates it uses, without a team (scheduler.EstimateKeyOf). A
// submission and a preview (POST /api/v1/plan) both make it here.
func jobOf(r *http.Request, spec scheduler.Spec, now time.Time) (scheduler.Job, Principal) {
	p, _ := PrincipalFrom(r.Context())
	job := scheduler.Job{Spec: spec, SubmittedAt: now}
	job.Team = scheduler.TeamOf(p.Team, &spec)
	job.SubmittedBy = p.Name
	return job, p
}

// budgetRefused is why a new job of team is refused for its spent budget
// (budget-action reject); a job of the id the client gave that exists
// already is never refused (sending it again creates nothing).
func (s *Server) budgetRefused(r *http.Request, team, givenID string) (string, bool) {
	if s.cfg.BudgetRefusal == nil {
		return "", false
	}
	msg, refused := s.cfg.BudgetRefusal(team)
	if !refused || s.stored(r, givenID) {
		return "", false
	}
	return msg, true
}

// Cancel stops a job on a user's request: the store cancels a waiting job
// (CANCELLED) or durably marks one that holds resources kill-requested,
// then the notifier (the scheduler core, which has the cluster kill the
// driver) and the dashboard hear of it. DELETE /api/v1/jobs/{id} and every
// other front end that kills jobs (Spark's REST protocol, through
// sparkrest.Config.Cancel) call it, so that every kill takes this one path.
// Errors are the store's (scheduler.ErrNotFound, store.ErrTerminal, ...).
func (s *Server) Cancel(ctx context.Context, id, reason string) (scheduler.Job, store.CancelOutcome, error) {
	job, outcome, err := s.cfg.Store.Cancel(ctx, id, reason)
	if err != nil {
		return job, outcome, err
	}
	s.logFor(ctx).WithFields(map[string]any{"job": job.ID, "state": job.State, "kill_requested": outcome == store.KillRequested}).Info("job cancelled: " + reason)
	if s.cfg.Notifier != nil {
		s.cfg.Notifier.JobCancelled(job, outcome == store.KillRequested)
	}
	s.publish("job", map[string]any{"id": job.ID, "state": job.State, "killRequested": job.KillRequested})
	return job, outcome, nil
}

func (s *Server) jobID(w http.ResponseWriter, r *http.Request) (string, bool) {
	id := mux.Vars(r)["id"]
	if !scheduler.IsUUID(id) {
		writeError(w, http.StatusBadRequest, "id", "a job id is a UUID such as 6f1d2c1e-8a7b-4c1d-9e2f-3a4b5c6d7e8f")
		return "", false
	}
	return strings.ToLower(id), true
}

func (s *Server) getJob(w http.ResponseWriter, r *http.Request) {
	id, ok := s.jobID(w, r)
	if !ok {
		return
	}
	ctx, cancel := s.dbContext(r)
	defer cancel()
	view, err := s.JobView(ctx, id)
	if errors.Is(err, scheduler.ErrNotFound) {
		writeError(w, http.StatusNotFound, "id", "no job with id "+id)
		return
	}
	if err != nil {
		writeStoreError(w, r, "read job", err)
		return
	}
	writeJSON(w, http.StatusOK, view)
}

// JobView reads a job with its placement and events.
func (s *Server) JobView(ctx context.Context, id string) (JobView, error) {
	job, err := s.cfg.Store.GetJob(ctx, id)
	if err != nil {
		return JobView{}, err
	}
	pl, err := s.cfg.Store.Placement(ctx, id)
	if err != nil {
		return JobView{}, err
	}
	evs, err := s.cfg.Store.Events(ctx, id)
	if err != nil {
		return JobView{}, err
	}
	if pl == nil {
		pl = []store.PlacementRow{}
	}
	v := JobView{Job: job, Placement: pl, Events: evs}
	waits, err := s.cfg.Store.QueueWaits(ctx, []string{id})
	if err != nil {
		return JobView{}, err
	}
	qw, ok := waits[id]
	v.setQueueWait(qw, ok)
	var last *scheduler.RunRecord
	if ranToAnEnd(job.State) {
		runs, err := s.cfg.Store.JobRuns(ctx, id)
		if err != nil {
			return JobView{}, err
		}
		if len(runs) > 0 {
			last = &runs[len(runs)-1]
			v.RunTimeUnknown = last.RunTimeUnknown
		}
	}
	if s.cfg.DriverCommand != nil {
		v.DriverCommand = s.cfg.DriverCommand(job)
	}
	if s.cfg.JobCosts != nil {
		if usd, ok := s.cfg.JobCosts(ctx, []string{id})[id]; ok {
			v.CostUSD = &usd
		}
	}
	s.predictionFields(&v, last)
	return v, nil
}

// ranToAnEnd: a job in state st may have ended a run (a run record is
// its last run's): the states whose runTimeUnknown the views tell.
func ranToAnEnd(st scheduler.State) bool {
	return st == scheduler.Finished || st == scheduler.Failed || st == scheduler.Killed
}

// ListResponse is the body of GET /api/v1/jobs.
type ListResponse struct {
	Jobs []JobView `json:"jobs"`
	Next string    `json:"next"`
}

func (s *Server) listJobs(w http.ResponseWriter, r *http.Request) {
	opts, field, err := parseListQuery(r.URL.Query())
	if err != nil {
		writeError(w, http.StatusBadRequest, field, err.Error())
		return
	}
	ctx, cancel := s.dbContext(r)
	defer cancel()
	jobs, next, err := s.cfg.Store.ListJobs(ctx, opts)
	if errors.Is(err, store.ErrBadCursor) {
		writeError(w, http.StatusBadRequest, "cursor", "unknown cursor; use the 'next' value of a previous page")
		return
	}
	if err != nil {
		writeStoreError(w, r, "list jobs", err)
		return
	}
	ids := make([]string, len(jobs))
	for i, j := range jobs {
		ids[i] = j.ID
	}
	placements, err := s.cfg.Store.Placements(ctx, ids)
	if err != nil {
		writeStoreError(w, r, "list placements", err)
		return
	}
	var ended []string
	for _, j := range jobs {
		if ranToAnEnd(j.State) {
			ended = append(ended, j.ID)
		}
	}
	unknown, err := s.cfg.Store.RunTimesUnknown(ctx, ended)
	if err != nil {
		writeStoreError(w, r, "list the jobs' runs", err)
		return
	}
	var failed []string
	for _, j := range jobs {
		if j.State == scheduler.Failed {
			failed = append(failed, j.ID)
		}
	}
	why, err := s.cfg.Store.EndReasons(ctx, failed)
	if err != nil {
		writeStoreError(w, r, "list why the jobs failed", err)
		return
	}
	waits, err := s.cfg.Store.QueueWaits(ctx, ids)
	if err != nil {
		writeStoreError(w, r, "list how long the jobs waited", err)
		return
	}
	var costs map[string]float64
	if s.cfg.JobCosts != nil {
		costs = s.cfg.JobCosts(ctx, ids)
	}
	out := ListResponse{Jobs: make([]JobView, 0, len(jobs)), Next: next}
	for _, j := range jobs {
		pl := placements[j.ID]
		if pl == nil {
			pl = []store.PlacementRow{}
		}
		v := JobView{Job: j, Placement: pl, RunTimeUnknown: unknown[j.ID], FailedReason: why[j.ID]}
		qw, ok := waits[j.ID]
		v.setQueueWait(qw, ok)
		if usd, ok := costs[j.ID]; ok {
			v.CostUSD = &usd
		}
		out.Jobs = append(out.Jobs, v)
	}
	writeJSON(w, http.StatusOK, out)
}

func parseListQuery(q url.Values) (store.ListOptions, string, error) {
	var o store.ListOptions
	for k := range q {
		switch k {
		case "state", "label", "limit", "cursor", "q", "team":
		default:
			return o, k, fmt.Errorf("unknown query parameter %q (use state, label, team, limit, cursor, q)", k)
		}
	}
	if vs, ok := q["team"]; ok {
		if len(vs) != 1 || len(vs[0]) > 256 {
			return o, "team", fmt.Errorf("give one team filter (team=NAME; team= for jobs without a team), at most 256 bytes")
		}
		t := vs[0]
		if t != "" && !teams.NameRE.MatchString(t) {
			// No job can have it (every team name is checked): an empty
			// list would hide the typo.
			return o, "team", fmt.Errorf("%q is not a team name: letters, digits, '.', '_' and '-' (at most 64, starting with a letter or digit); team= lists the jobs without a team", truncateQuery(t))
		}
		o.Team = &t
	}
	for _, v := range q["state"] {
		for _, name := range strings.Split(v, ",") {
			st, err := scheduler.ParseState(strings.ToUpper(strings.TrimSpace(name)))
			if err != nil {
				return o, "state", err
			}
			o.States = append(o.States, st)
		}
	}
	for _, v := range q["label"] {
		k, val, ok := strings.Cut(v, "=")
		if !ok || k == "" || len(k) > 63 || len(val) > 256 {
			return o, "label", fmt.Errorf("label filters look like label=key=value, got %q", v)
		}
		if !scheduler.ValidLabelKey(k) {
			// No job can carry it: an empty list would hide the typo.
			return o, "label", fmt.Errorf("%q is not a label key: 1-63 letters, digits, '.', '_', '/' or '-', starting and ending with a letter or digit", truncateQuery(k))
		}
		if o.Labels == nil {
			o.Labels = map[string]string{}
		}
		if _, dup := o.Labels[k]; dup {
			// The last one won: label=a=1&label=a=2 listed the a=2 jobs.
			return o, "label", fmt.Errorf("label %q is filtered twice; give each label key once", k)
		}
		o.Labels[k] = val
	}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 1000 {
			return o, "limit", fmt.Errorf("limit must be a whole number from 1 to 1000, got %q", v)
		}
		o.Limit = n
	}
	o.Cursor = q.Get("cursor")
	if v := strings.TrimSpace(q.Get("q")); v != "" {
		if len(v) > 200 {
			return o, "q", fmt.Errorf("a search is at most 200 bytes, got %d", len(v))
		}
		o.Search = v
	}
	return o, "", nil
}

func (s *Server) deleteJob(w http.ResponseWriter, r *http.Request) {
	id, ok := s.jobID(w, r)
	if !ok {
		return
	}
	ctx, cancel := s.dbContext(r)
	defer cancel()
	job, outcome, err := s.Cancel(ctx, id, "cancelled through the API")
	switch {
	case errors.Is(err, scheduler.ErrNotFound):
		writeError(w, http.StatusNotFound, "id", "no job with id "+id)
		return
	case errors.Is(err, store.ErrNotOwner):
		s.guard.Count(r, ListenerAPI, RefusedNotOwner)
		writeError(w, http.StatusForbidden, "id", fmt.Sprintf("job %s was submitted by another token; only that token or one with the admin scope may cancel it", id))
		return
	case errors.Is(err, store.ErrTerminal):
		writeError(w, http.StatusConflict, "state", fmt.Sprintf("job %s has already ended (%s)", id, job.State))
		return
	case err != nil:
		writeStoreError(w, r, "cancel job", err)
		return
	}
	status := http.StatusOK
	if outcome == store.KillRequested {
		status = http.StatusAccepted
	}
	writeJSON(w, status, JobView{Job: job, Placement: []store.PlacementRow{}})
}

// readSpec reads and checks a job's JSON body (Content-Type, size, the
// strict decoding); on a problem it has answered (4xx naming the field).
func readSpec(w http.ResponseWriter, r *http.Request) (scheduler.Spec, bool) {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || mt != "application/json" {
			writeError(w, http.StatusUnsupportedMediaType, "Content-Type", "send the job as Content-Type: application/json")
			return scheduler.Spec{}, false
		}
	} else {
		writeError(w, http.StatusUnsupportedMediaType, "Content-Type", "the Content-Type header is missing; send application/json")
		return scheduler.Spec{}, false
	}
	if refuseEncoded(w, r) {
		return scheduler.Spec{}, false
	}
	if r.ContentLength > MaxBodyBytes {
		writeError(w, http.StatusRequestEntityTooLarge, "", fmt.Sprintf("the body is larger than %d bytes", MaxBodyBytes))
		return scheduler.Spec{}, false
	}
	body := http.MaxBytesReader(w, r.Body, MaxBodyBytes)
	spec, err := scheduler.DecodeSpec(body)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) || strings.Contains(err.Error(), "http: request body too large") {
			writeError(w, http.StatusRequestEntityTooLarge, "", fmt.Sprintf("the body is larger than %d bytes", MaxBodyBytes))
			return scheduler.Spec{}, false
		}
		var fe *scheduler.FieldError
		if errors.As(err, &fe) {
			writeError(w, http.StatusBadRequest, fe.Field, fe.Msg)
			return scheduler.Spec{}, false
		}
		writeError(w, http.StatusBadRequest, "", err.Error())
		return scheduler.Spec{}, false
	}
	return spec, true
}

// refuseEncoded answers 415 naming Content-Encoding for a body sent with a
// content coding (gzip, ...): bodies are read as they come, and a
// compressed one would otherwise fail as malformed JSON at its first byte.
func refuseEncoded(w http.ResponseWriter, r *http.Request) bool {
	ce := strings.TrimSpace(strings.Join(r.Header.Values("Content-Encoding"), ", "))
	if ce == "" || strings.EqualFold(ce, "identity") {
		return false
	}
	writeError(w, http.StatusUnsupportedMediaType, "Content-Encoding",
		fmt.Sprintf("Content-Encoding %q is not supported: send the body uncompressed, without a Content-Encoding header", truncateQuery(ce)))
	return true
}

// planJob is POST /api/v1/plan: what would happen to this job if it were
// submitted now (where it would go, what it would add to the bill, when it
// would start and end), without storing anything.
func (s *Server) planJob(w http.ResponseWriter, r *http.Request) {
	spec, ok := readSpec(w, r)
	if !ok {
		return
	}
	if err := s.cfg.Containment.Check(&spec); err != nil {
		var fe *scheduler.FieldError
		if errors.As(err, &fe) {
			writeError(w, http.StatusBadRequest, fe.Field, fe.Msg)
		} else {
			writeError(w, http.StatusBadRequest, "", err.Error())
		}
		return
	}
	now := s.cfg.Now()
	// The job a submission would make: the same team, and so the same
	// budget, maximums and caps.
	job, principal := jobOf(r, spec, now)
	job.DeadlineAt = spec.ResolveDeadline(now)
	if err := scheduler.CheckNotBefore(&job); err != nil {
		var fe *scheduler.FieldError
		errors.As(err, &fe)
		writeError(w, http.StatusBadRequest, fe.Field, fe.Msg)
		return
	}
	if msg, refused := s.budgetRefused(r, job.Team, spec.ID); refused {
		writeJSON(w, http.StatusOK, scheduler.Preview{Rejected: msg, RefusedStatus: http.StatusForbidden})
		return
	}
	if spec.AutoExecutors() && !s.rightSize(w, &job, now) {
		return
	}
	ctx, cancel := s.dbContext(r)
	defer cancel()
	p, err := s.cfg.Preview(ctx, job, now)
	if err != nil {
		writeStoreError(w, r, "plan the job", err)
		return
	}
	// The refusals a submission would meet after the intake's decision, in
	// its order: the token's waiting jobs, then the team's caps.
	if p.Rejected == "" {
		msg, err := s.tokenWaitingRefusal(ctx, principal, spec.ID)
		if err != nil {
			writeStoreError(w, r, "count waiting jobs", err)
			return
		}
		if msg != "" {
			p = scheduler.Preview{Rejected: msg, RefusedStatus: http.StatusTooManyRequests, RefusedReason: RefusedTooManyWaiting}
		}
	}
	if p.Rejected == "" && !s.cfg.Teams.Get().Empty() {
		msg, err := s.teamCapRefusal(ctx, &job)
		if err != nil {
			writeStoreError(w, r, "count the team's jobs", err)
			return
		}
		if msg != "" {
			p = scheduler.Preview{Rejected: msg, RefusedStatus: http.StatusTooManyRequests, RefusedReason: RefusedTeamCap}
		}
	}
	writeJSON(w, http.StatusOK, p)
}

// stored reports whether a job of the id the client gave exists already:
// sending it again creates nothing, so a refusal of new jobs lets it
// through (CreateJob answers it, or a conflict).
func (s *Server) stored(r *http.Request, id string) bool {
	if id == "" {
		return false
	}
	ctx, cancel := s.dbContext(r)
	defer cancel()
	_, err := s.cfg.Store.GetJob(ctx, id)
	return err == nil
}

// rightSize chooses the executors of an "executors": "auto" job; on
// failure it has answered 400 naming the field.
func (s *Server) rightSize(w http.ResponseWriter, j *scheduler.Job, now time.Time) bool {
	var err error
	if s.cfg.RightSize != nil {
		err = s.cfg.RightSize(j, now)
	} else {
		err = scheduler.RightSize(nil, j, now)
	}
	if err != nil {
		writeError(w, http.StatusBadRequest, "executors", "cannot choose the executors: "+err.Error())
		return false
	}
	return true
}
