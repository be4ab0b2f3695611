package scheduler

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	logtest "github.com/sirupsen/logrus/hooks/test"

	"github.com/sparkpack/sparkpack/placement"
)

// flakyCluster is the test cluster with a Snapshot counter and a Release
// and a Preempt that fail when told to.
type flakyCluster struct {
	*testCluster
	mu           sync.Mutex
	snapshots    int
	failRelease  bool
	failPreempts bool
}

func (f *flakyCluster) Snapshot(ctx context.Context) (placement.Snapshot, error) {
	f.mu.Lock()
	f.snapshots++
	f.mu.Unlock()
	return f.testCluster.Snapshot(ctx)
}

func (f *flakyCluster) looks() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.snapshots
}

func (f *flakyCluster) Release(ctx context.Context, id string) error {
	if f.failRelease {
		return errors.New("injected failure: the master is away")
	}
	return f.testCluster.Release(ctx, id)
}

func (f *flakyCluster) Preempt(ctx context.Context, id, reason string) error {
	if f.failPreempts {
		_ = f.testCluster.Preempt(ctx, id, reason) // still recorded: the test reports it back
		return errors.New("injected failure: the master is away")
	}
	return f.testCluster.Preempt(ctx, id, reason)
}

func flakyHarness(t *testing.T, cfg Config, fc *flakyCluster) *harness {
	t.Helper()
	h := &harness{t: t, store: newTestStore(), cluster: fc.testCluster, clock: newManualClock(t0)}
	if cfg.Log == nil {
		cfg.Log = DiscardLogger()
	}
	c, err := New(cfg, fc, h.store, h.clock)
	if err != nil {
		t.Fatal(err)
	}
	h.core = c
	return h
}

// warnings returns the hook's warning messages that contain text.
func warnings(hook *logtest.Hook, text string) []*logrus.Entry {
	var out []*logrus.Entry
	for _, e := range hook.AllEntries() {
		if e.Level == logrus.WarnLevel && strings.Contains(e.Message, text) {
			out = append(out, e)
		}
	}
	return out
}

// TestPassLooksAtClusterAgainOnlyAfterStarts: a pass looks at the cluster
// once (its snapshot); only when it started a job does it look a second
// time, for the bill of the agents the plans activated (a look at 30,000
// agents is a 3 MB snapshot).
func TestPassLooksAtClusterAgainOnlyAfterStarts(t *testing.T) {
	for _, tc := range []struct {
		name  string
		jobs  []Job
		looks int
	}{
		{"nothing queued", nil, 1},
		{"a job too large to run here, rejected", []Job{mkJob("big", 1, 64)}, 1},
		{"a job started", []Job{mkJob("j", 1, 2)}, 2},
		{"two jobs started: still one look after them", []Job{mkJob("j1", 1, 2), mkJob("j2", 1, 2)}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fc := &flakyCluster{testCluster: newTestCluster(agent("a1", 4, 16384, 0.24))}
			h := flakyHarness(t, Config{}, fc)
			h.schedule()
			h.submit(tc.jobs...)
			before := fc.looks()
			h.schedule()
			if got := fc.looks() - before; got != tc.looks {
				t.Fatalf("the pass looked at the cluster %d times, want %d", got, tc.looks)
			}
		})
	}
}

// TestFailedApplyReleaseWarning: when the cluster refuses a plan, the core
// releases what the job may hold; it warns only when that release fails.
func TestFailedApplyReleaseWarning(t *testing.T) {
	for _, tc := range []struct {
		name        string
		failRelease bool
		warnings    int
	}{
		{"the release went through: no warning", false, 0},
		{"the release failed: a warning naming the job", true, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			log, hook := logtest.NewNullLogger()
			fc := &flakyCluster{testCluster: newTestCluster(agent("a1", 4, 16384, 0.24)), failRelease: tc.failRelease}
			fc.failApply = 1
			h := flakyHarness(t, Config{Log: log}, fc)
			h.schedule()
			h.submit(mkJob("j", 1, 2))
			hook.Reset()
			if _, err := h.core.Schedule(context.Background()); err == nil {
				t.Fatal("a refused plan gave no error")
			}
			got := warnings(hook, "release after failed apply")
			if len(got) != tc.warnings {
				t.Fatalf("%d warnings of the release, want %d: %v", len(got), tc.warnings, hook.AllEntries())
			}
			if len(got) == 1 && got[0].Data["job"] != "j" {
				t.Fatalf("the warning names job %v, want j", got[0].Data["job"])
			}
		})
	}
}

// TestEvictionReasonAndFailedPreempt: the eviction for a deadline job is
// stored with the reason "evicted (<policy>) to make room for deadline job
// <id>"; a refused eviction request is a warning naming the victim (the
// stored decision is carried out later), and one that went through is no
// warning.
func TestEvictionReasonAndFailedPreempt(t *testing.T) {
	for _, tc := range []struct {
		name        string
		failPreempt bool
		warnings    int
	}{
		{"the request went through", false, 0},
		{"the request failed", true, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			log, hook := logtest.NewNullLogger()
			fc := &flakyCluster{testCluster: newTestCluster(agent("a", 8, 65536, 0.48)), failPreempts: tc.failPreempt}
			h := flakyHarness(t, Config{Log: log, Preemption: PreemptMDF}, fc)
			// As TestDeadlineJobEvictsRegularJob: two regular jobs hold the
			// agent; a deadline job due in 30 m needing 10 m evicts r-new.
			h.submit(mkJob("r-old", 4, 1, submittedAt(-2*time.Hour), withEstimate(2*time.Hour)),
				mkJob("r-new", 4, 1, submittedAt(-time.Hour), withEstimate(2*time.Hour)))
			h.schedule()
			h.clock.Advance(10 * time.Minute)
			h.run("r-old")
			h.clock.Advance(10 * time.Minute)
			h.run("r-new")
			h.clock.Advance(time.Minute)
			h.submit(mkJob("d", 4, 1, submittedAt(21*time.Minute), withDeadline(30*time.Minute), withEstimate(10*time.Minute)))
			hook.Reset()
			h.schedule()
			if got, want := h.store.get("r-new").PreemptRequested, "evicted (mdf) to make room for deadline job d"; got != want {
				t.Fatalf("stored eviction reason %q, want %q", got, want)
			}
			got := warnings(hook, "eviction request failed")
			if len(got) != tc.warnings {
				t.Fatalf("%d warnings of the request, want %d: %v", len(got), tc.warnings, hook.AllEntries())
			}
			if len(got) == 1 && got[0].Data["job"] != "r-new" {
				t.Fatalf("the warning names job %v, want r-new", got[0].Data["job"])
			}
		})
	}
}

