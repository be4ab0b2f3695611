package scheduler

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/sparkpack/sparkpack/placement"
)

// Why a job waits. The detailed reason (with the cluster's current
// figures, e.g. "short of 12 cpus; the cluster can hold 3 executors now")
// lives in memory and is shown by the queue views; the store keeps a
// coarse form that changes only when the kind of wait changes (e.g. "does
// not fit now: short of cpus"), so that a scheduling pass over thousands
// of waiting jobs writes nothing when only the figures moved.

type waitKind uint8

const (
	waitText          waitKind = iota // text is the reason
	waitNoFit                         // nf is the reason
	waitDeadlineFirst                 // ReasonDeadlineFirst
)

type waitState struct {
	kind   waitKind
	text   string
	nf     placement.NoFit
	atRisk bool
	// pre, for a deadline job that does not fit, says whether it will
	// miss its deadline waiting and what preemption does about it.
	pre *PreemptionView
	// byChoice: the job waits by choice (its start time, a boot, warm
	// capacity: a deferred outcome) and holds no regular job back.
	byChoice bool
}

// storedWait is what the store holds for a waiting job.
type storedWait struct {
	reason string
	atRisk bool
}

// promotedPrefix marks the reason of a regular job moved to the deadline
// queue because it waited too long.
func promotedPrefix(after time.Duration) string {
	return fmt.Sprintf("promoted (skipped for over %s): ", after)
}

// detail is the reason as views show it.
func (w waitState) detail(promoted bool, promoteAfter time.Duration) string {
	var r string
	switch w.kind {
	case waitNoFit:
		r = w.nf.Error()
	case waitDeadlineFirst:
		r = ReasonDeadlineFirst
	default:
		r = w.text
	}
	if promoted && r != "" && !strings.HasPrefix(r, "promoted") {
		r = promotedPrefix(promoteAfter) + r
	}
	if d, _ := w.pre.note(); d != "" {
		r += "; " + d
	}
	return r
}

// coarse is the reason as the store keeps it.
func (w waitState) coarse(promoted bool, promoteAfter time.Duration) string {
	if w.kind != waitNoFit {
		r := w
		r.pre = nil
		r2 := r.detail(promoted, promoteAfter)
		if _, c := w.pre.note(); c != "" {
			r2 += "; " + c
		}
		return r2
	}
	var r string
	switch w.nf.Resource {
	case "cpus":
		r = "does not fit now: short of cpus"
	case "mem":
		r = "does not fit now: short of memory"
	default:
		r = "does not fit now: no set of agents holds its executors"
	}
	if promoted {
		r = promotedPrefix(promoteAfter) + r
	}
	if _, c := w.pre.note(); c != "" {
		r += "; " + c
	}
	return r
}

// waitingWriter collects the waiting notes to store and writes them in
// batches, outside any lock a reader or the API needs.
type waitingWriter struct {
	mu    sync.Mutex
	dirty map[string]WaitingNote
	kick  chan struct{}
}

func newWaitingWriter() *waitingWriter {
	return &waitingWriter{dirty: map[string]WaitingNote{}, kick: make(chan struct{}, 1)}
}

func (w *waitingWriter) put(n WaitingNote) {
	w.mu.Lock()
	w.dirty[n.ID] = n
	w.mu.Unlock()
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

// drop forgets a pending note (the job left the queue).
func (w *waitingWriter) drop(id string) {
	w.mu.Lock()
	delete(w.dirty, id)
	w.mu.Unlock()
}

func (w *waitingWriter) pending() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.dirty)
}

func (w *waitingWriter) take(max int) []WaitingNote {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]WaitingNote, 0, min(max, len(w.dirty)))
	for id, n := range w.dirty {
		if len(out) == max {
			break
		}
		out = append(out, n)
		delete(w.dirty, id)
	}
	return out
}

// giveBack returns notes whose write failed, unless newer ones came meanwhile.
func (w *waitingWriter) giveBack(ns []WaitingNote) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, n := range ns {
		if _, newer := w.dirty[n.ID]; !newer {
			w.dirty[n.ID] = n
		}
	}
}

// waitingBatch bounds one write of waiting notes.
const waitingBatch = 5000

// flushWaiting writes every pending note, in batches; it stops at the
// first error (the notes are kept for the next try).
func (c *Core) flushWaiting(ctx context.Context) error {
	for {
		batch := c.waiting.take(waitingBatch)
		if len(batch) == 0 {
			return nil
		}
		if err := c.setWaitingMany(ctx, batch); err != nil {
			c.waiting.giveBack(batch)
			return err
		}
	}
}

func (c *Core) setWaitingMany(ctx context.Context, notes []WaitingNote) error {
	return c.store.SetWaitingMany(ctx, notes)
}

// writeWaiting is the goroutine (owned by Run) that stores waiting reasons
// while the loop goes on scheduling.
func (c *Core) writeWaiting(ctx context.Context) {
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	backoff := time.Duration(0)
	for {
		select {
		case <-ctx.Done():
			return
		case <-c.waiting.kick:
		case <-tick.C:
		}
		if backoff > 0 {
			select {
			case <-ctx.Done():
				return
			case <-time.After(backoff):
			}
		}
		if err := c.flushWaiting(ctx); err != nil {
			if ctx.Err() != nil {
				return
			}
			backoff = min(max(2*backoff, 250*time.Millisecond), 10*time.Second)
			c.log.WithError(err).WithField("pending", c.waiting.pending()).Warn("could not store waiting reasons; retrying")
			continue
		}
		backoff = 0
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
