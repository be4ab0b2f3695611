package learned

import (
	"context"
	"fmt"

	"github.com/sparkpack/sparkpack/perfmodel"
	"github.com/sparkpack/sparkpack/scheduler"
)

// Loading the model from the run history (docs/learning.md, "Loading in
// the background"). A reload of a large history takes seconds of CPU, so
// the instance does not wait for it: the model answers with what it knew
// (the prior at worst) until the reload swaps the state it built aside in.
// The runs the core teaches the model during a reload (Observe) are kept
// by the reload and, when its read of the history did not hold them,
// learned again into the new state: none is lost, none counted twice. A
// run is keyed by its job and attempt (run_history holds one row per
// attempt; the core's record has no row ID).

// checkEvery is how many runs a load learns between looks at its context.
const checkEvery = 256

// pending is what Observe learned during one reload.
type pending struct{ runs []scheduler.RunRecord }

// attemptKey keys a run by its job and attempt.
type attemptKey struct {
	job     string
	attempt int
}

// Load replaces what the model knows with runs (oldest first).
func (m *Model) Load(runs []scheduler.RunRecord) int {
	n, _ := m.load(context.Background(), runs, nil)
	return n
}

// load builds the state of runs aside (stopping when ctx ends), then
// swaps it in with the runs of p (Observe's during the reload) its runs do
// not hold. It returns how many finished runs the new state learned from.
func (m *Model) load(ctx context.Context, runs []scheduler.RunRecord, p *pending) (int, error) {
	b, e, t := perfmodel.NewBook(), perfmodel.NewEstimates(), perfmodel.NewEstimates()
	n := 0
	for i, r := range runs {
		if i%checkEvery == 0 {
			if err := ctx.Err(); err != nil {
				return 0, fmt.Errorf("learned: load stopped after %d of %d runs: %w", i, len(runs), err)
			}
		}
		if observe(b, e, t, r) {
			n++
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if p != nil {
		m.endLoad(p)
		if len(p.runs) > 0 {
			read := make(map[attemptKey]struct{}, len(runs))
			for _, r := range runs {
				read[attemptKey{r.JobID, r.Attempt}] = struct{}{}
			}
			for _, r := range p.runs {
				if _, ok := read[attemptKey{r.JobID, r.Attempt}]; ok {
					continue
				}
				if observe(b, e, t, r) {
					n++
				}
			}
		}
	}
	m.book, m.est, m.teams, m.runs = b, e, t, n
	m.corr = map[corrKey]perfmodel.Corrected{}
	m.fol.reset(runs)
	m.version.Add(1)
	return n, nil
}

// beginLoad starts keeping what Observe learns for a reload.
func (m *Model) beginLoad() *pending {
	p := &pending{}
	m.mu.Lock()
	m.loads = append(m.loads, p)
	m.mu.Unlock()
	return p
}

// endLoad stops keeping for p, under m.mu.
func (m *Model) endLoad(p *pending) {
	for i, q := range m.loads {
		if q == p {
			m.loads = append(m.loads[:i], m.loads[i+1:]...)
			return
		}
	}
}

// Reload reads the latest DefaultLoad runs of the history and replaces
// what the model knows with them and with the runs Observe learned
// meanwhile that the read did not hold (at start, on becoming leader: the
// runs another instance recorded while leading count too). Until it
// returns, the model answers with what it knew; when ctx ends first it
// stops and the model keeps what it knew. It returns how many finished
// runs the model learned from.
func (m *Model) Reload(ctx context.Context, h History) (int, error) {
	p := m.beginLoad()
	runs, err := h.RunHistory(ctx, DefaultLoad)
	if err != nil {
		m.mu.Lock()
		m.endLoad(p)
		m.mu.Unlock()
		return 0, fmt.Errorf("learned: load the run history: %w", err)
	}
	n, err := m.load(ctx, runs, p)
	if err != nil {
		m.mu.Lock()
		m.endLoad(p)
		m.mu.Unlock()
		return 0, err
	}
	return n, nil
}