// TestNoteEvictionKeepsTheLastMinute: the eviction log keeps the
// evictions of the last minute (PreemptMaxShare's window) and the new one,
// dropping those a minute old or more.
func TestNoteEvictionKeepsTheLastMinute(t *testing.T) {
	for _, tc := range []struct {
		name string
		at   []time.Duration // earlier evictions, from t0
		now  time.Duration
		want []time.Duration
	}{
		{"two in the same pass", []time.Duration{0}, 0, []time.Duration{0, 0}},
		{"all within the minute", []time.Duration{0, 30 * time.Second}, 45 * time.Second, []time.Duration{0, 30 * time.Second, 45 * time.Second}},
		{"one exactly a minute old goes", []time.Duration{0, 30 * time.Second}, time.Minute, []time.Duration{30 * time.Second, time.Minute}},
		{"the oldest 61 s old goes", []time.Duration{0, 30 * time.Second}, 61 * time.Second, []time.Duration{30 * time.Second, 61 * time.Second}},
		{"all old", []time.Duration{0, time.Second}, 5 * time.Minute, []time.Duration{5 * time.Minute}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, Config{})
			for _, d := range tc.at {
				h.core.noteEviction(t0.Add(d), 1)
			}
			h.core.noteEviction(t0.Add(tc.now), 2)
			var got []time.Duration
			for _, r := range h.core.evictLog {
				got = append(got, r.at.Sub(t0))
			}
			if len(got) != len(tc.want) {
				t.Fatalf("log %v, want %v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Fatalf("log %v, want %v", got, tc.want)
				}
			}
			if last := h.core.evictLog[len(h.core.evictLog)-1]; last.cpus != 2 {
				t.Fatalf("the new eviction's cpus %v, want 2", last.cpus)
			}
		})
	}
}

// placedStats records the observer's placement statistics.
type placedStats struct {
	NopObserver
	mu  sync.Mutex
	got []PlacementStat
}

func (p *placedStats) Placed(s PlacementStat) {
	p.mu.Lock()
	p.got = append(p.got, s)
	p.mu.Unlock()
}

// TestPlacementStatPlaced: the observer hears, per policy call, whether
// the policy placed the job.
func TestPlacementStatPlaced(t *testing.T) {
	obs := &placedStats{}
	h := newHarness(t, Config{Observer: obs}, agent("a1", 4, 16384, 0.24))
	h.schedule()
	h.submit(mkJob("fits", 1, 4))
	h.schedule()
	h.submit(mkJob("waits", 1, 4)) // the agent is full: no plan now
	h.schedule()
	placed := map[string][]bool{}
	for _, s := range obs.got {
		placed[s.JobID] = append(placed[s.JobID], s.Placed)
	}
	if got := placed["fits"]; len(got) != 1 || !got[0] {
		t.Fatalf("fits: placed %v, want [true]", got)
	}
	for _, p := range placed["waits"] {
		if p {
			t.Fatalf("waits: placed %v, want only false", placed["waits"])
		}
	}
}

// TestPassRejectLeavesTheQueue: a queued job that the cluster can no
// longer run (its only agent large enough left) is rejected by the pass
// and leaves the queue; a failed rejection (the store refuses) keeps it
// queued, to be tried again.
func TestPassRejectLeavesTheQueue(t *testing.T) {
	for _, tc := range []struct {
		name        string
		storeFails  bool
		wantState   State
		wantWaiting int
		wantErr     bool
	}{
		{"rejected: out of the queue", false, Rejected, 0, false},
		{"the store refused: still queued", true, Queued, 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, Config{}, agent("a1", 4, 16384, 0.24), agent("a2", 8, 32768, 0.48))
			h.schedule()
			h.submit(mkJob("hog", 1, 8)) // on a2, the only agent of 8 cpus
			h.schedule()
			h.submit(mkJob("big", 1, 8)) // waits for a2
			h.schedule()
			if st := h.store.get("big").State; st != Queued || h.core.Waiting() != 1 {
				t.Fatalf("big %s, %d waiting; want QUEUED, 1", st, h.core.Waiting())
			}
			h.cluster.mu.Lock()
			h.cluster.agents = h.cluster.agents[:1] // a2 is gone
			h.cluster.mu.Unlock()
			if tc.storeFails {
				h.store.failTimes = map[State]int{Rejected: 1}
			}
			_, err := h.core.Schedule(context.Background())
			if (err != nil) != tc.wantErr {
				t.Fatalf("schedule: %v, want an error: %v", err, tc.wantErr)
			}
			if st := h.store.get("big").State; st != tc.wantState {
				t.Fatalf("big %s, want %s", st, tc.wantState)
			}
			if n := h.core.Waiting(); n != tc.wantWaiting {
				t.Fatalf("%d waiting, want %d", n, tc.wantWaiting)
			}
		})
	}
}
