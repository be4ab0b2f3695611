package scheduler

import (
	"context"
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/placement"
	"github.com/sparkpack/sparkpack/teams"
)

// TestFairBefore: the order between teams fairOrder's heap keeps and the
// preview reads: below the guarantee first (least filled first), then the
// smaller weighted share, then the least recent start, then the name.
func TestFairBefore(t *testing.T) {
	early, late := t0, t0.Add(time.Minute)
	cases := []struct {
		name string
		a, b teamRank
		want bool // a before b
	}{
		{"below its guarantee goes before a smaller share", teamRank{team: "g", below: true, key: 0.9}, teamRank{team: "x", key: 0.01}, true},
		{"not below goes after one below", teamRank{team: "x", key: 0.01}, teamRank{team: "g", below: true, key: 0.9}, false},
		{"both below: the less filled first", teamRank{team: "g", below: true, key: 0.2}, teamRank{team: "h", below: true, key: 0.5}, true},
		{"smaller weighted share first", teamRank{team: "z", key: 0.10}, teamRank{team: "a", key: 0.31}, true},
		{"larger weighted share after", teamRank{team: "a", key: 0.31}, teamRank{team: "z", key: 0.10}, false},
		{"equal shares: the least recent start first", teamRank{team: "z", key: 0.3, last: early}, teamRank{team: "a", key: 0.3, last: late}, true},
		{"equal shares: never started goes first", teamRank{team: "z", key: 0.3}, teamRank{team: "a", key: 0.3, last: early}, true},
		{"all equal: by name", teamRank{team: "a", key: 0.3, last: early}, teamRank{team: "b", key: 0.3, last: early}, true},
		{"itself is not before itself", teamRank{team: "a", key: 0.3}, teamRank{team: "a", key: 0.3}, false},
	}
	for _, c := range cases {
		if got := fairBefore(c.a, c.b); got != c.want {
			t.Errorf("%s: fairBefore = %v, want %v", c.name, got, c.want)
		}
	}
}

// TestFairAhead: a previewed job's place in the pass's fair-share order:
// every waiting job of the teams ranked before its team, then its own
// team's jobs before it; the teams before in the order they are offered.
func TestFairAhead(t *testing.T) {
	ml := teamRank{team: "ml", key: 0.31}
	etl := teamWaiting{rank: teamRank{team: "etl", key: 0.21}, jobs: 2}
	rep := teamWaiting{rank: teamRank{team: "reporting", key: 0.05}, jobs: 3}
	big := teamWaiting{rank: teamRank{team: "big", key: 0.60}, jobs: 7}
	g := teamWaiting{rank: teamRank{team: "g", below: true, key: 0.5}, jobs: 1}
	none := teamWaiting{rank: teamRank{team: "idle", key: 0}, jobs: 0}
	cases := []struct {
		name     string
		own      teamRank
		ownAhead int
		others   []teamWaiting
		want     int
		before   []string
	}{
		{"no other team: its own team's jobs before it", ml, 4, nil, 4, nil},
		{"over its share: behind the teams with smaller shares", ml, 1, []teamWaiting{big, etl, rep}, 6, []string{"reporting", "etl"}},
		{"smallest share: before every other team's jobs", teamRank{team: "new", key: 0}, 0, []teamWaiting{big, etl, rep}, 0, nil},
		{"a team below its guarantee goes first", teamRank{team: "new", key: 0}, 0, []teamWaiting{g, etl}, 1, []string{"g"}},
		{"a team with nothing waiting is not before it", ml, 0, []teamWaiting{none, etl}, 2, []string{"etl"}},
		{"the largest share: behind all", big.rank, 2, []teamWaiting{g, etl, rep}, 8, []string{"g", "reporting", "etl"}},
	}
	for _, c := range cases {
		got, before := fairAhead(c.own, c.ownAhead, c.others)
		var names []string
		for _, b := range before {
			names = append(names, b.rank.team)
		}
		if got != c.want || !slices.Equal(names, c.before) {
			t.Errorf("%s: ahead %d, teams before %v; want %d, %v", c.name, got, names, c.want, c.before)
		}
	}
}

