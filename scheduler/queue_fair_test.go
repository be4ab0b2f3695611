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

// tryingPolicy is the core's placement policy with a record of the jobs
// the pass tries on it (in the order it asks), letting start only those
// allow lets (the others do not fit: the pass goes on to the next job).
type tryingPolicy struct {
	placement.Policy
	tried []string
	allow func(id string) bool
}

func (p *tryingPolicy) Place(s placement.Snapshot, d placement.Demand) (placement.Plan, error) {
	p.tried = append(p.tried, d.JobID)
	if p.allow != nil && p.allow(d.JobID) {
		return p.Policy.Place(s, d)
	}
	return placement.Plan{}, &placement.NoFit{Resource: "cpus", Short: 1}
}

// trying puts a tryingPolicy under the core's pass.
func trying(h *harness) *tryingPolicy {
	tp := &tryingPolicy{Policy: h.core.timed.Policy}
	h.core.timed.Policy = tp
	return tp
}

// publishedRegular is the published regular queue's ids, read a page of
// limit at a time as the API reads it.
func publishedRegular(t *testing.T, c *Core, limit int) ([]string, QueuePage) {
	t.Helper()
	var ids []string
	var first QueuePage
	cursor := ""
	for pages := 0; ; pages++ {
		p, err := c.QueuePage(limit, cursor)
		if err != nil {
			t.Fatal(err)
		}
		if pages == 0 {
			first = p
		}
		for _, q := range p.Regular {
			ids = append(ids, q.ID)
		}
		if p.Next == "" || pages > 1000 {
			return ids, first
		}
		cursor = p.Next
	}
}

// TestPublishedQueueIsPassOrder: the regular queue the views publish
// (QueuePage, GET /api/v1/queues) is in the order the next scheduling pass
// tries its jobs, over random teams (weights, guarantees), jobs running,
// teams' last starts and waiting jobs: a real pass starts some of the
// waiting jobs (re-ranking their teams), the queue is published, and the
// next full pass, in which none starts, tries every job in the published
// order. Read in pages of 1000 and of 7 alike. With a start in that pass,
// the order is the published one up to and including the first start
// (then the starting team is ranked again). Without teams, and with teams
// but FIFO, the same holds.
func TestPublishedQueueIsPassOrder(t *testing.T) {
	for seed := int64(1); seed <= 120; seed++ {
		rng := rand.New(rand.NewSource(seed))
		nTeams := 1 + rng.Intn(5)
		var lines []string
		for i := 0; i < nTeams; i++ {
			line := fmt.Sprintf("t%d weight=%d", i, 1+rng.Intn(3))
			if rng.Intn(3) == 0 {
				line += fmt.Sprintf(" guaranteed-cpus=%d", 2+rng.Intn(12))
			}
			lines = append(lines, line)
		}
		cfg := Config{Policy: "bfd"}
		withTeams := seed%10 != 0 // every tenth seed: no teams file
		if withTeams {
			holder := &teams.Holder{}
			holder.Set(teamsOf(t, strings.Join(lines, "\n")))
			cfg.Teams = holder
		}
		if seed%7 == 0 {
			cfg.Ordering = OrderFIFO
		}
		h := newHarness(t, cfg, agent("a1", 64, 262144, 0.5), agent("a2", 64, 262144, 0.5))
		team := func() jobOpt { return inTeam(fmt.Sprintf("t%d", rng.Intn(nTeams+1))) } // t<nTeams>: not in the file
		// Pass 0: jobs that run from now on.
		for i := 0; i < rng.Intn(6); i++ {
			h.submit(mkJob(fmt.Sprintf("run%d", i), 1+rng.Intn(3), 1+rng.Intn(3), team()))
		}
		h.schedule()
		// Pass 1, a minute later: the waiting jobs come; some start.
		h.clock.Advance(time.Minute)
		var waiting []string
		for i := 0; i < 1+rng.Intn(25); i++ {
			id := fmt.Sprintf("w%02d", i)
			waiting = append(waiting, id)
			h.submit(mkJob(id, 1+rng.Intn(3), 1+rng.Intn(2), team(), submittedAt(time.Duration(rng.Intn(3))*time.Second)))
		}
		starts := map[string]bool{}
		for _, id := range waiting {
			if rng.Intn(4) == 0 {
				starts[id] = true
			}
		}
		pol := trying(h)
		pol.allow = func(id string) bool { return starts[id] }
		h.schedule()
		published, page := publishedRegular(t, h.core, 1000)
		if paged, _ := publishedRegular(t, h.core, 7); !slices.Equal(paged, published) {
			t.Fatalf("seed %d: pages of 7 read %v, pages of 1000 %v", seed, paged, published)
		}
		wantOrder := RegularByDemand
		switch {
		case withTeams:
			wantOrder = RegularFairShare
		case cfg.Ordering == OrderFIFO:
			wantOrder = RegularBySubmission
		}
		wantWithin := ""
		if withTeams {
			wantWithin = RegularByDemand
			if cfg.Ordering == OrderFIFO {
				wantWithin = RegularBySubmission
			}
		}
		if page.RegularOrder != wantOrder || page.WithinTeam != wantWithin {
			t.Fatalf("seed %d: regularOrder %q, withinTeam %q; want %q, %q", seed, page.RegularOrder, page.WithinTeam, wantOrder, wantWithin)
		}
		// A preview of a copy of a waiting job (its team and size,
		// submitted later) is told the place the view gives it: after
		// the original and every job listed before it, and before the
		// next job of another team or of a smaller demand.
		if withTeams && len(published) > 0 {
			checkPreviewMatchesView(t, seed, h, published[rng.Intn(len(published))])
		}
		// Pass 2, a minute later, looks at every job; none starts.
		h.clock.Advance(time.Minute)
		pol.tried, pol.allow = nil, nil
		h.core.fullDue = true
		h.schedule()
		if !slices.Equal(pol.tried, published) {
			t.Fatalf("seed %d (teams %q, %s): the pass tried\n%v\nthe queue was published as\n%v", seed, lines, wantOrder, pol.tried, published)
		}
		if withTeams {
			checkPageTeams(t, seed, h.core, page)
		}
		// Pass 3: one job may start; the pass follows the published order
		// up to and including the first start.
		if len(published) == 0 {
			continue
		}
		h.clock.Advance(time.Minute)
		pick := published[rng.Intn(len(published))]
		pol.tried, pol.allow = nil, func(id string) bool { return id == pick }
		h.core.fullDue = true
		h.schedule()
		upTo := slices.Index(pol.tried, pick)
		if upTo < 0 || !slices.Equal(pol.tried[:upTo+1], published[:slices.Index(published, pick)+1]) {
			t.Fatalf("seed %d: with %s starting the pass tried %v; published %v", seed, pick, pol.tried, published)
		}
	}
}

