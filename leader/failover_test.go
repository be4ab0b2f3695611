package leader_test

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/sparkpack/sparkpack/internal/pgtest"
	"github.com/sparkpack/sparkpack/leader"
	"github.com/sparkpack/sparkpack/store"
)

// These tests run the election with the default timing on a real
// PostgreSQL, with the leader in a process of its own (this test binary,
// started again as a helper) that the test kills, stops and continues.

const helperEnv = "SPARKPACK_LEADER_HELPER_DB"

func TestMain(m *testing.M) {
	if url := os.Getenv(helperEnv); url != "" {
		os.Exit(runHelper(url, os.Getenv("SPARKPACK_LEADER_HELPER_TTL")))
	}
	os.Exit(pgtest.Main(m))
}

// runHelper campaigns as instance "helper" and prints LEAD <token> and
// LOST <token> as its leadership changes, until it is killed.
func runHelper(url, ttl string) int {
	log := logrus.New()
	log.SetOutput(io.Discard)
	st, err := store.Open(context.Background(), url, store.WithLogger(log))
	if err != nil {
		fmt.Println("ERROR", err)
		return 1
	}
	cfg := leader.Config{Instance: "helper", URL: "http://helper", Log: log,
		OnChange: func(lead bool, l leader.Lease) {
			if lead {
				fmt.Printf("LEAD %d\n", l.Token)
			} else {
				fmt.Printf("LOST %d\n", l.Token)
			}
		}}
	if ttl != "" {
		cfg.TTL, _ = time.ParseDuration(ttl)
		cfg.Renew = cfg.TTL / 8
	}
	el, err := leader.New(cfg, st)
	if err != nil {
		fmt.Println("ERROR", err)
		return 1
	}
	_ = el.Run(context.Background(), func(ctx context.Context, _ leader.Lease) { <-ctx.Done() })
	return 0
}

// helper is the leader's process.
type helper struct {
	cmd   *exec.Cmd
	lines chan string
}

func startHelper(t *testing.T, url, ttl string) *helper {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+url, "SPARKPACK_LEADER_HELPER_TTL="+ttl)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	h := &helper{cmd: cmd, lines: make(chan string, 100)}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			h.lines <- sc.Text()
		}
		close(h.lines)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGCONT)
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return h
}

// waitLead waits for the helper to lead and returns its line.
func (h *helper) waitLead(t *testing.T, within time.Duration) string {
	t.Helper()
	timeout := time.After(within)
	for {
		select {
		case l, ok := <-h.lines:
			if !ok {
				t.Fatal("the leader's process ended")
			}
			if strings.HasPrefix(l, "LEAD ") {
				return l
			}
			t.Fatalf("the leader's process said %q", l)
		case <-timeout:
			t.Fatalf("the leader's process did not lead within %s", within)
		}
	}
}

// follower is an elector in this process that records when it leads.
type follower struct {
	cancel context.CancelFunc
	done   chan struct{}
	led    chan time.Time
}

func startFollower(t *testing.T, url string) *follower {
	t.Helper()
	log := logrus.New()
	log.SetOutput(io.Discard)
	st, err := store.Open(context.Background(), url, store.WithLogger(log))
	if err != nil {
		t.Fatal(err)
	}
	f := &follower{done: make(chan struct{}), led: make(chan time.Time, 10)}
	el, err := leader.New(leader.Config{Instance: "follower", URL: "http://follower", Log: log,
		OnChange: func(lead bool, _ leader.Lease) {
			if lead {
				f.led <- time.Now()
			}
		}}, st)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	f.cancel = cancel
	go func() {
		defer close(f.done)
		_ = el.Run(ctx, func(ctx context.Context, _ leader.Lease) { <-ctx.Done() })
		st.Close()
	}()
	var once sync.Once
	t.Cleanup(func() { once.Do(f.stop) })
	return f
}

func (f *follower) stop() { f.cancel(); <-f.done }

