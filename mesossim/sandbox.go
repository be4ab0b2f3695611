package mesossim

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Sandboxes: the stdout and stderr an executor writes in its Mesos
// sandbox, served as a real 1.12 agent serves them through its files API
// (GET /files/read and /files/browse on the agent's own address, with the
// virtual path /frameworks/FID/executors/EID/runs/latest). The answers
// follow what a real agent gave (checked by hand against the build in
// ../shared/mesos; the real-Mesos tests read a real sandbox the same way):
// read answers {"data","offset"}; no offset (or -1) answers the size; a
// negative length, a directory or a missing path is a 400 in plain text;
// a path nobody attached is a 404 with no body; browse lists a directory's
// files and answers [] for a file.
//
// The content is SIMULATED: the command executor's own lines (on stderr,
// as a real one logs), and for a simulated Spark driver log4j-style lines
// of a Spark 3.5 driver and the application's output, clearly marked as
// the emulator's.

const (
	// maxSandboxBytes caps each file (a runaway writer must not grow the
	// emulator without bound); what would pass it is dropped with a note.
	maxSandboxBytes = 256 << 10
	// keepEndedSandboxes is how many ended executors' sandboxes are kept,
	// oldest dropped first (a real agent garbage-collects them too).
	keepEndedSandboxes = 2000
	// defaultReadLength is how much one read returns at most (a real agent
	// pages large files too).
	defaultReadLength = 64 << 10
)

type sandbox struct {
	dir            string // the virtual path of runs/latest
	stdout, stderr []byte
	mtime          time.Time
	ended          bool
}

func sandboxDir(frameworkID, executorID string) string {
	return "/frameworks/" + frameworkID + "/executors/" + executorID + "/runs/latest"
}

// sandboxLocked returns t's executor's sandbox, made on first use.
func (m *Master) sandboxLocked(t *task) *sandbox {
	eid := t.executorID
	if eid == "" {
		eid = t.id // a command task's executor is named after the task
	}
	dir := sandboxDir(t.fw.id, eid)
	if s := m.sandboxes[dir]; s != nil {
		return s
	}
	s := &sandbox{dir: dir, mtime: time.Now()}
	m.sandboxes[dir] = s
	return s
}

// sandboxWriteLocked appends lines to one of t's files ("stdout" or "stderr").
func (m *Master) sandboxWriteLocked(t *task, file string, lines ...string) {
	s := m.sandboxLocked(t)
	buf := &s.stdout
	if file == "stderr" {
		buf = &s.stderr
	}
	for _, l := range lines {
		if len(*buf)+len(l)+1 > maxSandboxBytes {
			if !strings.HasSuffix(string(*buf), "[mesossim: file full]\n") {
				*buf = append(*buf, "[mesossim: file full]\n"...)
			}
			return
		}
		*buf = append(*buf, l...)
		*buf = append(*buf, '\n')
	}
	s.mtime = time.Now()
}

// glogLine is a line as the command executor logs it (glog format).
func glogLine(now time.Time, src, msg string) string {
	return fmt.Sprintf("I%s %5d %s] %s", now.Format("0102 15:04:05.000000"), 1, src, msg)
}

// sparkLogLine is a line as Spark 3.5's default log4j2 console layout writes it.
func sparkLogLine(now time.Time, level, logger, msg string) string {
	return now.Format("06/01/02 15:04:05") + " " + level + " " + logger + ": " + msg
}

// sandboxTaskStartedLocked writes what an executor writes when it starts t.
func (m *Master) sandboxTaskStartedLocked(t *task) {
	now := time.Now()
	m.sandboxWriteLocked(t, "stderr",
		glogLine(now, "exec.cpp:164", "Version: "+Version+" (EMULATED by mesossim)"),
		glogLine(now, "exec.cpp:237", "Executor registered on agent "+t.agent.id),
		glogLine(now, "executor.cpp:722", "Starting task "+t.id))
	if job := t.spark; job != nil {
		m.sandboxWriteLocked(t, "stderr",
			sparkLogLine(now, "INFO", "SparkContext", "Running Spark version 3.5.1 (SIMULATED by the Mesos emulator: no JVM runs)"),
			sparkLogLine(now, "INFO", "SparkContext", "Submitted application: "+job.conf.AppName),
			sparkLogLine(now, "INFO", "SparkUI", "Bound SparkUI to 0.0.0.0, and started at http://"+t.agent.spec.Hostname+":4040"),
			sparkLogLine(now, "INFO", "MesosCoarseGrainedSchedulerBackend", "Registering in role "+job.conf.Role))
	}
}

// sandboxSparkLocked writes a simulated Spark driver's log line.
func (m *Master) sandboxSparkLocked(job *sparkJob, logger, msg string) {
	if job == nil || job.driver == nil {
		return
	}
	m.sandboxWriteLocked(job.driver, "stderr", sparkLogLine(time.Now(), "INFO", logger, msg))
}

