package simulate

// Tests of the learned mode's model before it has an estimator or a book
// (learnedtraits.go; issue 33).

import (
	"testing"

	"github.com/sparkpack/sparkpack/perfmodel"
	"github.com/sparkpack/sparkpack/scheduler"
)

// TestTraitsModelWithoutABook: before its estimator (or its book) is set
// the model knows nothing: no traits, version 0, and the predictor of an
// empty book; with a book, the book's predictor (without the user's
// estimate, and on the usual plans for the zero placement, as live's).
func TestTraitsModelWithoutABook(t *testing.T) {
	k := scheduler.RunKey{Signature: "local:///a.jar A", Size: 4, EstimateSeconds: 100}
	pl := perfmodel.Placement{CrossShare: 0.5}
	empty, emptyErr := perfmodel.NewBook().Predictor(k.Signature, k.App, k.Size, pl, 0)(4)
	for name, m := range map[string]*traitsModel{"no estimator": {}, "no book": {e: &estimator{learnt: 3}}} {
		if _, ok := m.Traits(k); ok {
			t.Errorf("%s: traits", name)
		}
		if v := m.Version(); v != 0 && name == "no estimator" {
			t.Errorf("%s: version %d", name, v)
		}
		got, err := m.Predictor(k, pl)(4)
		if got != empty || (err == nil) != (emptyErr == nil) {
			t.Errorf("%s: predicts %+v %v, an empty book %+v %v", name, got, err, empty, emptyErr)
		}
	}
	// With a book that learned the signature: its prediction, not an
	// empty book's.
	e := &estimator{book: perfmodel.NewBook(), learnt: 30}
	for i := 0; i < 30; i++ {
		n := 1 + i%6
		p := perfmodel.Placement{CrossShare: float64(i%5) / 5}
		if err := e.book.Observe(k.Signature, "", perfmodel.Run{Executors: n, Size: float64(1 + i%7), Placement: p, Seconds: 500 + 40*float64(1+i%7)/float64(n)}); err != nil {
			t.Fatal(err)
		}
	}
	m := &traitsModel{e: e}
	want, wantErr := e.book.Predictor(k.Signature, k.App, k.Size, pl, 0)(4)
	got, err := m.Predictor(k, pl)(4)
	if wantErr != nil || err != nil || got != want || got == empty {
		t.Errorf("with a book: %+v %v, the book %+v %v, an empty book %+v", got, err, want, wantErr, empty)
	}
	usual := e.book.UsualPlacement(k.Signature, k.App)
	want, wantErr = e.book.Predictor(k.Signature, k.App, k.Size, usual, 0)(4)
	if got, err := m.Predictor(k, perfmodel.Placement{})(4); usual == (perfmodel.Placement{}) || wantErr != nil || err != nil || got != want {
		t.Errorf("with a book, no plan: %+v %v, the book on the usual plans %+v (%+v) %v", got, err, want, usual, wantErr)
	}
	if m.Version() != 30 {
		t.Errorf("version %d, want the 30 runs learned", m.Version())
	}
	m.Observe(scheduler.RunRecord{}) // learns nothing: the estimator does
	if m.Version() != 30 {
		t.Errorf("Observe changed the version to %d", m.Version())
	}
}