// TestDeadLeaderIsReplacedWithinTheDefaultTiming kills the leader's process
// (kill -9: it stops renewing, nothing is released) at random points of
// its renewal cycle and measures how long a follower with the default
// timing takes to lead. The bound asserted is generous (the worst case is
// TTL + Retry, 4.25 s, plus query time on a busy machine); the old
// defaults (10 s lease) took 8.4-10 s and fail it.
func TestDeadLeaderIsReplacedWithinTheDefaultTiming(t *testing.T) {
	if testing.Short() {
		t.Skip("kills processes for about 20 s")
	}
	url := pgtest.URL(t)
	const bound = 7 * time.Second
	var took []time.Duration
	for round := 0; round < 3; round++ {
		h := startHelper(t, url, "")
		h.waitLead(t, 15*time.Second)
		f := startFollower(t, url)
		time.Sleep(time.Second + time.Duration(rand.Int64N(int64(time.Second))))
		if err := h.cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		killed := time.Now()
		select {
		case at := <-f.led:
			took = append(took, at.Sub(killed))
		case <-time.After(20 * time.Second):
			t.Fatalf("round %d: no follower led within 20 s of the kill", round)
		}
		f.stop() // releases the lease for the next round
	}
	t.Logf("failover after kill -9 of the leader (lease %s, renew %s, retry %s): %v", leader.DefaultTTL, leader.DefaultRenew, leader.DefaultRetry, took)
	for _, d := range took {
		if d > bound {
			t.Errorf("a follower took %s to replace a dead leader (bound %s)", d, bound)
		}
	}
}

// stallLease holds the lease row locked for d from a connection of its
// own: the leader's renewals (and everybody's attempts to take the lease)
// wait for it, as they would for a database that does not answer.
func stallLease(t *testing.T, db *sql.DB, d time.Duration) {
	t.Helper()
	ctx := context.Background()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `SELECT 1 FROM leader_lease WHERE id = 1 FOR UPDATE`); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, `SELECT pg_sleep($1)`, d.Seconds()); err != nil {
		t.Fatal(err)
	}
}

// TestLiveLeaderRidesOutStallsAndPauses: with the default timing, 2 s
// stalls of the leader's renewals in the database and 1 s pauses of its
// process (SIGSTOP, SIGCONT), at random points of its renewal cycle,
// never cost it the lease. The same stall does depose a leader with a
// lease too short for it (1.5 s): it steps down, which shows the stall
// is real.
func TestLiveLeaderRidesOutStallsAndPauses(t *testing.T) {
	if testing.Short() {
		t.Skip("stalls the database for about 20 s")
	}
	url := pgtest.URL(t)
	db, err := sql.Open("postgres", url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()

	t.Run("default timing", func(t *testing.T) {
		h := startHelper(t, url, "")
		lead := h.waitLead(t, 15*time.Second)
		f := startFollower(t, url)
		for i := 0; i < 4; i++ {
			time.Sleep(time.Duration(300+rand.IntN(700)) * time.Millisecond)
			stallLease(t, db, 2*time.Second)
			time.Sleep(time.Duration(300+rand.IntN(700)) * time.Millisecond)
			if err := h.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
				t.Fatal(err)
			}
			time.Sleep(time.Second)
			if err := h.cmd.Process.Signal(syscall.SIGCONT); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(2 * time.Second)
		select {
		case <-f.led:
			t.Fatal("the follower took over from a live leader")
		default:
		}
		select {
		case l := <-h.lines:
			t.Fatalf("the leader said %q (it was %q)", l, lead)
		default:
		}
		var holder string
		if err := db.QueryRow(`SELECT instance FROM leader_lease WHERE id = 1 AND expires_at > now()`).Scan(&holder); err != nil || holder != "helper" {
			t.Fatalf("the lease is held by %q (%v), want the helper", holder, err)
		}
	})

	t.Run("lease too short for the stall", func(t *testing.T) {
		// Release the lease of the previous leader first.
		if _, err := db.Exec(`UPDATE leader_lease SET expires_at = now() - interval '1 second'`); err != nil {
			t.Fatal(err)
		}
		h := startHelper(t, url, "1500ms")
		h.waitLead(t, 15*time.Second)
		stallLease(t, db, 2*time.Second)
		select {
		case l := <-h.lines:
			if !strings.HasPrefix(l, "LOST ") {
				t.Fatalf("the leader said %q", l)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("a 2 s stall did not depose a leader with a 1.5 s lease: the stall does not stall renewals")
		}
	})
}