// checkPageTeams: the first page's teams are its regular jobs' teams in
// the order they come, each with all its waiting jobs counted.
func checkPageTeams(t *testing.T, seed int64, c *Core, p QueuePage) {
	t.Helper()
	var runs []string
	count := map[string]int{}
	for _, q := range c.Queues().Regular {
		count[q.Team]++
	}
	for _, q := range p.Regular {
		if len(runs) == 0 || runs[len(runs)-1] != q.Team {
			runs = append(runs, q.Team)
		}
	}
	var got []string
	for _, tm := range p.Teams {
		got = append(got, tm.Team)
		if tm.Jobs != count[tm.Team] {
			t.Fatalf("seed %d: team %q has %d jobs in the page's teams, %d waiting", seed, tm.Team, tm.Jobs, count[tm.Team])
		}
	}
	if !slices.Equal(got, runs) {
		t.Fatalf("seed %d: the page's teams %v, its jobs' teams in order %v", seed, got, runs)
	}
}

// TestQueuePaginationFairShare walks a fair-share regular queue page by
// page while jobs leave: every job still waiting when its page is read is
// seen once, in the published order, also when every job of the last
// page's team left in between (the walk goes on with the teams ranked
// after it). Team a holds 13 of the agent's 16 cpus; b and c nothing (b
// first by name): the queue reads b1 b2 b3 c1 c2 c3 a1 a2 a3.
func TestQueuePaginationFairShare(t *testing.T) {
	holder := &teams.Holder{}
	holder.Set(teamsOf(t, "a\nb\nc\n"))
	h := newHarness(t, Config{Policy: "bfd", Teams: holder}, agent("a1", 16, 65536, 0.24))
	h.submit(mkJob("ra", 3, 4, inTeam("a")))
	h.schedule()
	for i, id := range []string{"a1", "b1", "c1", "a2", "b2", "c2", "a3", "b3", "c3"} {
		h.submit(mkJob(id, 3, 2, inTeam(id[:1]), submittedAt(time.Duration(i+1)*time.Second)))
	}
	h.schedule()
	if got, _ := publishedRegular(t, h.core, 1000); strings.Join(got, " ") != "b1 b2 b3 c1 c2 c3 a1 a2 a3" {
		t.Fatalf("published %v", got)
	}
	var seen []string
	cursor := ""
	for pages := 0; ; pages++ {
		p, err := h.core.QueuePage(2, cursor)
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range p.Regular {
			seen = append(seen, q.ID)
		}
		switch pages {
		case 0: // a job of the page's team, on a later page, leaves
			h.cancel("b3", "user")
			h.schedule()
		case 1: // every job of the page's team leaves
			for _, id := range []string{"c1", "c2", "c3"} {
				h.cancel(id, "user")
			}
			h.schedule()
		}
		if p.Next == "" || pages > 10 {
			break
		}
		cursor = p.Next
	}
	if want := "b1 b2 c1 c2 a1 a2 a3"; strings.Join(seen, " ") != want {
		t.Fatalf("pages of 2 read %v, want %s", seen, want)
	}
}

