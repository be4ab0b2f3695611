package api

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"

	"github.com/sparkpack/sparkpack/scheduler"
	"github.com/sparkpack/sparkpack/teams"
)

// RefusedTeamCap is the refusal reason (sparkpack_requests_refused_total)
// of a submission past its team's max-waiting or max-deadline.
const RefusedTeamCap = "team_cap"

// teamCounter is what the team caps need of the store (package store
// implements it).
type teamCounter interface {
	CountTeamJobs(ctx context.Context, team string) (waiting, deadline int, err error)
}

// underTeamCaps checks the job's team's max-waiting and max-deadline (the
// teams configuration in force). A resubmission of a job that exists
// already (same id) is let through: it creates nothing. On refusal it has
// answered (429, field "team"); the caller holds the team's submit lock.
func (s *Server) underTeamCaps(ctx context.Context, w http.ResponseWriter, r *http.Request, p Principal, job *scheduler.Job) bool {
	msg, err := s.teamCapRefusal(ctx, job)
	if err != nil {
		writeStoreError(w, r, "count the team's jobs", err)
		return false
	}
	if msg == "" {
		return true
	}
	s.guard.Count(r, p.Listener, RefusedTeamCap)
	writeError(w, http.StatusTooManyRequests, "team", msg)
	return false
}

// teamCapRefusal is why job is refused at its team's max-waiting or
// max-deadline ("" when it is not); a job of an id that exists is never
// refused. A submission and a preview both ask it.
func (s *Server) teamCapRefusal(ctx context.Context, job *scheduler.Job) (string, error) {
	t := s.cfg.Teams.Get().Team(job.Team)
	if t.MaxWaiting <= 0 && (t.MaxDeadline <= 0 || !job.IsDeadlineJob()) {
		return "", nil
	}
	tc, ok := s.cfg.Store.(teamCounter)
	if !ok {
		return "", nil
	}
	waiting, deadline, err := tc.CountTeamJobs(ctx, job.Team)
	if err != nil {
		return "", err
	}
	msg := ""
	switch {
	case t.MaxWaiting > 0 && waiting >= t.MaxWaiting:
		msg = fmt.Sprintf("team %s already has %d jobs waiting (SUBMITTED or QUEUED), the most its max-waiting allows (%d); submit again when some have started, or cancel some",
			teams.Label(job.Team), waiting, t.MaxWaiting)
	case t.MaxDeadline > 0 && job.IsDeadlineJob() && deadline >= t.MaxDeadline:
		msg = fmt.Sprintf("team %s already has %d deadline jobs not finished, the most its max-deadline allows (%d); submit it without a deadline, or again when some have finished",
			teams.Label(job.Team), deadline, t.MaxDeadline)
	default:
		return "", nil
	}
	if job.ID != "" {
		if _, err := s.cfg.Store.GetJob(ctx, job.ID); err == nil {
			return "", nil
		}
	}
	return msg, nil
}

// TeamsView is GET /api/v1/teams: the teams configuration in force.
type TeamsView struct {
	// Configured is false when serve runs without a teams file: every
	// team has the default settings.
	Configured bool         `json:"configured"`
	Teams      []teams.Team `json:"teams"`
	// Default is the settings of every team the file does not list (and
	// of jobs without a team).
	Default teams.Team `json:"default"`
	// Running is what each team's jobs hold now (cpus, memoryMB), from
	// the scheduler; absent where this instance does not schedule.
	Running map[string]TeamUsage `json:"running,omitempty"`
}

// TeamUsage is what a team's running jobs hold.
type TeamUsage struct {
	CPUs  float64 `json:"cpus"`
	MemMB float64 `json:"memoryMB"`
}

func (s *Server) getTeams(w http.ResponseWriter, r *http.Request) {
	cfg := s.cfg.Teams.Get()
	v := TeamsView{Configured: cfg != nil, Teams: []teams.Team{}, Default: teams.Default("")}
	if cfg != nil {
		v.Teams = cfg.Teams
	}
	if s.cfg.TeamUsage != nil {
		if use := s.cfg.TeamUsage(); use != nil {
			v.Running = map[string]TeamUsage{}
			for name, u := range use {
				v.Running[name] = TeamUsage{CPUs: u.CPUs, MemMB: u.MemMB}
			}
		}
	}
	writeJSON(w, http.StatusOK, v)
}

// putTeams replaces the teams file with the body (the file's own format,
// text/plain) and puts it in force, or refuses it (400 naming the line);
// the previous configuration then stays.
func (s *Server) putTeams(w http.ResponseWriter, r *http.Request) {
	if s.cfg.SaveTeams == nil {
		writeError(w, http.StatusConflict, "", "this server runs without a teams file (serve --teams FILE); start it with one to configure teams")
		return
	}
	if ct := r.Header.Get("Content-Type"); ct != "" {
		if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "text/plain" {
			writeError(w, http.StatusUnsupportedMediaType, "Content-Type", "send the teams file as Content-Type: text/plain (one team a line, as in the --teams file)")
			return
		}
	}
	if refuseEncoded(w, r) {
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
	if err != nil {
		writeError(w, http.StatusRequestEntityTooLarge, "", fmt.Sprintf("the body is larger than %d bytes", MaxBodyBytes))
		return
	}
	cfg, err := s.cfg.SaveTeams(body)
	var refused *teams.RefusedError
	switch {
	case errors.As(err, &refused):
		writeError(w, http.StatusBadRequest, "body", refused.Error())
		return
	case err != nil:
		s.logFor(r.Context()).WithError(err).Error("teams file not saved")
		writeError(w, http.StatusInternalServerError, "", "the teams file could not be written: "+err.Error())
		return
	}
	s.logFor(r.Context()).WithField("teams", len(cfg.Teams)).Info("teams configuration replaced through the API")
	writeJSON(w, http.StatusOK, TeamsView{Configured: true, Teams: cfg.Teams, Default: teams.Default("")})
}
