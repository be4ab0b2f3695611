package offers

import (
	"context"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/sirupsen/logrus/hooks/test"

	"github.com/sparkpack/sparkpack/mesossim"
)

// TestAMasterAwayIsLoggedOnceNotPerRefresh: while the master does not
// answer, GET_AGENTS fails at every refresh; the adapter logs that once
// (and then once a period), and says when the master answers again. It
// used to log a warning every refresh (every 2 s by default: 1,800 an
// hour). AgentsRead says meanwhile that the agents are those of the last
// read, and that the last read failed (power management decides no
// power-off on them: power.View).
func TestAMasterAwayIsLoggedOnceNotPerRefresh(t *testing.T) {
	quiet := logrus.New()
	quiet.SetLevel(logrus.PanicLevel)
	m, err := mesossim.New(mesossim.Config{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	m.Start()
	defer m.Close()
	srv, addr := serveOn(t, m, "127.0.0.1:0")
	ep, err := NewEndpoint(addr, "", "")
	if err != nil {
		t.Fatal(err)
	}
	log, hook := test.NewNullLogger()
	op, st := NewOperator(ep), newMemStore()
	cl := NewCluster(ClusterConfig{Operator: op, Store: st, Reserver: &Reserver{Op: op, Journal: &memJournal{}, Log: quiet}, Log: log,
		Refresh: 10 * time.Millisecond, Sweep: time.Hour})
	ctx, cancel := context.WithCancel(context.Background())
	defer func() { cancel(); cl.Wait() }()
	if err := cl.Start(ctx); err != nil {
		t.Fatal(err)
	}
	readAt, readErr := cl.AgentsRead()
	if readAt.IsZero() || readErr != nil {
		t.Fatalf("after the first GET_AGENTS: AgentsRead %v, %v", readAt, readErr)
	}

	// The master goes away: its port takes connections and drops them.
	srv.Close()
	var ln net.Listener
	for i := 0; i < 50; i++ {
		if ln, err = net.Listen("tcp", addr); err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	var tries atomic.Int64
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			tries.Add(1)
			c.Close()
		}
	}()
	deadline := time.Now().Add(60 * time.Second)
	for tries.Load() < 30 {
		if time.Now().After(deadline) {
			t.Fatalf("only %d GET_AGENTS tries in 60 s", tries.Load())
		}
		time.Sleep(20 * time.Millisecond)
	}
	awayAt, awayErr := cl.AgentsRead()
	if awayErr == nil || !awayAt.Before(time.Now().Add(-100*time.Millisecond)) {
		t.Errorf("with the master away: AgentsRead %v (%s ago), %v; want the last read's time and an error", awayAt, time.Since(awayAt), awayErr)
	}
	ln.Close()
	srv, _ = serveOn(t, m, addr) // and comes back
	defer srv.Close()
	recovered := func() bool {
		for _, e := range hook.AllEntries() {
			if strings.Contains(e.Message, "GET_AGENTS answers again") {
				return true
			}
		}
		return false
	}
	for deadline = time.Now().Add(60 * time.Second); !recovered(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no line saying GET_AGENTS answers again within 60 s of the master's return")
		}
	}
	if at, err := cl.AgentsRead(); err != nil || !at.After(awayAt) {
		t.Errorf("the master back: AgentsRead %v, %v; want a read after %v and no error", at, err, awayAt)
	}
	var warnings []string
	for _, e := range hook.AllEntries() {
		if e.Level == logrus.WarnLevel && strings.Contains(e.Message, "GET_AGENTS") {
			warnings = append(warnings, e.Message)
		}
	}
	if len(warnings) != 1 {
		t.Fatalf("%d GET_AGENTS tries against a master away logged %d warnings, want 1: %q", tries.Load(), len(warnings), warnings)
	}
	if !strings.Contains(warnings[0], "--mesos-master") {
		t.Errorf("the warning %q does not say what to check", warnings[0])
	}
}
