package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"unicode/utf8"
)

// A job's logs: GET /api/v1/jobs/{id}/logs reads its Spark driver's stdout
// or stderr from the driver's Mesos sandbox, through the agent's files API
// (package offers). The leader reads them (followers forward the request):
// it knows the agents.

// MaxLogRead is the most one read of a log returns (?length).
const MaxLogRead = 1 << 20

// DefaultLogRead is ?length when it is not given.
const DefaultLogRead = 64 << 10

// LogQuery selects a piece of a job's driver log.
type LogQuery struct {
	File    string // "stdout" or "stderr"
	Offset  int64  // the first byte; -1: none, only the size (to start following at the end)
	Length  int64  // at most this many bytes
	Attempt int    // the driver launch; 0: the latest
}

// LogChunk is a piece of a job's driver log, with where it comes from.
type LogChunk struct {
	JobID   string `json:"jobId"`
	Attempt int    `json:"attempt"`
	TaskID  string `json:"taskId"`
	AgentID string `json:"agentId"`
	// Hostname is the agent's, when it is known.
	Hostname string `json:"hostname,omitempty"`
	File     string `json:"file"`
	// Data is the text read (invalid UTF-8 replaced), from Offset; the next
	// read goes on at Offset+len(bytes read), which is NextOffset.
	Data       string `json:"data"`
	Offset     int64  `json:"offset"`
	NextOffset int64  `json:"nextOffset"`
	// Size is the file's size when it was read.
	Size int64 `json:"size"`
	// Ended is true once the driver task ended: the file grows no more.
	Ended bool `json:"ended"`
	// SandboxURL lists the driver's sandbox on its agent (Mesos' files API).
	SandboxURL string `json:"sandboxUrl,omitempty"`
	// SparkUIURL is the running driver's web UI, as the driver logged it
	// ("Bound SparkUI ... started at http://..."); empty once it ended.
	SparkUIURL string `json:"sparkUiUrl,omitempty"`
}

// LogReader reads jobs' driver logs (the live scheduler's Mesos side).
type LogReader interface {
	ReadLog(ctx context.Context, jobID string, q LogQuery) (LogChunk, error)
}

// LogError is a log that cannot be read, with the status to answer and a
// message that says why and what to do.
type LogError struct {
	Status int
	Msg    string
	// Field names the parameter at fault (attempt: no such launch), ""
	// when the job is (the client tells "no driver yet" by it).
	Field string
}

func (e *LogError) Error() string { return e.Msg }

func parseLogQuery(q url.Values) (LogQuery, string, error) {
	lq := LogQuery{File: "stdout", Length: DefaultLogRead}
	for k, vs := range q {
		if len(vs) != 1 {
			return lq, k, fmt.Errorf("give %s once", k)
		}
		v := vs[0]
		if !utf8.ValidString(v) {
			return lq, k, errors.New("not valid UTF-8")
		}
		switch k {
		case "file":
			if v != "stdout" && v != "stderr" {
				return lq, k, fmt.Errorf("%q: want stdout or stderr", v)
			}
			lq.File = v
		case "offset":
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < -1 {
				return lq, k, fmt.Errorf("%q: want a byte offset from 0 (or -1 for only the size)", v)
			}
			lq.Offset = n
		case "length":
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 0 || n > MaxLogRead {
				return lq, k, fmt.Errorf("%q: want 0 to %d bytes", v, MaxLogRead)
			}
			lq.Length = n
		case "attempt":
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > 1000 {
				return lq, k, fmt.Errorf("%q: want a driver launch number from 1", v)
			}
			lq.Attempt = n
		default:
			return lq, k, fmt.Errorf("unknown query parameter %q (use file, offset, length, attempt)", k)
		}
	}
	return lq, "", nil
}

func (s *Server) getLogs(w http.ResponseWriter, r *http.Request) {
	id, ok := s.jobID(w, r)
	if !ok {
		return
	}
	q, field, err := parseLogQuery(r.URL.Query())
	if err != nil {
		writeError(w, http.StatusBadRequest, field, err.Error())
		return
	}
	chunk, err := s.cfg.Logs.ReadLog(r.Context(), id, q)
	var le *LogError
	switch {
	case errors.As(err, &le):
		if le.Status == http.StatusServiceUnavailable {
			w.Header().Set("Retry-After", "2")
		}
		writeError(w, le.Status, le.Field, le.Msg)
		return
	case err != nil && r.Context().Err() != nil:
		return // the client went away (a page closed while it read): nobody to answer
	case err != nil:
		loggerFrom(r.Context()).WithError(err).WithField("job", id).Warn("reading a job's log failed")
		w.Header().Set("Retry-After", "2")
		writeError(w, http.StatusServiceUnavailable, "", "could not read the log now: "+err.Error()+"; try again")
		return
	}
	if !utf8.ValidString(chunk.Data) {
		chunk.Data = string([]rune(chunk.Data)) // invalid bytes become U+FFFD
	}
	writeJSON(w, http.StatusOK, chunk)
}
