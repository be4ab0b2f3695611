package integration

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/sparkpack/sparkpack/mesossim"
)

// TestE2EPreemptionEvictsARegularJobForADeadlineJob: on two 4-cpu agents
// (real time in the emulator), a regular job holds both agents for 20 s.
// A deadline job that needs one agent's worth arrives with a deadline it
// can only make by starting at once. With --preemption mdf the regular
// job's driver is killed through Mesos, its reservations and quota given
// back, and it goes back to QUEUED (a preemption counted, its lost work
// accounted); the deadline job runs in the freed room and meets its
// deadline; the regular job runs again from scratch and finishes; nothing
// is left reserved in Mesos; /metrics counts the eviction.
func TestE2EPreemptionEvictsARegularJobForADeadlineJob(t *testing.T) {
	preemptionScenario(t, false)
}

// TestE2EPreemptionSurvivesSIGKILL: the same, with sparkpack killed with
// SIGKILL as soon as the eviction is decided: the next process carries it
// out (the decision is durable); the regular job is evicted once and runs
// again, both jobs finish, nothing is left reserved.
func TestE2EPreemptionSurvivesSIGKILL(t *testing.T) {
	preemptionScenario(t, true)
}

func preemptionScenario(t *testing.T, crash bool) {
	emu := startEmulator(t, mesossim.Config{Cluster: smallCluster(2), TimeScale: 1})
	db := e2eDB(t)
	flags := []string{"--preemption", "mdf", "--preempt-protect", "2s"}
	sp := startSparkpack(t, emu.URL, db, flags...)

	var b *browser
	if !crash {
		// The dashboard's queue panel, open while it happens. Opened
		// before the hog starts: a browser slow to start under load must
		// not delay the deadline job's arrival until the hog is nearly
		// done (then evicting it would no longer be needed).
		b = newBrowser(t)
		b.run(t, 30*time.Second, chromedp.Navigate(sp.API+"/#/"), chromedp.WaitVisible(`#queue-deadline`, chromedp.ByQuery))
	}
	hog := submit(t, sp.API, sparkJob("regular-hog", 2, 3, 2048, 20))
	waitState(t, sp.API, hog, 30*time.Second, "RUNNING")
	time.Sleep(time.Second) // some work done, to be lost
	dl := sparkJob("deadline-urgent", 1, 3, 2048, 4)
	dl["deadline"] = 12
	urgent := submit(t, sp.API, dl)
	if crash {
		waitEvent(t, sp.API, hog, "preemption requested: ", 20*time.Second)
		sp.kill()
		sp = startSparkpack(t, emu.URL, db, flags...)
	} else {
		// The evicted job waits in the regular queue while the deadline
		// job runs, marked as preempted (its reason is the next pass's).
		var badge, preempted string
		b.run(t, 30*time.Second,
			// The queues are rebuilt at every refresh: read in the page.
			pageTexts(25*time.Second, textRead{sel: `#queue-regular li[data-job="` + hog + `"] .preempted`, out: &preempted},
				textRead{sel: `#queue-regular li[data-job="` + hog + `"]`, out: &badge}))
		if !strings.Contains(badge, "preempted ×1") {
			t.Errorf("queue panel shows the evicted job as %q; want the preempted badge", badge)
		}
		b.screenshot(t, "dashboard-preempted")
	}

	u := waitState(t, sp.API, urgent, 60*time.Second, "FINISHED", "FAILED", "KILLED", "REJECTED")
	if u.State != "FINISHED" {
		t.Fatalf("deadline job ended %s (%s)", u.State, u.WaitingReason)
	}
	var full struct {
		SubmittedAt time.Time  `json:"submittedAt"`
		DeadlineAt  *time.Time `json:"deadlineAt"`
		FinishedAt  *time.Time `json:"finishedAt"`
	}
	getJSON(t, sp.API+"/api/v1/jobs/"+urgent, &full)
	if full.DeadlineAt != nil && full.FinishedAt != nil {
		t.Logf("deadline job: finished %.1f s before its deadline", full.DeadlineAt.Sub(*full.FinishedAt).Seconds())
	}
	// (A restart in the middle may cost the deadline: not checked then.)
	if !crash && (full.DeadlineAt == nil || full.FinishedAt == nil || full.FinishedAt.After(*full.DeadlineAt)) {
		t.Fatalf("deadline job finished %v, deadline %v: missed", full.FinishedAt, full.DeadlineAt)
	}

	h := waitState(t, sp.API, hog, 90*time.Second, "FINISHED", "FAILED", "KILLED")
	if h.State != "FINISHED" {
		t.Fatalf("evicted job ended %s, want FINISHED after running again", h.State)
	}
	var hv struct {
		Preemptions     int        `json:"preemptions"`
		LostWorkSeconds float64    `json:"lostWorkSeconds"`
		StartedAt       *time.Time `json:"startedAt"`
		LastStartedAt   *time.Time `json:"lastStartedAt"`
		Events          []struct {
			From   string `json:"from"`
			To     string `json:"to"`
			Reason string `json:"reason"`
		} `json:"events"`
	}
	getJSON(t, sp.API+"/api/v1/jobs/"+hog, &hv)
	if hv.Preemptions != 1 || hv.LostWorkSeconds < 0.5 || hv.LostWorkSeconds > 20 {
		t.Fatalf("evicted job: %d preemptions, %.1f s lost; want 1 and the time it had run", hv.Preemptions, hv.LostWorkSeconds)
	}
	if hv.StartedAt == nil || hv.LastStartedAt == nil || !hv.LastStartedAt.After(*hv.StartedAt) {
		t.Fatalf("evicted job: first run %v, last run %v; want a second run", hv.StartedAt, hv.LastStartedAt)
	}
	var requested, preempted, running int
	for _, e := range hv.Events {
		switch {
		case strings.HasPrefix(e.Reason, "preemption requested: "):
			requested++
		case e.To == "QUEUED" && strings.HasPrefix(e.Reason, "preempted: "):
			preempted++
		case e.To == "RUNNING" && e.From != "RUNNING":
			running++
		}
	}
	if requested != 1 || preempted != 1 || running != 2 {
		t.Fatalf("evicted job's events: %d requested, %d back to QUEUED as preempted, %d runs; want 1, 1, 2: %+v", requested, preempted, running, hv.Events)
	}
	u2, _ := getJob(sp.API, urgent)
	if !u2.StartedAt.Before(*hv.LastStartedAt) {
		t.Fatalf("the deadline job started %s, after the evicted job's second run %s", u2.StartedAt, hv.LastStartedAt)
	}
	waitNoLeftovers(t, emu.Master, 20*time.Second)
	if crash {
		return // the counters are the new process's
	}
	var facts string
	b.run(t, 30*time.Second,
		chromedp.Evaluate(`location.hash = "#/jobs/`+hog+`"`, nil),
		// Read in the page (the facts are rebuilt at every refresh:
		// chromedp.Text on a node just replaced read its text as "" once).
		pageText(`#job-facts [data-fact="preempted"]`, &facts, 25*time.Second))
	if !strings.HasPrefix(facts, "1 time, ") || !strings.Contains(facts, "of work lost") {
		t.Errorf("job page says %q about the eviction", facts)
	}

	resp, err := http.Get(sp.API + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	text := string(body)
	if !strings.Contains(text, `sparkpack_preemptions_total{policy="mdf"} 1`) {
		t.Errorf("/metrics does not count the eviction:\n%s", grepLines(text, "preempt"))
	}
	if strings.Contains(text, "sparkpack_preempted_work_seconds_total 0\n") || !strings.Contains(text, "sparkpack_preempted_work_seconds_total ") {
		t.Errorf("/metrics does not account the lost work:\n%s", grepLines(text, "preempt"))
	}
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// waitEvent waits until job id has an event whose reason starts with prefix.
func waitEvent(t *testing.T, api, id, prefix string, timeout time.Duration) {
	t.Helper()
	waitUntil(t, timeout, "job "+id+" to have an event "+prefix, func() bool {
		v, err := getJob(api, id)
		for _, e := range v.Events {
			if err == nil && strings.HasPrefix(e.Reason, prefix) {
				return true
			}
		}
		return false
	})
}

// TestDashboardShowsAJobThatWillMissWaiting: without preemption, a deadline
// job that cannot start before its latest start is shown in the queue panel
// as one that will miss waiting (latest start, room expected, preemption
// off), and /api/v1/queues says the same.
func TestDashboardShowsAJobThatWillMissWaiting(t *testing.T) {
	emu := startEmulator(t, mesossim.Config{Cluster: smallCluster(2), TimeScale: 1})
	sp := startSparkpack(t, emu.URL, e2eDB(t))
	// The browser first (as above: its start-up must not delay the
	// deadline job's arrival).
	b := newBrowser(t)
	b.run(t, 30*time.Second, chromedp.Navigate(sp.API+"/#/"), chromedp.WaitVisible(`#queue-deadline`, chromedp.ByQuery))
	hog := submit(t, sp.API, sparkJob("regular-hog", 2, 3, 2048, 60))
	waitState(t, sp.API, hog, 30*time.Second, "RUNNING")
	dl := sparkJob("deadline-urgent", 1, 3, 2048, 4)
	dl["deadline"] = 30
	urgent := submit(t, sp.API, dl)
	var line string
	b.run(t, 30*time.Second,
		// The queues are rebuilt at every refresh: read in the page.
		pageText(`#queue-deadline li[data-job="`+urgent+`"] .preemption`, &line, 25*time.Second))
	if !strings.Contains(line, "latest start") || !strings.Contains(line, "room expected") || !strings.Contains(line, "preemption is off") {
		t.Errorf("queue panel: %q", line)
	}
	b.screenshot(t, "dashboard-will-miss")
	var q struct {
		Deadline []struct {
			ID         string `json:"id"`
			Preemption *struct {
				WillMiss bool   `json:"willMiss"`
				Policy   string `json:"policy"`
			} `json:"preemption"`
		} `json:"deadline"`
	}
	getJSON(t, sp.API+"/api/v1/queues", &q)
	if len(q.Deadline) != 1 || q.Deadline[0].ID != urgent || q.Deadline[0].Preemption == nil || !q.Deadline[0].Preemption.WillMiss || q.Deadline[0].Preemption.Policy != "none" {
		t.Errorf("queues: %+v", q.Deadline)
	}
	for _, id := range []string{urgent, hog} {
		req, _ := http.NewRequest(http.MethodDelete, sp.API+"/api/v1/jobs/"+id, nil)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}
	waitState(t, sp.API, hog, 30*time.Second, "KILLED")
	waitNoLeftovers(t, emu.Master, 20*time.Second)
}
