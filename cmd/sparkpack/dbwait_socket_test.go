package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/internal/syncbuf"
	"github.com/sparkpack/sparkpack/store"
)

// TestDBWaitWaitsForALocalSocket: a PostgreSQL on this machine reached
// through its Unix socket (host=/var/run/postgresql, the usual systemd
// setup) that has not started yet has no socket file (ENOENT), or a stale
// one nobody accepts on (ECONNREFUSED): both are "not there yet", waited
// out like a refused TCP connection, as store.Open really reports them.
func TestDBWaitWaitsForALocalSocket(t *testing.T) {
	dir, err := os.MkdirTemp("", "sp-sock-") // short: a socket's path is at most 107 bytes
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err = store.Open(ctx, fmt.Sprintf("postgres:///sparkpack?host=%s&user=sparkpack&sslmode=disable", dir))
	if ok, check := dbTransient(err); !ok || check == "" {
		t.Errorf("no socket file yet: %v is not waited out", err)
	}
	if v := decideDBWait(err, 1, 0, time.Minute); v.Kind != dbRetry {
		t.Errorf("no socket file yet: %+v, want a retry", v)
	}
	// A stale socket file: nothing accepts on it.
	sock := filepath.Join(dir, ".s.PGSQL.5432")
	ln, lerr := net.Listen("unix", sock)
	if lerr != nil {
		t.Fatal(lerr)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	ln.Close()
	if _, serr := os.Stat(sock); serr != nil {
		t.Fatalf("the stale socket file is gone: %v", serr)
	}
	_, err = store.Open(ctx, fmt.Sprintf("postgres:///sparkpack?host=%s&user=sparkpack&sslmode=disable", dir))
	if ok, _ := dbTransient(err); !ok {
		t.Errorf("a stale socket file: %v is not waited out", err)
	}
}

// TestServeStoppedWhileWaitingForPostgreSQLExitsCleanly: SIGTERM (its
// context ending) while serve waits for PostgreSQL is a stop the operator
// asked for (systemctl stop, docker stop while the database is down), as
// it is once serving: exit 0 with a line saying so, not exit 1 with
// "context canceled" (systemd marked the unit failed).
func TestServeStoppedWhileWaitingForPostgreSQLExitsCleanly(t *testing.T) {
	db := fmt.Sprintf("postgres://sparkpack@127.0.0.1:%d/sparkpack?sslmode=disable", closedPort(t))
	var stderr syncbuf.Buffer
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--database-url", db, "--listen", "127.0.0.1:0", "--log-format", "json", "--database-wait", "5m"}, io.Discard, &stderr)
	}()
	deadline := time.Now().Add(2 * time.Minute)
	for len(logLines(stderr.String(), "waiting for PostgreSQL")) == 0 {
		select {
		case code := <-done:
			t.Fatalf("serve exited %d before it waited; stderr:\n%s", code, stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no attempt logged after 2 minutes; stderr:\n%s", stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("serve exited %d when stopped while waiting for PostgreSQL, want 0; stderr:\n%s", code, stderr.String())
	}
	if len(logLines(stderr.String(), "stopped while waiting for PostgreSQL")) != 1 {
		t.Errorf("no line says serve stopped while waiting; stderr:\n%s", stderr.String())
	}
}
