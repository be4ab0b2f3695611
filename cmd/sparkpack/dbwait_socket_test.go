package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/store"
)

// TestDBWaitWaitsForALocalSocket: a PostgreSQL on this machine reached
// through its Unix socket (host=/var/run/postgresql, the usual systemd
// setup) that has not started yet has no socket file (ENOENT), or a stale
// one nobody accepts on (ECONNREFUSED): both are "not there yet", waited
// out like a refused TCP connection, as store.Open really reports them.
func TestDBWaitWaitsForALocalSocket(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err := store.Open(ctx, fmt.Sprintf("postgres:///sparkpack?host=%s&user=sparkpack&sslmode=disable", dir))
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
