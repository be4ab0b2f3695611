package integration

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/mesossim"
)

// teamJobView is what the teams test reads of a job.
type teamJobView struct {
	ID            string     `json:"id"`
	Team          string     `json:"team"`
	State         string     `json:"state"`
	WaitingReason string     `json:"waitingReason"`
	StartedAt     *time.Time `json:"startedAt"`
	Events        []struct {
		At time.Time `json:"at"`
		To string    `json:"to"`
	} `json:"events"`
}

func getTeamJob(t *testing.T, api, id string) teamJobView {
	t.Helper()
	var v teamJobView
	resp, err := http.Get(api + "/api/v1/jobs/" + id)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestE2ETeamsFloodingTeamDoesNotStarveOthers: three teams share 24 cpus
// (six 4-cpu agents). Team flood (max-cpus=12) submits 24 jobs first;
// analytics and ml then submit 4 each. Every job is the same size (one
// 2-cpu executor and a 1-cpu driver: 3 cpus), so without teams the queue
// (by demand, then submission) would run all of flood's jobs before any
// of the others'. With the teams file:
//   - flood's jobs beyond its maximum wait with "team flood at its cpu
//     limit", and flood never holds more than 12 cpus (its jobs' times in
//     RESERVING..end never overlap more than 4 at once);
//   - analytics' and ml's jobs all start while flood still has most of
//     its jobs waiting: each starts before flood's 12th job does;
//   - every job finishes, each carrying its team.
func TestE2ETeamsFloodingTeamDoesNotStarveOthers(t *testing.T) {
	emu := startEmulator(t, mesossim.Config{Cluster: smallCluster(6)})
	file := filepath.Join(t.TempDir(), "teams")
	if err := os.WriteFile(file, []byte("# three teams\nflood max-cpus=12\nanalytics weight=1\nml weight=1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sp := startSparkpack(t, emu.URL, e2eDB(t), "--teams", file)

	job := func(team string, i int) map[string]any {
		j := sparkJob(fmt.Sprintf("%s-%02d", team, i), 1, 2, 2048, 40)
		j["labels"] = map[string]string{"team": team}
		return j
	}
	var flood, others []string
	for i := 0; i < 24; i++ {
		flood = append(flood, submit(t, sp.API, job("flood", i)))
	}
	// Flood's jobs past its maximum wait for its limit, not for room.
	sawLimit := false
	for end := time.Now().Add(60 * time.Second); !sawLimit && time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		for _, id := range flood[len(flood)-4:] {
			if v := getTeamJob(t, sp.API, id); v.WaitingReason == "team flood at its cpu limit" {
				sawLimit = true
			}
		}
	}
	if !sawLimit {
		t.Fatal("no waiting flood job showed the reason \"team flood at its cpu limit\"")
	}
	for i := 0; i < 4; i++ {
		others = append(others, submit(t, sp.API, job("analytics", i)), submit(t, sp.API, job("ml", i)))
	}
	type span struct {
		from, to time.Time
	}
	var floodSpans []span
	var floodStarts []time.Time
	for _, id := range flood {
		v := waitTeamJobEnd(t, sp.API, id)
		if v.Team != "flood" {
			t.Fatalf("flood job %s has team %q", id, v.Team)
		}
		var s span
		for _, e := range v.Events {
			switch e.To {
			case "RESERVING":
				s.from = e.At
			case "FINISHED":
				s.to = e.At
			}
		}
		floodSpans = append(floodSpans, s)
		floodStarts = append(floodStarts, s.from)
	}
	sort.Slice(floodStarts, func(i, j int) bool { return floodStarts[i].Before(floodStarts[j]) })
	for _, id := range others {
		v := waitTeamJobEnd(t, sp.API, id)
		var started time.Time
		for _, e := range v.Events {
			if e.To == "RESERVING" {
				started = e.At
			}
		}
		if !started.Before(floodStarts[11]) {
			t.Errorf("team %s's job %s started at %s, after flood's 12th job (%s): it waited behind the flood",
				v.Team, id, started.Format(time.RFC3339Nano), floodStarts[11].Format(time.RFC3339Nano))
		}
	}
	// Flood's jobs holding resources at once: at most 12 cpus / 3.
	for _, a := range floodSpans {
		n := 0
		for _, b := range floodSpans {
			if !b.from.After(a.from) && b.to.After(a.from) {
				n++
			}
		}
		if n > 4 {
			t.Fatalf("%d flood jobs held resources at %s: more than its max-cpus=12 allows (3 cpus each)", n, a.from.Format(time.RFC3339Nano))
		}
	}
	waitNoLeftovers(t, emu.Master, 30*time.Second)
}

func waitTeamJobEnd(t *testing.T, api, id string) teamJobView {
	t.Helper()
	end := time.Now().Add(180 * time.Second)
	for {
		v := getTeamJob(t, api, id)
		switch v.State {
		case "FINISHED":
			return v
		case "FAILED", "KILLED", "REJECTED", "CANCELLED":
			t.Fatalf("job %s (team %s) ended %s", id, v.Team, v.State)
		}
		if time.Now().After(end) {
			t.Fatalf("job %s (team %s) still %s (%s)", id, v.Team, v.State, v.WaitingReason)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestE2ETeamsReloadOnSIGHUP: the binary reads its teams file again on
// SIGHUP (or within 5 s of a change: the test does not tell which); a bad file is refused (logged with its line) and the previous
// configuration stays in force; a good one replaces it.
func TestE2ETeamsReloadOnSIGHUP(t *testing.T) {
	emu := startEmulator(t, mesossim.Config{Cluster: smallCluster(2)})
	file := filepath.Join(t.TempDir(), "teams")
	write := func(s string) {
		if err := os.WriteFile(file, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("analytics weight=2\n")
	sp := startSparkpack(t, emu.URL, e2eDB(t), "--teams", file)
	weight := func() float64 {
		resp, err := http.Get(sp.API + "/api/v1/teams")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var v struct {
			Teams []struct {
				Name   string  `json:"name"`
				Weight float64 `json:"weight"`
			} `json:"teams"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&v); err != nil || len(v.Teams) != 1 {
			t.Fatalf("GET /api/v1/teams: %v %+v", err, v)
		}
		return v.Teams[0].Weight
	}
	waitFor := func(what string, ok func() bool) {
		t.Helper()
		for end := time.Now().Add(60 * time.Second); !ok(); time.Sleep(50 * time.Millisecond) {
			if time.Now().After(end) {
				t.Fatalf("%s: not within 60 s", what)
			}
		}
	}
	if weight() != 2 {
		t.Fatal("the teams file at start is not in force")
	}
	write("analytics weight=3\nml max-cpus=-1\n")
	sp.Cmd.Process.Signal(syscall.SIGHUP)
	waitFor("the refused reload logged", func() bool {
		return strings.Contains(sp.logText(), "line 2: team ml: max-cpus=-1: must not be negative")
	})
	if weight() != 2 {
		t.Fatal("a refused file replaced the configuration in force")
	}
	write("analytics weight=5\n")
	sp.Cmd.Process.Signal(syscall.SIGHUP)
	waitFor("the good file in force", func() bool { return weight() == 5 })
}
