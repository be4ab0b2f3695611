package mesossim

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/sparkpack/sparkpack/clusterspec"
)

// registerAdmin adds the emulator's own endpoints (not part of Mesos):
//
//	GET  /sim/agents | /sim/tasks | /sim/frameworks | /sim/reservations | /sim/quotas
//	GET  /sim/launches                 how often each task id was launched (a chaos check: never twice)
//	POST /sim/agents                   body: a clusterspec agent (JSON)
//	POST /sim/agents/remove?id=A       remove for good
//	POST /sim/agents/lose?id=A         crash, tasks TASK_LOST
//	POST /sim/agents/power-off?id=A    stop its machine (idempotent)
//	POST /sim/agents/power-on?id=A     start it; it registers after the boot time (idempotent)
//	POST /sim/agents/crash?id=A        the agent process dies (SIGKILL); executors survive
//	POST /sim/agents/restart?id=A      the crashed agent starts again on its work directory
//	GET  /sim/bill                     what every agent cost while powered on (simulated time)
//	POST /sim/tasks/fail?task=T[&framework=F]
//	POST /sim/tasks/finish?task=T[&framework=F]
//	POST /sim/drop-connections
//	POST /sim/restart[?downtime=2s]
//	POST /sim/faults/updates?delay-max=200ms&duplicate=0.3&terminal-only=true   (status update faults; no query turns them off)
func (m *Master) registerAdmin(mux *http.ServeMux) {
	getJSON := func(f func() any) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if r.Method != http.MethodGet {
				w.Header().Set("Allow", "GET")
				writeError(w, errorf(http.StatusMethodNotAllowed, "use GET"))
				return
			}
			w.Header().Set("Content-Type", "application/json")
			enc := json.NewEncoder(w)
			enc.SetIndent("", "  ")
			_ = enc.Encode(f())
		}
	}
	post := func(f func(r *http.Request) error) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if r.Method != http.MethodPost {
				w.Header().Set("Allow", "POST")
				writeError(w, errorf(http.StatusMethodNotAllowed, "use POST"))
				return
			}
			if err := f(r); err != nil {
				writeError(w, errorf(http.StatusBadRequest, "%v", err))
				return
			}
			writeEmpty(w, http.StatusOK)
		}
	}
	agents := getJSON(func() any { return m.Agents() })
	mux.HandleFunc("/sim/agents", func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			post(func(r *http.Request) error {
				b, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
				if err != nil {
					return err
				}
				var a clusterspec.Agent
				if err := json.Unmarshal(b, &a); err != nil {
					return err
				}
				return m.AddAgent(a)
			})(w, r)
			return
		}
		agents(w, r)
	})
	mux.HandleFunc("/sim/tasks", getJSON(func() any { return m.Tasks() }))
	mux.HandleFunc("/sim/frameworks", getJSON(func() any { return m.Frameworks() }))
	mux.HandleFunc("/sim/reservations", getJSON(func() any { return m.Reservations() }))
	mux.HandleFunc("/sim/quotas", getJSON(func() any { return m.Quotas() }))
	mux.HandleFunc("/sim/launches", getJSON(func() any { return m.Launches() }))
	mux.HandleFunc("/sim/bill", getJSON(func() any { return m.Bill() }))
	id := func(r *http.Request) string { return r.URL.Query().Get("id") }
	mux.HandleFunc("/sim/agents/remove", post(func(r *http.Request) error { return m.RemoveAgent(id(r)) }))
	mux.HandleFunc("/sim/agents/lose", post(func(r *http.Request) error { return m.LoseAgent(id(r)) }))
	mux.HandleFunc("/sim/agents/power-off", post(func(r *http.Request) error { return m.PowerOff(id(r)) }))
	mux.HandleFunc("/sim/agents/power-on", post(func(r *http.Request) error { return m.PowerOn(id(r)) }))
	mux.HandleFunc("/sim/agents/crash", post(func(r *http.Request) error { return m.CrashAgent(id(r)) }))
	mux.HandleFunc("/sim/agents/restart", post(func(r *http.Request) error { return m.RestartAgent(id(r)) }))
	mux.HandleFunc("/sim/tasks/fail", post(func(r *http.Request) error {
		return m.FailTask(r.URL.Query().Get("framework"), r.URL.Query().Get("task"))
	}))
	mux.HandleFunc("/sim/tasks/finish", post(func(r *http.Request) error {
		return m.FinishTask(r.URL.Query().Get("framework"), r.URL.Query().Get("task"))
	}))
	mux.HandleFunc("/sim/drop-connections", post(func(r *http.Request) error { m.DropConnections(); return nil }))
	mux.HandleFunc("/sim/restart", post(func(r *http.Request) error {
		d := time.Duration(0)
		if s := r.URL.Query().Get("downtime"); s != "" {
			var err error
			if d, err = time.ParseDuration(s); err != nil {
				return err
			}
		}
		m.Restart(d)
		return nil
	}))
	mux.HandleFunc("/sim/faults/updates", post(func(r *http.Request) error {
		var f UpdateFaults
		q := r.URL.Query()
		if s := q.Get("delay-max"); s != "" {
			d, err := time.ParseDuration(s)
			if err != nil || d < 0 {
				return fmt.Errorf("delay-max %q: want a duration such as 200ms", s)
			}
			f.DelayMax = d
		}
		if s := q.Get("duplicate"); s != "" {
			p, err := strconv.ParseFloat(s, 64)
			if err != nil || p < 0 || p > 1 {
				return fmt.Errorf("duplicate %q: want a probability between 0 and 1", s)
			}
			f.DuplicateRate = p
		}
		if s := q.Get("terminal-only"); s != "" {
			b, err := strconv.ParseBool(s)
			if err != nil {
				return fmt.Errorf("terminal-only %q: want true or false", s)
			}
			f.TerminalOnly = b
		}
		m.SetUpdateFaults(f)
		return nil
	}))
}
