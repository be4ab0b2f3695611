package lifecycle

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/placement"
	"github.com/sparkpack/sparkpack/scheduler"
)

// TestTranscripts replays testdata/*.txt: each transcript starts a job,
// feeds events ("> ...") and expects exactly the actions listed after
// each ("< ..."), with state checks ("= ..."). The format:
//
//	== title
//	start phase=reserving retries=1 offers kill preempt=why driver=SPEC plan=A:1,B:1
//	> EVENT @SECONDS key=value ...   (values may be "quoted")
//	< ACTION                          (lifecycle.Action.Format, times from 0)
//	= phase=P outcome=S reason~TEXT kill lost=AGENT
//
// A driver SPEC is task:STATE:flags, flags among started, ended, ran,
// agent=X, attempt=N, lost=N, running=SECONDS (RunningAt),
// launched=SECONDS (LaunchedAt) and updated=SECONDS (UpdatedAt, when
// stored). A plan is AGENT:EXECUTORS,... (by default A:1,B:1). Besides the machine's events,
// the harness knows
//
//	> status @T state=TASK_X agent=A message=M invalid-offers executor reason=R
//	    a task status as DriverStatus takes it (executor: its source is
//	    SOURCE_EXECUTOR): ignored ("< ignored") unless TakesStatus, else
//	    stored at T (AfterStatus; stored as store.PutDriver does) and stepped;
//	> sending @T agent=A
//	    the framework about to send the ACCEPT: "< withdrawn" unless
//	    MaySend, else EvLaunchSending then EvLaunchRecorded (the
//	    LAUNCH_SENT record, launched at T unless sent before, stored);
//	> restart @T
//	    a crash and a restart: a new machine from what the harness
//	    stored (phase reported, driver record, kill/eviction requests),
//	    as Cluster.resume builds it, started with EvStart.
func TestTranscripts(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.txt"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no transcripts: %v", err)
	}
	for _, f := range files {
		for _, tr := range parseFile(t, f) {
			t.Run(filepath.Base(f)+"/"+tr.title, func(t *testing.T) { tr.run(t) })
		}
	}
}

type tline struct {
	no   int
	kind byte // '>', '<', '='
	text string
}

type transcript struct {
	title string
	start string
	lines []tline
}

func parseFile(t *testing.T, path string) []*transcript {
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	var out []*transcript
	sc := bufio.NewScanner(fh)
	no := 0
	for sc.Scan() {
		no++
		l := strings.TrimSpace(sc.Text())
		switch {
		case l == "" || strings.HasPrefix(l, "#"):
		case strings.HasPrefix(l, "=="):
			out = append(out, &transcript{title: strings.TrimSpace(l[2:])})
		case len(out) == 0:
			t.Fatalf("%s:%d: text before the first ==", path, no)
		case strings.HasPrefix(l, "start"):
			out[len(out)-1].start = strings.TrimSpace(l[5:])
		case l[0] == '>' || l[0] == '<' || l[0] == '=':
			out[len(out)-1].lines = append(out[len(out)-1].lines, tline{no: no, kind: l[0], text: strings.TrimSpace(l[1:])})
		default:
			t.Fatalf("%s:%d: cannot read %q", path, no, l)
		}
	}
	return out
}

