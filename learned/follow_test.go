package learned

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/perfmodel"
	"github.com/sparkpack/sparkpack/scheduler"
)

// table is a run history whose runs become visible when committed, in any
// order of their IDs (as concurrent transactions commit).
type table struct {
	committed []scheduler.RunRecord
	reads     int
}

func (t *table) commit(rs ...scheduler.RunRecord) {
	t.committed = append(t.committed, rs...)
	slices.SortFunc(t.committed, func(a, b scheduler.RunRecord) int { return int(a.ID - b.ID) })
}

func (t *table) RunsAfter(_ context.Context, after int64, limit int) ([]scheduler.RunRecord, error) {
	t.reads++
	var out []scheduler.RunRecord
	for _, r := range t.committed {
		if r.ID > after && (limit <= 0 || len(out) < limit) {
			out = append(out, r)
		}
	}
	return out, nil
}

func (t *table) RunHistory(_ context.Context, limit int) ([]scheduler.RunRecord, error) {
	if limit > 0 && len(t.committed) > limit {
		return slices.Clone(t.committed[len(t.committed)-limit:]), nil
	}
	return slices.Clone(t.committed), nil
}

// withIDs are rs numbered from first.
func withIDs(rs []scheduler.RunRecord, first int64) []scheduler.RunRecord {
	for i := range rs {
		rs[i].ID = first + int64(i)
	}
	return rs
}

// TestCatchupFollowsTheHistory: a follower's model loaded at its start
// learns the runs the leader records afterwards by catching up, each once,
// including a run whose transaction committed after a higher ID was read;
// what it predicts is what a model that saw the same runs predicts, and
// its version moves only when it learned something.
func TestCatchupFollowsTheHistory(t *testing.T) {
	ctx := context.Background()
	all := withIDs(runs(16, 13), 1)
	h := &table{}
	h.commit(all[:4]...)
	m := New()
	if n, err := m.Reload(ctx, h); err != nil || n != 4 {
		t.Fatalf("reload: %d, %v", n, err)
	}
	at := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	catchup := func(want int) {
		t.Helper()
		v := m.Version()
		n, err := m.Catchup(ctx, h, at, time.Minute)
		if err != nil || n != want {
			t.Fatalf("catch-up at %s: learned %d (%v), want %d", at.Format("15:04:05"), n, err, want)
		}
		if (m.Version() != v) != (want > 0) {
			t.Fatalf("version %d -> %d after learning %d runs", v, m.Version(), n)
		}
	}
	catchup(0)
	// Runs 5-10 and 12 committed; 11 is still in its transaction.
	h.commit(all[4:10]...)
	h.commit(all[11])
	catchup(7)
	at = at.Add(10 * time.Second)
	catchup(0)
	h.commit(all[10]) // 11 commits late
	at = at.Add(10 * time.Second)
	catchup(1)
	// Past the settle time the floor moves up: nothing is read twice.
	at = at.Add(2 * time.Minute)
	catchup(0)
	h.commit(all[12:]...)
	catchup(4)
	if m.Runs() != 16 {
		t.Fatalf("runs %d, want 16", m.Runs())
	}
	ref := New()
	for _, i := range []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 10, 12, 13, 14, 15} {
		ref.Observe(all[i])
	}
	k := scheduler.RunKey{Signature: sig, Size: 1, EstimateSeconds: 40, EstimateKey: sig}
	for e := 1; e <= 12; e++ {
		a, okA := m.Predict(k, e, perfmodel.Placement{CrossShare: 0.3})
		b, okB := ref.Predict(k, e, perfmodel.Placement{CrossShare: 0.3})
		if !okA || a != b {
			t.Fatalf("E=%d: caught up %+v (%v), observed %+v (%v)", e, a, okA, b, okB)
		}
	}
	if len(m.fol.seen) > 4 {
		t.Fatalf("%d IDs remembered above the floor %d; the settled ones should be forgotten", len(m.fol.seen), m.fol.floor)
	}
}

// TestCatchupAfterALargeReload: after a reload of more runs than the
// overlap, a catch-up reads the latest ones again (one might have been
// committing during the reload) but learns none twice.
func TestCatchupAfterALargeReload(t *testing.T) {
	ctx := context.Background()
	h := &table{}
	h.commit(withIDs(runs(reloadOverlap+50, 3), 100)...)
	m := New()
	if _, err := m.Reload(ctx, h); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	if n, err := m.Catchup(ctx, h, at, 0); err != nil || n != 0 {
		t.Fatalf("catch-up after the reload learned %d (%v)", n, err)
	}
	if m.Runs() != reloadOverlap+50 {
		t.Fatalf("runs %d", m.Runs())
	}
	extra := withIDs(runs(1, 4), 100+reloadOverlap+50)
	h.commit(extra...)
	if n, _ := m.Catchup(ctx, h, at.Add(time.Second), 0); n != 1 {
		t.Fatalf("learned %d new runs, want 1", n)
	}
}
