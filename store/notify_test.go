package store

import (
	"context"
	"encoding/binary"
	"io"
	"net"
	neturl "net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/internal/pgtest"
	"github.com/sparkpack/sparkpack/scheduler"
)

// Every job stored, through group commits of many jobs at once, is
// announced exactly once on JobsChannel (ids travel many to a
// notification), and a cancellation arrives as its own notice.
func TestListenHearsEveryStoredJob(t *testing.T) {
	s, url := openStore(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	heard := map[string]int{}
	cancelled := make(chan string, 1)
	ready := make(chan struct{})
	var once sync.Once
	done := make(chan error, 1)
	go func() {
		done <- Listen(ctx, url, JobEvents{
			Submitted: func(ids []string) {
				mu.Lock()
				defer mu.Unlock()
				for _, id := range ids {
					heard[id]++
				}
			},
			Cancelled: func(id string, kill bool) { cancelled <- id },
			Resync:    func() { once.Do(func() { close(ready) }) },
		}, quietLog())
	}()
	select {
	case <-ready:
	case <-time.After(10 * time.Second):
		t.Fatal("Listen did not start listening within 10 s")
	}
	const n = 400 // more than one notification's worth per group commit
	ids := make([]string, n)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		j := newJob(t, nil)
		ids[i] = j.ID
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, _, err := s.CreateJob(ctx, j, ""); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		got := len(heard)
		mu.Unlock()
		if got >= n || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	mu.Lock()
	for _, id := range ids {
		if heard[id] != 1 {
			t.Errorf("job %s announced %d times, want 1", id, heard[id])
		}
	}
	if len(heard) != n {
		t.Errorf("heard %d distinct ids, want %d", len(heard), n)
	}
	mu.Unlock()

	// A resubmission (same id, same body) creates nothing and announces nothing.
	again := newJob(t, func(sp *scheduler.Spec) { sp.ID = ids[0] })
	if _, created, err := s.CreateJob(ctx, again, ""); err != nil || created {
		t.Fatalf("resubmission: created=%v err=%v", created, err)
	}
	if _, _, err := s.Cancel(ctx, ids[1], "test"); err != nil {
		t.Fatal(err)
	}
	select {
	case id := <-cancelled:
		if id != ids[1] {
			t.Fatalf("cancelled %s, want %s", id, ids[1])
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no cancellation notice within 10 s")
	}
	mu.Lock()
	if heard[ids[0]] != 1 {
		t.Errorf("the resubmitted job was announced %d times, want 1", heard[ids[0]])
	}
	mu.Unlock()
	cancel()
	if err := <-done; err != context.Canceled {
		t.Fatalf("Listen returned %v, want context.Canceled", err)
	}
}

// hearSubmissions listens on url until ctx ends and passes on every job id
// announced; it returns once the listener is in place.
func hearSubmissions(ctx context.Context, url string) <-chan string {
	heard := make(chan string, 100)
	ready := make(chan struct{})
	var once sync.Once
	go func() {
		_ = Listen(ctx, url, JobEvents{
			Submitted: func(ids []string) {
				for _, id := range ids {
					heard <- id
				}
			},
			Resync: func() { once.Do(func() { close(ready) }) },
		}, quietLog())
	}()
	<-ready
	return heard
}

// While the process's core hears of submissions directly (it leads),
// group commits do not announce; a job whose submitter stopped waiting
// before the commit is announced all the same, since no core heard of it.
func TestQuietGroupCommits(t *testing.T) {
	s, url := openStore(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	heard := hearSubmissions(ctx, url)
	next := func() string {
		select {
		case id := <-heard:
			return id
		case <-time.After(10 * time.Second):
			t.Fatal("no notification within 10 s")
			return ""
		}
	}
	var direct atomic.Bool
	s.SetDirectIntake(direct.Load)

	// Quiet, then announced: notifications come in commit order, so the
	// first one heard is the announced job's.
	direct.Store(true)
	quiet := newJob(t, nil)
	if _, _, err := s.CreateJob(ctx, quiet, ""); err != nil {
		t.Fatal(err)
	}
	direct.Store(false)
	loud := newJob(t, nil)
	if _, _, err := s.CreateJob(ctx, loud, ""); err != nil {
		t.Fatal(err)
	}
	if id := next(); id != loud.ID {
		t.Fatalf("heard %s first, want the announced job %s (the quiet one is %s)", id, loud.ID, quiet.ID)
	}

	// A submitter that stops waiting: the insert is held up by a lock, the
	// caller's context ends, then the insert commits and is announced.
	direct.Store(true)
	tx, err := s.DB().BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, `LOCK TABLE jobs IN EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	gone := newJob(t, nil)
	cctx, ccancel := context.WithTimeout(ctx, 300*time.Millisecond)
	_, _, err = s.CreateJob(cctx, gone, "")
	ccancel()
	if err == nil {
		t.Fatal("CreateJob returned before the table lock was released")
	}
	time.Sleep(100 * time.Millisecond) // the committer is waiting for the lock
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if id := next(); id != gone.ID {
		t.Fatalf("heard %s, want the abandoned job %s", id, gone.ID)
	}
	if j, err := s.GetJob(ctx, gone.ID); err != nil || j.ID != gone.ID {
		t.Fatalf("the abandoned job was not stored: %v", err)
	}
}

// cutAfterCommit forwards TCP connections to PostgreSQL; once armed, it
// drops the first connection on which the server answers CommandComplete,
// without passing the answer on: the server has the statement's Sync, so
// it commits, and the client sees a broken connection.
type cutAfterCommit struct {
	ln     net.Listener
	target string
	armed  atomic.Bool
}

func (p *cutAfterCommit) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		go func() { _, _ = io.Copy(s, c); s.Close() }()
		go func() {
			defer c.Close()
			defer s.Close()
			hdr := make([]byte, 5)
			for {
				if _, err := io.ReadFull(s, hdr); err != nil {
					return
				}
				body := make([]byte, int(binary.BigEndian.Uint32(hdr[1:]))-4)
				if _, err := io.ReadFull(s, body); err != nil {
					return
				}
				if hdr[0] == 'C' && p.armed.CompareAndSwap(true, false) {
					time.Sleep(200 * time.Millisecond) // the server commits meanwhile
					return
				}
				if _, err := c.Write(append(hdr, body...)); err != nil {
					return
				}
			}
		}()
	}
}

// A quiet group commit (this instance leads) whose answer is lost after
// PostgreSQL committed it fails its submitters, who may never retry: the
// job is stored all the same, so the store announces it, and the leader's
// core hears of it.
func TestQuietCommitWithLostAnswerIsAnnounced(t *testing.T) {
	direct := pgtest.URL(t)
	u, err := neturl.Parse(direct)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &cutAfterCommit{ln: ln, target: u.Host}
	go p.serve()
	t.Cleanup(func() { ln.Close() })
	viaProxy := *u
	viaProxy.Host = ln.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, err := Open(ctx, viaProxy.String(), WithLogger(quietLog()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	s.SetDirectIntake(func() bool { return true })

	heard := hearSubmissions(ctx, direct)
	// The statement is prepared on a first commit, answered as usual.
	if _, _, err := s.CreateJob(ctx, newJob(t, nil), ""); err != nil {
		t.Fatal(err)
	}
	p.armed.Store(true)
	lost := newJob(t, nil)
	if _, _, err := s.CreateJob(ctx, lost, ""); err == nil {
		t.Fatal("CreateJob succeeded through a connection cut before its answer")
	}
	if j, err := s.GetJob(ctx, lost.ID); err != nil || j.State != scheduler.Submitted {
		t.Fatalf("the job whose answer was lost: %+v %v, want it stored SUBMITTED", j, err)
	}
	select {
	case id := <-heard:
		if id != lost.ID {
			t.Fatalf("heard %s, want %s", id, lost.ID)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the job committed without an answer was never announced")
	}
}
