package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/api"
	"github.com/sparkpack/sparkpack/scheduler"
)

// TestPrintQueuesFairShare: sparkpack queue says how the regular queue is
// ordered, and with teams which teams are offered the room in which order,
// with what that order means, and each job's team.
func TestPrintQueuesFairShare(t *testing.T) {
	now := time.Now()
	job := func(id, team string) api.QueuedJobView {
		return api.QueuedJobView{QueuedJob: scheduler.QueuedJob{ID: id, Name: id, Team: team, Executors: 2, ExecutorCores: 2, ExecutorMemoryMB: 1024, SubmittedAt: now}}
	}
	q := &api.QueuesView{
		Regular:      []api.QueuedJobView{job("b1", "bi"), job("a2", "analytics"), job("x1", "")},
		RegularOrder: "fair-share",
		Teams: []scheduler.QueueTeam{{Team: "bi", Jobs: 1, BelowGuarantee: true, Share: 0.5},
			{Team: "analytics", Jobs: 4, Share: 0.28}, {Team: "", Jobs: 1, Share: 0.3}},
		Totals: scheduler.QueueLengths{Regular: 6},
	}
	var out bytes.Buffer
	printQueues(&out, q, false)
	s := out.String()
	for _, want := range []string{
		"regular queue: 6 jobs waiting (team by team in the fair share between teams, each team's largest demand first)",
		"teams offered the room in this order, as they stand now: bi (below its guarantee, 0.50 of it held; 1 job), analytics (weighted share 0.28; 4 jobs), (default) (weighted share 0.30; 1 job)",
		"a start ranks its team again",
		"TEAM",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("missing %q in:\n%s", want, s)
		}
	}
	lines := strings.Split(s, "\n")
	var rows []string
	for _, l := range lines {
		if strings.HasPrefix(l, "regular ") {
			rows = append(rows, strings.Join(strings.Fields(l)[:5], " "))
		}
	}
	if want := []string{"regular 1 b1 b1 bi", "regular 2 a2 a2 analytics", "regular 3 x1 x1 -"}; strings.Join(rows, "|") != strings.Join(want, "|") {
		t.Errorf("rows %q, want %q", rows, want)
	}
	out.Reset()
	printQueues(&out, &api.QueuesView{RegularOrder: "fifo", Totals: scheduler.QueueLengths{Regular: 3}, Regular: []api.QueuedJobView{job("f", "")}}, false)
	if s := out.String(); !strings.Contains(s, "regular queue: 3 jobs waiting (first submitted first)") || strings.Contains(s, "TEAM") {
		t.Errorf("fifo:\n%s", s)
	}
}
