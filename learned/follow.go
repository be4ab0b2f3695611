package learned

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/sparkpack/sparkpack/scheduler"
)

// Following the run history (docs/learning.md, "Every instance's model").
// Only the leader's core records runs and teaches its model as they end;
// a follower's model (which right-sizes the "executors": "auto" jobs
// submitted through it and predicts on its job views) catches up with the
// history instead: every few seconds it reads the runs inserted since it
// last looked (Catchup) and learns those it has not seen.
//
// Run IDs are allocated when a run is inserted, but the transactions that
// insert them commit in any order (the core reports jobs concurrently), so
// a run with a lower ID may appear after a higher one was read. Catchup
// therefore reads from a floor below which every run has been seen, and
// remembers the IDs it learned above it: the floor moves up to the highest
// ID a catch-up read once Settle has passed since (a run still uncommitted
// by then is assumed rolled back: its ID is a permanent gap).

// DefaultSettle is how long a catch-up waits before assuming no run with
// an ID below the highest it read can still appear.
const DefaultSettle = time.Minute

// reloadOverlap is how many of the latest runs a reload loaded the next
// catch-up reads again (learning only those it had not loaded), in case
// one with a lower ID was still being committed during the reload.
const reloadOverlap = 1000

// catchupPage is how many runs a catch-up reads per query.
const catchupPage = 5000

// Follower is where a catch-up reads the runs inserted after an ID
// (store.Store).
type Follower interface {
	RunsAfter(ctx context.Context, after int64, limit int) ([]scheduler.RunRecord, error)
}

// follow is the catch-up's position in the history (under Model.mu).
type follow struct {
	// floor: every run with an ID up to floor was learned or never will
	// be; seen: the IDs above it learned already.
	floor int64
	seen  map[int64]struct{}
	// marks are the highest IDs read by recent catch-ups, oldest first.
	marks []mark
	// gen counts the reloads: a catch-up that read across one is dropped.
	gen uint64
}

type mark struct {
	at  time.Time
	max int64
}

// reset positions the catch-up after a reload of runs (oldest first).
func (f *follow) reset(runs []scheduler.RunRecord) {
	ids := make([]int64, 0, len(runs))
	for _, r := range runs {
		if r.ID > 0 {
			ids = append(ids, r.ID)
		}
	}
	slices.Sort(ids)
	f.floor, f.marks, f.seen = 0, nil, map[int64]struct{}{}
	if n := len(ids); n > reloadOverlap {
		f.floor = ids[n-reloadOverlap-1]
		ids = ids[n-reloadOverlap:]
	}
	for _, id := range ids {
		f.seen[id] = struct{}{}
	}
	f.gen++
}

// Catchup learns the runs of the history it has not learned yet (see
// above; now is the time of the read, settle how long before the floor
// passes an ID read, DefaultSettle when 0). It returns how many finished
// runs it learned from. The leader must not call it: its model learns
// from its core (Observe), which does not tell run IDs; after leading, a
// Reload positions the catch-up again.
func (m *Model) Catchup(ctx context.Context, h Follower, now time.Time, settle time.Duration) (int, error) {
	if settle <= 0 {
		settle = DefaultSettle
	}
	m.mu.Lock()
	floor, gen := m.fol.floor, m.fol.gen
	m.mu.Unlock()
	var read []scheduler.RunRecord
	for after := floor; ; {
		page, err := h.RunsAfter(ctx, after, catchupPage)
		if err != nil {
			return 0, fmt.Errorf("learned: catch up with the run history: %w", err)
		}
		read = append(read, page...)
		if len(page) < catchupPage {
			break
		}
		after = page[len(page)-1].ID
	}
	m.mu.Lock()
	if m.fol.gen != gen {
		m.mu.Unlock()
		return 0, nil // reloaded meanwhile: the reload has what was read
	}
	f := &m.fol
	if f.seen == nil {
		f.seen = map[int64]struct{}{}
	}
	n := 0
	top := f.floor
	for _, r := range read {
		top = max(top, r.ID)
		if _, ok := f.seen[r.ID]; ok || r.ID <= f.floor {
			continue
		}
		f.seen[r.ID] = struct{}{}
		if observe(m.book, m.est, m.teams, r) {
			n++
		}
	}
	f.marks = append(f.marks, mark{at: now, max: top})
	for len(f.marks) > 0 && now.Sub(f.marks[0].at) >= settle {
		f.floor = max(f.floor, f.marks[0].max)
		f.marks = f.marks[1:]
	}
	for id := range f.seen {
		if id <= f.floor {
			delete(f.seen, id)
		}
	}
	if n > 0 {
		m.runs += n
		clear(m.corr)
	}
	m.mu.Unlock()
	if n > 0 {
		m.version.Add(1)
	}
	return n, nil
}
