// Package pgtest gives tests a real PostgreSQL: a fresh database on the
// scratch server named by SPARKPACK_TEST_DATABASE_URL (make test starts one
// with scripts/scratch-pg.sh), or, when that is unset, on a server this
// package starts itself with the same script. It is for tests only.
package pgtest

import (
	"bytes"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	_ "github.com/lib/pq" // the driver under test
)

// EnvURL names the environment variable holding an admin URL of a scratch server.
const EnvURL = "SPARKPACK_TEST_DATABASE_URL"

var (
	once      sync.Once
	sharedURL string
	sharedDir string
	sharedErr error
)

// Main runs the tests of a package and stops the server pgtest started, if
// any. Use it from TestMain: func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }
func Main(m *testing.M) int {
	code := m.Run()
	if sharedDir != "" {
		_ = runScript("stop", sharedDir)
	}
	return code
}

// URL returns the URL of a new, empty database that is dropped when the test ends.
func URL(t testing.TB) string {
	t.Helper()
	admin := adminURL(t)
	name := fmt.Sprintf("t_%d", rand.Uint64())
	db, err := sql.Open("postgres", admin)
	if err != nil {
		t.Fatalf("pgtest: open %s: %v", admin, err)
	}
	defer db.Close()
	if _, err := db.Exec("CREATE DATABASE " + name); err != nil {
		t.Fatalf("pgtest: create database: %v (is the scratch server up? see scripts/scratch-pg.sh)", err)
	}
	t.Cleanup(func() {
		db, err := sql.Open("postgres", admin)
		if err == nil {
			_, _ = db.Exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)")
			db.Close()
		}
	})
	return WithDatabase(admin, name)
}

// WithDatabase returns u pointing at database name.
func WithDatabase(u, name string) string {
	p, err := url.Parse(u)
	if err != nil {
		return u
	}
	p.Path = "/" + name
	return p.String()
}

func adminURL(t testing.TB) string {
	if u := os.Getenv(EnvURL); u != "" {
		return u
	}
	once.Do(func() {
		dir, err := os.MkdirTemp("", "sppg")
		if err != nil {
			sharedErr = err
			return
		}
		os.Remove(dir) // the script creates it
		sharedDir = dir
		sharedURL, sharedErr = start(dir)
	})
	if sharedErr != nil {
		t.Fatalf("pgtest: no %s set and starting a scratch server failed: %v", EnvURL, sharedErr)
	}
	return sharedURL
}

// Server is a private PostgreSQL server that a test may stop and restart.
type Server struct {
	dir string
	URL string // admin URL (database "postgres")
}

// Private starts a server of the test's own, stopped and removed when the test ends.
func Private(t testing.TB) *Server {
	t.Helper()
	dir, err := os.MkdirTemp("", "sppg")
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(dir)
	u, err := start(dir)
	if err != nil {
		t.Fatalf("pgtest: start private server: %v", err)
	}
	t.Cleanup(func() { _ = runScript("stop", dir) })
	return &Server{dir: dir, URL: u}
}

// Kill stops the server at once, as a crash would.
func (s *Server) Kill() error { return runScript("kill", s.dir) }

// Resume starts a killed server again on the same port.
func (s *Server) Resume() error { return runScript("resume", s.dir) }

func start(dir string) (string, error) {
	var out bytes.Buffer
	cmd := exec.Command("bash", scriptPath(), "start", dir)
	cmd.Stdout = &out
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("scripts/scratch-pg.sh start %s: %w", dir, err)
	}
	return strings.TrimSpace(out.String()), nil
}

func runScript(verb, dir string) error {
	cmd := exec.Command("bash", scriptPath(), verb, dir)
	cmd.Stdout = os.Stderr
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("scripts/scratch-pg.sh %s %s: %w", verb, dir, err)
	}
	return nil
}

// scriptPath finds scripts/scratch-pg.sh in the module root above the
// working directory (go test runs in the package directory).
func scriptPath() string {
	dir, _ := os.Getwd()
	for {
		p := filepath.Join(dir, "scripts", "scratch-pg.sh")
		if _, err := os.Stat(p); err == nil {
			return p
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "scripts/scratch-pg.sh"
		}
		dir = parent
	}
}