// sandboxTaskEndedLocked writes the last lines of t's executor and marks
// its sandbox ended (kept until keepEndedSandboxes newer ones end).
func (m *Master) sandboxTaskEndedLocked(t *task, msg string) {
	now := time.Now()
	if t.spark != nil {
		if strings.HasSuffix(msg, "status 0") {
			m.sandboxWriteLocked(t, "stdout", "Pi is roughly 3.14159 (simulated output of the emulated application "+t.spark.conf.AppName+")")
		}
		m.sandboxWriteLocked(t, "stderr",
			sparkLogLine(now, "INFO", "SparkContext", "Successfully stopped SparkContext"))
	}
	if msg != "" {
		m.sandboxWriteLocked(t, "stderr", glogLine(now, "executor.cpp:1041", msg))
	}
	s := m.sandboxLocked(t)
	if s.ended {
		return
	}
	s.ended = true
	m.sandboxOrder = append(m.sandboxOrder, s.dir)
	for len(m.sandboxOrder) > keepEndedSandboxes {
		delete(m.sandboxes, m.sandboxOrder[0])
		m.sandboxOrder = m.sandboxOrder[1:]
	}
}

// AgentHandler serves the agents' HTTP endpoints of the emulator: the files
// API of every emulated agent (they share one address: the path names the
// framework and executor, which tell the agents apart).
func (m *Master) AgentHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/files/read", m.handleFilesRead)
	mux.HandleFunc("/files/browse", m.handleFilesBrowse)
	mux.HandleFunc("/health", func(w http.ResponseWriter, r *http.Request) { writeEmpty(w, http.StatusOK) })
	return mux
}

func plainError(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(code)
	fmt.Fprintln(w, msg)
}

// findFile resolves a path of the files API: the sandbox and the file in it
// ("" for the directory itself).
func (m *Master) findFile(p string) (*sandbox, string, bool) {
	p = strings.TrimRight(p, "/")
	if s := m.sandboxes[p]; s != nil {
		return s, "", true
	}
	i := strings.LastIndex(p, "/")
	if i < 0 {
		return nil, "", false
	}
	s, file := m.sandboxes[p[:i]], p[i+1:]
	if s == nil || (file != "stdout" && file != "stderr") {
		return nil, "", false
	}
	return s, file, true
}

func (m *Master) handleFilesRead(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	p := q.Get("path")
	if p == "" {
		plainError(w, http.StatusBadRequest, "Expecting 'path=value' in query.")
		return
	}
	offset, length := int64(-1), int64(-1)
	if v := q.Get("offset"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			plainError(w, http.StatusBadRequest, "Failed to parse offset: "+v)
			return
		}
		offset = n
	}
	if v := q.Get("length"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			plainError(w, http.StatusBadRequest, "Failed to parse length: "+v)
			return
		}
		if n < 0 {
			plainError(w, http.StatusBadRequest, fmt.Sprintf("Negative length provided: %d.", n))
			return
		}
		length = n
	}
	m.mu.Lock()
	s, file, ok := m.findFile(p)
	var data []byte
	if ok && file != "" {
		if file == "stdout" {
			data = s.stdout
		} else {
			data = s.stderr
		}
		data = append([]byte(nil), data...)
	}
	m.mu.Unlock()
	switch {
	case !ok:
		w.WriteHeader(http.StatusNotFound)
		return
	case file == "":
		plainError(w, http.StatusBadRequest, "Cannot read a directory.")
		return
	}
	size := int64(len(data))
	out := struct {
		Data   string `json:"data"`
		Offset int64  `json:"offset"`
	}{Offset: size}
	if offset >= 0 {
		out.Offset = offset
		if offset < size {
			n := size - offset
			if length < 0 {
				length = defaultReadLength
			}
			n = min(n, length)
			out.Data = string(data[offset : offset+n])
		}
	}
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false) // a real agent sends "<" as it is
	_ = enc.Encode(out)
}

func (m *Master) handleFilesBrowse(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Query().Get("path")
	if p == "" {
		plainError(w, http.StatusBadRequest, "Expecting 'path=value' in query.")
		return
	}
	type entry struct {
		GID   string  `json:"gid"`
		Mode  string  `json:"mode"`
		MTime float64 `json:"mtime"`
		NLink int     `json:"nlink"`
		Path  string  `json:"path"`
		Size  int     `json:"size"`
		UID   string  `json:"uid"`
	}
	m.mu.Lock()
	s, file, ok := m.findFile(p)
	var out []entry
	if ok && file == "" {
		mt := float64(s.mtime.Unix())
		out = []entry{
			{GID: "root", Mode: "-rw-r--r--", MTime: mt, NLink: 1, Path: s.dir + "/stderr", Size: len(s.stderr), UID: "root"},
			{GID: "root", Mode: "-rw-r--r--", MTime: mt, NLink: 1, Path: s.dir + "/stdout", Size: len(s.stdout), UID: "root"},
		}
	}
	m.mu.Unlock()
	if !ok {
		w.WriteHeader(http.StatusNotFound)
		return
	}
	if out == nil {
		out = []entry{}
	}
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false) // a real agent sends "<" as it is
	_ = enc.Encode(out)
}