// TestFairAheadIsFairOrder: when no job starts, fairAhead's place of every
// waiting regular job is where the pass's fairOrder tries it, over random
// teams (weights, guarantees), running jobs, last starts and queues.
func TestFairAheadIsFairOrder(t *testing.T) {
	for seed := int64(1); seed <= 200; seed++ {
		rng := rand.New(rand.NewSource(seed))
		nTeams := 1 + rng.Intn(5)
		var lines []string
		for i := 0; i < nTeams; i++ {
			line := fmt.Sprintf("t%d weight=%d", i, 1+rng.Intn(3))
			if rng.Intn(3) == 0 {
				line += fmt.Sprintf(" guaranteed-cpus=%d", 2+rng.Intn(8))
			}
			lines = append(lines, line)
		}
		cfg := teamsOf(t, strings.Join(lines, "\n"))
		snap := snapOf([]placement.Agent{agent("a1", 64, 262144, 0.5)})
		starts := map[string]time.Time{}
		var running []runningJob
		for i := 0; i < rng.Intn(6); i++ {
			j := mkJob(fmt.Sprintf("r%d", i), 1+rng.Intn(3), 1+rng.Intn(2), inTeam(fmt.Sprintf("t%d", rng.Intn(nTeams))))
			running = append(running, runningJob{id: j.ID, state: Running, team: j.Team, demand: DemandOf(&j), driverCPUs: 1, driverMemMB: 1024})
			if rng.Intn(2) == 0 {
				starts[j.Team] = t0.Add(-time.Duration(rng.Intn(3)) * time.Minute)
			}
		}
		var entries []*Entry
		for i := 0; i < 1+rng.Intn(20); i++ {
			j := mkJob(fmt.Sprintf("w%02d", i), 1+rng.Intn(3), 1, inTeam(fmt.Sprintf("t%d", rng.Intn(nTeams))))
			entries = append(entries, NewEntry(&j))
		}
		in := passInput{now: t0, snap: snap, running: running, teams: cfg, teamStarts: starts}
		p := &passRun{in: &in, now: t0, snap: snap, teams: newTeamPass(&in)}
		var tried []*Entry
		p.fairOrder(entries, func(e *Entry) outcome {
			tried = append(tried, e)
			return waited
		})
		q := &passRun{in: &in, now: t0, snap: snap, teams: newTeamPass(&in)}
		for pos, e := range tried {
			own := 0
			waiting := map[string]int{}
			for _, o := range entries {
				switch {
				case o.Team != e.Team:
					waiting[o.Team]++
				case o == e:
				case slices.Index(entries, o) < slices.Index(entries, e):
					own++ // before it in the queue's order
				}
			}
			var others []teamWaiting
			for name, n := range waiting {
				others = append(others, teamWaiting{rank: q.teams.rankOf(q.teams.team(name)), jobs: n})
			}
			if got, _ := fairAhead(q.teams.rankOf(q.teams.team(e.Team)), own, others); got != pos {
				t.Fatalf("seed %d: %s of team %s is tried at %d, fairAhead says %d (teams %q)", seed, e.ID, e.Team, pos, got, lines)
			}
		}
	}
}