// fields splits `word key=value key="quoted value"` into the word and keys.
func fields(t *testing.T, s string) (string, map[string]string) {
	t.Helper()
	kv := map[string]string{}
	var word string
	for s = strings.TrimSpace(s); s != ""; s = strings.TrimSpace(s) {
		var tok string
		if i := strings.Index(s, `="`); i >= 0 && !strings.Contains(s[:i], " ") {
			j := strings.Index(s[i+2:], `"`)
			if j < 0 {
				t.Fatalf("unterminated quote in %q", s)
			}
			kv[s[:i]] = s[i+2 : i+2+j]
			s = s[i+3+j:]
			continue
		}
		if i := strings.IndexByte(s, ' '); i >= 0 {
			tok, s = s[:i], s[i:]
		} else {
			tok, s = s, ""
		}
		if k, v, ok := strings.Cut(tok, "="); ok {
			kv[k] = v
		} else if word == "" && !strings.HasPrefix(tok, "@") {
			word = tok
		} else {
			kv[tok] = ""
		}
	}
	return word, kv
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	if s == "" {
		return 0
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func driverSpec(t *testing.T, spec string) scheduler.DriverRecord {
	t.Helper()
	parts := strings.SplitN(spec, ":", 3)
	for len(parts) < 3 {
		parts = append(parts, "")
	}
	d := scheduler.DriverRecord{JobID: testJob, TaskID: parts[0], State: parts[1]}
	for _, f := range strings.Split(parts[2], ",") {
		k, v, _ := strings.Cut(f, "=")
		switch k {
		case "":
		case "started":
			d.Started = true
		case "ended":
			d.Ended = true
		case "agent":
			d.AgentID = v
		case "attempt":
			d.Attempt = atoi(t, v)
		case "lost":
			d.LostLaunches = atoi(t, v)
		case "ran":
			d.Ran = true
		case "running":
			d.RunningAt = t0.Add(time.Duration(atoi(t, v)) * time.Second)
		case "launched":
			d.LaunchedAt = t0.Add(time.Duration(atoi(t, v)) * time.Second)
		case "updated":
			d.UpdatedAt = t0.Add(time.Duration(atoi(t, v)) * time.Second)
		default:
			t.Fatalf("driver flag %q", f)
		}
	}
	return d
}

const testJob = "j1"

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func testCfg() Config {
	return Config{Retry: time.Second, LaunchTimeout: 2 * time.Minute, AgentWait: 5 * time.Minute, MaxLostLaunches: 5}
}

var phases = map[string]Phase{"reserving": Reserving, "launching": Launching, "running": Running, "releasing": Releasing, "done": Done}

// stored is what the harness's store holds, for restarts.
type stored struct {
	phase   Phase
	driver  scheduler.DriverRecord
	kill    bool
	preempt string
}

// putDriver stores d at T as store.PutDriver does: an older launch's
// record changes nothing; the launch's Ran is only ever set and its first
// RunningAt and LaunchedAt stay (driver_launches); UpdatedAt is T.
func (db *stored) putDriver(d scheduler.DriverRecord, at time.Time) {
	old := db.driver
	if old.Attempt > d.Attempt {
		return
	}
	if old.Attempt == d.Attempt {
		d.Ran = d.Ran || old.Ran
		if !old.RunningAt.IsZero() {
			d.RunningAt = old.RunningAt
		}
		if !old.LaunchedAt.IsZero() {
			d.LaunchedAt = old.LaunchedAt
		}
	}
	d.UpdatedAt = at
	db.driver = d
}

func (tr *transcript) run(t *testing.T) {
	_, kv := fields(t, "start "+tr.start)
	cfg := testCfg()
	_, cfg.FromOffers = kv["offers"]
	job := scheduler.Job{Spec: scheduler.Spec{ID: testJob, Retries: atoi(t, kv["retries"])}}
	_, job.KillRequested = kv["kill"]
	job.PreemptRequested = kv["preempt"]
	plan := placement.Plan{Assignments: []placement.Assignment{{AgentID: "A", Executors: 1}, {AgentID: "B", Executors: 1}}}
	if p, ok := kv["plan"]; ok {
		plan.Assignments = nil
		for _, a := range strings.Split(p, ",") {
			agent, n, _ := strings.Cut(a, ":")
			plan.Assignments = append(plan.Assignments, placement.Assignment{AgentID: agent, Executors: atoi(t, n)})
		}
	}
	ph := Reserving
	if p, ok := kv["phase"]; ok {
		ph = phases[p]
	}
	var drv scheduler.DriverRecord
	if d, ok := kv["driver"]; ok {
		drv = driverSpec(t, d)
	}
	st := New(cfg, job, plan, ph, drv, t0)
	db := stored{phase: ph, driver: drv, kill: job.KillRequested, preempt: job.PreemptRequested}

	var got []string
	step := func(ev Event) {
		var acts []Action
		st, acts = Step(st, ev)
		for _, a := range acts {
			got = append(got, a.Format(t0))
		}
	}
	flush := func(l tline, want []string) {
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("line %d: after the event before it, actions\n  %s\nwant\n  %s", l.no, strings.Join(got, "\n  "), strings.Join(want, "\n  "))
		}
		got = nil
	}
	var want []string
	for i, l := range tr.lines {
		switch l.kind {
		case '<':
			want = append(want, l.text)
		case '=':
			flush(l, want)
			want = nil
			checkState(t, l, st)
		case '>':
			if i > 0 {
				flush(l, want)
			}
			want = nil
			word, kv := fields(t, l.text)
			at := t0
			for _, f := range strings.Fields(l.text) {
				if strings.HasPrefix(f, "@") {
					s, err := strconv.ParseFloat(f[1:], 64)
					if err != nil {
						t.Fatalf("line %d: %v", l.no, err)
					}
					at = t0.Add(time.Duration(s * float64(time.Second)))
				}
			}
			ev := Event{At: at, Agent: kv["agent"], Name: kv["name"], Task: kv["task"], Reason: kv["reason"],
				Refused: kv["refused"], N: atoi(t, kv["n"])}
			_, ev.Conflict = kv["conflict"]
			_, ev.Failed = kv["failed"]
			_, ev.Kill = kv["kill"]
			if e, ok := kv["err"]; ok {
				ev.Err = errors.New(e)
			}
			if d, ok := kv["driver"]; ok {
				ev.Driver = driverSpec(t, d)
			}
			switch word {
			case "status":
				if !st.TakesStatus(st.Driver.TaskID) || (kv["task"] != "" && kv["task"] != st.Driver.TaskID) {
					got = append(got, "ignored")
					continue
				}
				_, inv := kv["invalid-offers"]
				_, exe := kv["executor"]
				rec := AfterStatus(st.Driver, TaskUpdate{State: kv["state"], Message: kv["message"], AgentID: kv["agent"], InvalidOffers: inv,
					FromExecutor: exe, Reason: kv["reason"], At: at})
				db.putDriver(rec, at)
				step(Event{Kind: EvDriverRecorded, At: at, Driver: rec, Name: kv["name"]})
			case "sending":
				if !st.MaySend(st.Driver.TaskID) {
					got = append(got, "withdrawn")
					continue
				}
				rec := st.SendingRecord(kv["agent"], at)
				step(Event{Kind: EvLaunchSending, At: at, Agent: kv["agent"]})
				if _, fail := kv["store-fails"]; fail {
					step(Event{Kind: EvLaunchRecordFailed, At: at})
					continue
				}
				db.putDriver(rec, at)
				step(Event{Kind: EvLaunchRecorded, At: at, Driver: rec})
			case "restart":
				d := db.driver
				if db.phase == Reserving {
					d = scheduler.DriverRecord{}
				}
				j := job
				j.KillRequested, j.PreemptRequested = db.kill, db.preempt
				st = New(cfg, j, plan, db.phase, d, at)
				step(Event{Kind: EvStart, At: at})
			default:
				kind, ok := eventKinds[word]
				if !ok {
					t.Fatalf("line %d: unknown event %q", l.no, word)
				}
				ev.Kind = kind
				switch kind {
				case EvKill:
					db.kill = true
				case EvPreempt:
					db.preempt = ev.Reason
				case EvDriverNamed:
					if ev.Err == nil {
						db.putDriver(ev.Driver, at)
					}
				case EvJobRead:
					// what the store holds, and what the line adds (asked
					// for in another process)
					ev.Kill = ev.Kill || db.kill
					if ev.Reason == "" {
						ev.Reason = db.preempt
					}
				}
				prev := st
				step(ev)
				if kind == EvReported && ev.Err == nil {
					switch {
					case prev.Reporting == scheduler.Launching:
						db.phase = Launching
					case prev.Reporting == scheduler.Running:
						db.phase = Running
					}
				}
			}
		}
	}
	flush(tline{no: -1}, want)
}

var eventKinds = func() map[string]EventKind {
	m := map[string]EventKind{}
	for i, n := range eventNames {
		m[n] = EventKind(i)
	}
	return m
}()

func checkState(t *testing.T, l tline, st State) {
	t.Helper()
	_, kv := fields(t, "state "+l.text)
	for k, v := range kv {
		var got string
		switch k {
		case "phase":
			got = st.Phase.String()
		case "outcome":
			got = string(st.Outcome)
		case "lost":
			got = st.Lost
		case "lost-executors":
			got = strings.Join(st.LostExecutors, ",")
		case "attempt":
			got = strconv.Itoa(st.Driver.Attempt)
		case "lost-launches":
			got = strconv.Itoa(st.Driver.LostLaunches)
		case "kill":
			got, v = strconv.FormatBool(st.Kill), "true"
		case "reason":
			if !strings.Contains(st.Reason, v) {
				t.Fatalf("line %d: reason %q does not contain %q", l.no, st.Reason, v)
			}
			continue
		default:
			t.Fatalf("line %d: unknown state key %q", l.no, k)
		}
		if got != v {
			t.Fatalf("line %d: %s = %q, want %q (state %+v)", l.no, k, got, v, st)
		}
	}
}

// TestStepIsPure: Step never changes the state it is given (its slices
// included) and gives the same answer twice.
func TestStepIsPure(t *testing.T) {
	st := New(testCfg(), scheduler.Job{Spec: scheduler.Spec{ID: testJob}}, placement.Plan{}, Running,
		scheduler.DriverRecord{JobID: testJob, TaskID: "t-1", State: "TASK_RUNNING", Started: true, AgentID: "D"}, t0)
	st.LostExecutors = []string{"X"}
	ev := Event{Kind: EvAgentLost, At: t0, Agent: "Y"}
	a1, acts1 := Step(st, ev)
	a2, acts2 := Step(st, ev)
	if len(st.LostExecutors) != 1 || fmt.Sprint(a1) != fmt.Sprint(a2) || fmt.Sprint(acts1) != fmt.Sprint(acts2) {
		t.Fatalf("Step is not pure: %v / %v, %v / %v", a1, a2, acts1, acts2)
	}
}
