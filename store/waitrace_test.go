package store

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/internal/pgtest"
	"github.com/sparkpack/sparkpack/scheduler"
)

// TestWaitingNoteRacingAStartKeepsOneWaitedEvent: a waiting note written
// while the job's start holds its row (StartPlaced: the job leaves the
// queue, and records why it waited last) adds no "waited" event of its
// own. The note's transaction read the reason that held before the start
// committed and kept it as a second event: seen in a job's timeline as
// "waited 3s: waiting for agent-01 to boot, ready any moment" twice, 16 ms
// apart, the second before the first, so its waits added up to more than
// it waited.
func TestWaitingNoteRacingAStartKeepsOneWaitedEvent(t *testing.T) {
	var mu sync.Mutex
	now := time.Now().UTC()
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	url := pgtest.URL(t)
	ctx := context.Background()
	s, err := Open(ctx, url, WithLogger(quietLog()), WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	j := newJob(t, nil)
	if _, _, err := s.CreateJob(ctx, j, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Transition(ctx, j.ID, scheduler.Submitted, scheduler.Queued, "queued", nil); err != nil {
		t.Fatal(err)
	}
	const held = "waiting for agent-01 to boot, ready any moment"
	if err := s.SetWaitingMany(ctx, []scheduler.WaitingNote{{ID: j.ID, Reason: held}}); err != nil {
		t.Fatal(err)
	}
	advance(3 * time.Second)

	// The start, held open: it locks the job, keeps why it waited, and
	// moves it on, as StartPlaced does in its transaction.
	tx, err := s.DB().BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := lockJob(ctx, tx, j.ID); err != nil {
		t.Fatal(err)
	}
	if err := keepWaitingReasons(ctx, tx, []string{j.ID}, []string{""}, clock()); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE jobs SET state = 'RESERVING', waiting_reason = '' WHERE id = $1`, j.ID); err != nil {
		t.Fatal(err)
	}
	// The waiting writer's note of the same pass, meanwhile.
	noted := make(chan error, 1)
	go func() {
		noted <- s.SetWaitingMany(ctx, []scheduler.WaitingNote{{ID: j.ID, Reason: "does not fit now: short of cpus"}})
	}()
	// Until the note waits for the start's lock (before the fix it had
	// kept its event by then and waited only to update the row).
	deadline := time.Now().Add(2 * time.Minute)
	for {
		var waiting int
		if err := s.DB().QueryRowContext(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		if waiting > 0 {
			break
		}
		select {
		case err := <-noted:
			t.Fatalf("the note did not wait for the start's lock (err %v)", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("the note never waited for the start's lock")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := <-noted; err != nil {
		t.Fatal(err)
	}
	evs, err := s.Events(ctx, j.ID)
	if err != nil {
		t.Fatal(err)
	}
	var waited []string
	for _, e := range evs {
		if strings.HasPrefix(e.Reason, "waited ") {
			waited = append(waited, e.Reason)
		}
	}
	if len(waited) != 1 || waited[0] != scheduler.WaitedReason(3*time.Second, held) {
		t.Fatalf("waited events %q, want one: %q", waited, scheduler.WaitedReason(3*time.Second, held))
	}
}