// TestQueueViewFollowsTeamUsage: the published fair-share order is
// republished when what a team holds changes although no waiting job's
// reason does. Teams b and c each run a job of 5 cpus and have a job
// waiting that alone needs more than the team's maximum (held, with a
// reason that never changes): equal shares, equal last starts, so b's
// goes first (by name). When c's running job ends, c holds nothing and
// ranks first: the view must say c-wait, then b-wait.
func TestQueueViewFollowsTeamUsage(t *testing.T) {
	holder := &teams.Holder{}
	holder.Set(teamsOf(t, "b max-cpus=6\nc max-cpus=6\n"))
	h := newHarness(t, Config{Policy: "bfd", Teams: holder}, agent("a1", 32, 131072, 0.24))
	h.submit(mkJob("rb", 1, 4, inTeam("b")), mkJob("rc", 1, 4, inTeam("c")))
	h.schedule()
	h.submit(mkJob("b-wait", 2, 4, inTeam("b")), mkJob("c-wait", 2, 4, inTeam("c")))
	h.schedule()
	if got, _ := publishedRegular(t, h.core, 100); strings.Join(got, " ") != "b-wait c-wait" {
		t.Fatalf("published %v, want b-wait c-wait", got)
	}
	reasonOf := func(id string) string {
		for _, q := range h.core.Queues().Regular {
			if q.ID == id {
				return q.WaitingReason
			}
		}
		return ""
	}
	reason := reasonOf("b-wait")
	if err := h.finish("rc"); err != nil {
		t.Fatal(err)
	}
	h.schedule()
	got, page := publishedRegular(t, h.core, 100)
	if strings.Join(got, " ") != "c-wait b-wait" || page.Teams[0].Team != "c" || page.Teams[0].Share != 0 {
		t.Errorf("after c's job ended the view reads %v (teams %+v), want c-wait b-wait", got, page.Teams)
	}
	if now := reasonOf("b-wait"); now != reason {
		t.Errorf("b-wait's reason changed (%q, was %q): the test no longer isolates the usage change", now, reason)
	}
}

// checkPreviewMatchesView: the preview's "ahead" of a copy of the waiting
// job id is where the published regular queue would list the copy.
func checkPreviewMatchesView(t *testing.T, seed int64, h *harness, id string) {
	t.Helper()
	view := h.core.Queues().Regular
	i := slices.IndexFunc(view, func(q QueuedJob) bool { return q.ID == id })
	orig := h.store.get(id)
	cp := mkJob("copy-"+id, orig.Executors, orig.ExecutorCores, inTeam(orig.Team), submittedAt(time.Hour))
	at := i + 1 // after the original, and the jobs of its team listed after it with its demand
	for at < len(view) && view[at].Team == orig.Team && view[at].ResourceDemand >= view[i].ResourceDemand {
		at++
	}
	if h.core.jq.FIFO {
		for at < len(view) && view[at].Team == orig.Team {
			at++
		}
	}
	p, err := h.core.Preview(context.Background(), cp, h.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	if p.Ahead != at {
		t.Fatalf("seed %d: a copy of %s (team %q) is previewed behind %d jobs; the published queue would list it at %d", seed, id, orig.Team, p.Ahead, at)
	}
}