// TestPreviewFairShare: a regular job's place in the preview is the one
// the pass gives it between teams, and the pass keeps the preview's
// promise. One agent of 16 cpus (the test cluster counts executors only):
// team a runs ra (4 cpus; with its driver 5 of 16, a weighted share of
// 0.31), team c's filler holds 9 cpus until it ends, and team b's b-wait
// (4 cpus) waits, 3 being free. After the filler ends 12 cpus are free.
//
//   - a's a-next (10 cpus) has the larger demand, so the queue's own
//     order puts it first, but the fair share offers the room to team b
//     (nothing running) first: b-wait starts, a-next no longer fits.
//   - adhoc-1 (4 cpus, as b-wait, and submitted later: behind it and a's
//     larger a-wait in the queue's own order) is of team adhoc, nothing
//     running, which ranks first (the tie with b goes by name): it starts.
func TestPreviewFairShare(t *testing.T) {
	cases := []struct {
		name   string
		aWait  bool // a's a-wait (10 cpus) waits too
		job    Job
		ahead  int
		before []string
		reason string // "" a start now
	}{{
		name:   "over its share: behind the team with the smaller share",
		job:    mkJob("a-next", 5, 2, inTeam("a"), submittedAt(time.Second)),
		ahead:  1,
		before: []string{"b"},
		reason: "behind 1 waiting job in the regular queue (it fits now, but that one is tried first; the fair share between teams offers the room to team b before team a, whose weighted share is 0.31)",
	}, {
		name:  "the smallest share: before the larger jobs of teams above it",
		aWait: true,
		job:   mkJob("adhoc-1", 2, 2, inTeam("adhoc"), submittedAt(time.Second)),
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			holder := &teams.Holder{}
			holder.Set(teamsOf(t, "a\nb\nc\nadhoc\n"))
			h := newHarness(t, Config{Policy: "bfd", Teams: holder}, agent("a1", 16, 65536, 0.24))
			h.submit(mkJob("ra", 2, 2, inTeam("a")), mkJob("filler", 3, 3, inTeam("c")))
			h.schedule()
			h.submit(mkJob("b-wait", 2, 2, inTeam("b")))
			if c.aWait {
				h.submit(mkJob("a-wait", 5, 2, inTeam("a")))
			}
			h.schedule()
			if got := h.cluster.appliedIDs(); len(got) != 2 || !slices.Contains(got, "ra") || !slices.Contains(got, "filler") {
				t.Fatalf("set-up started %v, want ra and filler", got)
			}
			if err := h.finish("filler"); err != nil {
				t.Fatal(err)
			}
			p, err := h.core.Preview(context.Background(), c.job, t0)
			if err != nil {
				t.Fatal(err)
			}
			if p.Ahead != c.ahead || !slices.Equal(p.TeamsBefore, c.before) || p.StartsNow != (c.reason == "") || p.WaitingReason != c.reason {
				t.Errorf("preview: ahead %d, teams before %v, startsNow %v, waiting %q;\nwant ahead %d, teams before %v, waiting %q",
					p.Ahead, p.TeamsBefore, p.StartsNow, p.WaitingReason, c.ahead, c.before, c.reason)
			}
			// The pass keeps the preview's promise: the job starts now
			// only where the preview said it would.
			h.submit(c.job)
			h.schedule()
			if started := slices.Contains(h.cluster.appliedIDs(), c.job.ID); started != p.StartsNow {
				t.Errorf("the pass started it: %v (started %v); the preview said startsNow %v", started, h.cluster.appliedIDs(), p.StartsNow)
			}
		})
	}
}

// TestPreviewFairShareLastStart: between teams that rank equal, the
// preview breaks the tie as the pass does, on each team's last start (as
// the pass publishes it): the team that started a job least recently goes
// first. One agent of 16 cpus: team b's b-1 (12 cpus) starts and ends,
// team d's d-wait (8 cpus) waited meanwhile; both teams now hold nothing.
// b-2 (10 cpus) fits the empty agent, but d started nothing since, so
// d-wait is offered the room first and b-2 no longer fits.
func TestPreviewFairShareLastStart(t *testing.T) {
	holder := &teams.Holder{}
	holder.Set(teamsOf(t, "b\nd\n"))
	h := newHarness(t, Config{Policy: "bfd", Teams: holder}, agent("a1", 16, 65536, 0.24))
	h.submit(mkJob("b-1", 6, 2, inTeam("b")))
	h.schedule()
	h.submit(mkJob("d-wait", 4, 2, inTeam("d")))
	h.schedule()
	if got := h.cluster.appliedIDs(); !slices.Equal(got, []string{"b-1"}) {
		t.Fatalf("set-up started %v, want b-1", got)
	}
	if err := h.finish("b-1"); err != nil {
		t.Fatal(err)
	}
	b2 := mkJob("b-2", 5, 2, inTeam("b"), submittedAt(time.Second))
	p, err := h.core.Preview(context.Background(), b2, t0)
	if err != nil {
		t.Fatal(err)
	}
	const want = "behind 1 waiting job in the regular queue (it fits now, but that one is tried first; the fair share between teams offers the room to team d before team b, whose weighted share is 0.00)"
	if p.StartsNow || p.Ahead != 1 || !slices.Equal(p.TeamsBefore, []string{"d"}) || p.WaitingReason != want {
		t.Errorf("preview: startsNow %v, ahead %d, teams before %v, waiting %q; want a wait behind team d's job: %q",
			p.StartsNow, p.Ahead, p.TeamsBefore, p.WaitingReason, want)
	}
	h.submit(b2)
	h.schedule()
	if got := h.cluster.appliedIDs(); !slices.Equal(got, []string{"b-1", "d-wait"}) {
		t.Errorf("the pass started %v, want d-wait (not b-2)", got)
	}
}

