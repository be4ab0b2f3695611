package scheduler

import (
	"container/heap"
	"slices"
	"time"
)

// teamQueue is one team's regular entries in a pass, in queue order.
type teamQueue struct {
	teamRank
	ts      *teamState
	entries []*Entry
	next    int
}

// teamRank is a team's place in the fair-share order between teams
// (fairOrder): teams below their guarantee first, the least filled first,
// then the others by weighted dominant share, smallest first; between
// equals the one that started a job least recently, then the name.
type teamRank struct {
	team  string
	below bool    // below its guarantee
	key   float64 // guarantee fill when below, else weighted dominant share
	last  time.Time
}

// fairBefore reports whether a team ranked a is offered the room before
// one ranked b: the order of fairOrder's heap, and of the preview's
// answer (fairAhead).
func fairBefore(a, b teamRank) bool {
	if a.below != b.below {
		return a.below
	}
	if a.key != b.key {
		return a.key < b.key
	}
	if !a.last.Equal(b.last) {
		return a.last.Before(b.last)
	}
	return a.team < b.team
}

// rankOf is ts's rank in the pass, on what its jobs hold now.
func (tp *teamPass) rankOf(ts *teamState) teamRank {
	t, u := &ts.t, ts.use
	r := teamRank{team: ts.name, last: ts.last, below: t.BelowGuarantee(u)}
	if r.below {
		r.key = t.GuaranteeFill(u)
	} else {
		r.key = t.DominantShare(u, tp.total)
	}
	return r
}

func (tp *teamPass) rank(q *teamQueue) { q.teamRank = tp.rankOf(q.ts) }

type fairHeap []*teamQueue

func (h fairHeap) Len() int           { return len(h) }
func (h fairHeap) Less(i, j int) bool { return fairBefore(h[i].teamRank, h[j].teamRank) }
func (h fairHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *fairHeap) Push(x any)        { *h = append(*h, x.(*teamQueue)) }
func (h *fairHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// teamWaiting is a team's rank and how many of its jobs wait in the
// regular queue.
type teamWaiting struct {
	rank teamRank
	jobs int
}

// fairAhead is how many waiting regular jobs fairOrder offers the room
// before a job of the team ranked own, which has ownAhead of its team's
// waiting jobs before it in the queue's order, when none of them starts
// (as at the last pass, which left them waiting): without a start no
// rank changes, so fairOrder offers each team's jobs in one run, the
// teams in fairBefore's order. That is every waiting job of the teams of
// others ranked before own, then ownAhead. before are those teams, in the
// order they are offered the room. others must not hold own's team.
func fairAhead(own teamRank, ownAhead int, others []teamWaiting) (ahead int, before []teamWaiting) {
	ahead = ownAhead
	for _, o := range others {
		if o.jobs > 0 && fairBefore(o.rank, own) {
			ahead += o.jobs
			before = append(before, o)
		}
	}
	slices.SortFunc(before, func(a, b teamWaiting) int {
		if fairBefore(a.rank, b.rank) {
			return -1
		}
		return 1
	})
	return ahead, before
}

// fairOrder calls try on the regular entries in fair-share order (see
// above): the team that ranks first offers its next entry; after a start
// the teams are ranked again. Without teams, or with one team, it is the
// queue's order.
func (p *passRun) fairOrder(entries []*Entry, try func(*Entry) outcome) {
	tp := p.teams
	if tp == nil {
		for _, e := range entries {
			try(e)
		}
		return
	}
	var h fairHeap
	for _, e := range entries {
		ts := tp.team(e.Team)
		if ts.q == nil {
			ts.q = &teamQueue{teamRank: teamRank{team: e.Team}, ts: ts}
			h = append(h, ts.q)
		}
		ts.q.entries = append(ts.q.entries, e)
	}
	for _, q := range h {
		tp.rank(q)
	}
	heap.Init(&h)
	for h.Len() > 0 {
		q := h[0]
		e := q.entries[q.next]
		q.next++
		ok := try(e) == started
		switch {
		case q.next == len(q.entries):
			heap.Pop(&h)
		case ok:
			// Only the starting team's rank changed.
			tp.rank(q)
			heap.Fix(&h, 0)
		}
	}
}