// TestRegularAhead: the previewed regular job's place over a published
// regular queue: without teams, every job of its demand or more (all of
// them in FIFO); with teams, every job of the teams ranked before its
// team (here: b and c hold nothing, a holds 5 of 16 cpus, d 9), then its
// own team's jobs of its demand or more, whatever the other teams'
// demands.
func TestRegularAhead(t *testing.T) {
	// The queue's order: by demand, largest first.
	queue := []*QueuedJob{
		{ID: "d1", Team: "d", ResourceDemand: 0.9},
		{ID: "a1", Team: "a", ResourceDemand: 0.8},
		{ID: "b1", Team: "b", ResourceDemand: 0.6},
		{ID: "a2", Team: "a", ResourceDemand: 0.5},
		{ID: "c1", Team: "c", ResourceDemand: 0.4},
		{ID: "a3", Team: "a", ResourceDemand: 0.2},
		{ID: "b2", Team: "b", ResourceDemand: 0.1},
	}
	cfg := teamsOf(t, "a\nb\nc\nd\n")
	snap := snapOf([]placement.Agent{agent("a1", 16, 65536, 0.5)})
	hold := func(id, team string, executors int) runningJob {
		j := mkJob(id, executors, 2, inTeam(team))
		return runningJob{id: id, state: Running, team: team, demand: DemandOf(&j), driverCPUs: 1, driverMemMB: 1024}
	}
	running := []runningJob{hold("ra", "a", 2), hold("rd", "d", 4)}
	cases := []struct {
		name   string
		teams  bool
		fifo   bool
		team   string
		rd     float64
		ahead  int
		before []string
	}{
		{"no teams: by demand", false, false, "a", 0.5, 4, nil},
		{"no teams, FIFO: all", false, true, "a", 0.5, 7, nil},
		{"team a (0.31): behind b and c, then a1 and a2", true, false, "a", 0.5, 5, []string{"b", "c"}},
		{"team a, the largest demand: behind b and c only", true, false, "a", 0.95, 3, []string{"b", "c"}},
		{"team a, FIFO: behind b, c and all of a", true, true, "a", 0.95, 6, []string{"b", "c"}},
		{"team b (nothing held): its own jobs first only", true, false, "b", 0.3, 1, nil},
		{"team d (0.56): behind everyone else", true, false, "d", 0.05, 7, []string{"b", "c", "a"}},
		{"a new team: behind b and c (nothing held, names before it)", true, false, "e", 0.99, 3, []string{"b", "c"}},
	}
	for _, c := range cases {
		in := passInput{now: t0, snap: snap, running: running}
		if c.teams {
			in.teams = cfg
		}
		p := &passRun{in: &in, now: t0, snap: snap, teams: newTeamPass(&in)}
		s := &queueSnapshot{regular: queue, fifo: c.fifo}
		ahead, fair := p.regularAhead(s, &Entry{ID: "new", Team: c.team, RD: c.rd})
		var before []string
		for _, f := range fair {
			before = append(before, f.rank.team)
		}
		if ahead != c.ahead || !slices.Equal(before, c.before) {
			t.Errorf("%s: ahead %d, teams before %v; want %d, %v", c.name, ahead, before, c.ahead, c.before)
		}
	}
}
