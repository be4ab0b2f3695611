// Package scratchpg starts a throw-away PostgreSQL server for the demo (the
// same recipe as scripts/scratch-pg.sh, which tests use): initdb into a
// directory, listen on 127.0.0.1 on a free port, trust authentication,
// fsync off (it survives a server crash, not an OS crash), synchronous
// commit on. As root, the server runs as the "postgres" user because
// initdb refuses root. It must not import other sparkpack packages.
package scratchpg

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Server is a running scratch server.
type Server struct {
	Dir    string
	URL    string
	Port   int
	bindir string
	log    io.Writer
}

// InstallHint is what to run when the PostgreSQL server binaries are missing.
const InstallHint = "apt-get update && apt-get install -y postgresql (or run scripts/deps.sh, or pass --database-url)"

// FindBinDir returns the directory holding initdb and pg_ctl.
func FindBinDir() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return pgVersion(dirs[i]) > pgVersion(dirs[j]) })
	for _, d := range dirs {
		if isExec(filepath.Join(d, "initdb")) && isExec(filepath.Join(d, "pg_ctl")) {
			return d, nil
		}
	}
	if p, err := exec.LookPath("pg_ctl"); err == nil {
		d := filepath.Dir(p)
		if isExec(filepath.Join(d, "initdb")) {
			return d, nil
		}
	}
	return "", fmt.Errorf("PostgreSQL server binaries (initdb, pg_ctl) not found; install them: %s", InstallHint)
}

func pgVersion(dir string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(dir)))
	return v
}

func isExec(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode()&0o111 != 0
}

func asRoot() bool { return os.Geteuid() == 0 }

// command runs a PostgreSQL tool as the cluster's owner.
func (s *Server) command(ctx context.Context, tool string, args ...string) *exec.Cmd {
	path := filepath.Join(s.bindir, tool)
	if asRoot() {
		return exec.CommandContext(ctx, "runuser", append([]string{"-u", "postgres", "--", path}, args...)...)
	}
	return exec.CommandContext(ctx, path, args...)
}

// Start creates dir (which must not hold a cluster yet) and starts a
// server in it. Progress lines go to log.
func Start(ctx context.Context, dir string, log io.Writer) (*Server, error) {
	bindir, err := FindBinDir()
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if len(abs) > 90 {
		return nil, fmt.Errorf("scratch PostgreSQL directory %s is too long for a unix socket path; use a shorter one", abs)
	}
	if _, err := os.Stat(filepath.Join(abs, "data")); err == nil {
		return nil, fmt.Errorf("%s/data exists already; remove it or choose another directory", abs)
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return nil, err
	}
	s := &Server{Dir: abs, bindir: bindir, log: log}
	if asRoot() {
		if _, err := user.Lookup("postgres"); err != nil {
			if out, err := exec.CommandContext(ctx, "useradd", "--system", "--home-dir", "/var/lib/postgresql", "--shell", "/bin/bash", "postgres").CombinedOutput(); err != nil {
				return nil, fmt.Errorf("create the postgres user: %v: %s", err, out)
			}
		}
		if out, err := exec.CommandContext(ctx, "chown", "postgres", abs).CombinedOutput(); err != nil {
			return nil, fmt.Errorf("chown %s to postgres: %v: %s", abs, err, out)
		}
	}
	fmt.Fprintf(log, "scratch-pg: initdb in %s/data\n", abs)
	if out, err := s.command(ctx, "initdb", "-D", filepath.Join(abs, "data"), "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-locale").CombinedOutput(); err != nil {
		return nil, fmt.Errorf("initdb failed: %v\n%s", err, out)
	}
	var lastErr error
	for attempt := 0; attempt < 5; attempt++ {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		s.Port = port
		opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off -c max_connections=200", port, abs)
		out, err := s.command(ctx, "pg_ctl", "-D", filepath.Join(abs, "data"), "-l", filepath.Join(abs, "server.log"), "-w", "-t", "60", "-o", opts, "start").CombinedOutput()
		if err == nil {
			s.URL = fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port)
			fmt.Fprintf(log, "scratch-pg: PostgreSQL up on 127.0.0.1:%d\n", port)
			return s, nil
		}
		logb, _ := os.ReadFile(filepath.Join(abs, "server.log"))
		lastErr = fmt.Errorf("pg_ctl start: %v\n%s\n%s", err, out, logb)
		if !strings.Contains(string(logb), "could not bind") && !strings.Contains(string(logb), "could not create any TCP") {
			break
		}
	}
	return nil, fmt.Errorf("the scratch PostgreSQL server did not start: %w", lastErr)
}

// Stop stops the server and deletes its directory.
func (s *Server) Stop() error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := s.command(ctx, "pg_ctl", "-D", filepath.Join(s.Dir, "data"), "-m", "fast", "-w", "stop").CombinedOutput()
	rmErr := os.RemoveAll(s.Dir)
	if err != nil {
		return fmt.Errorf("stop scratch PostgreSQL: %v: %s", err, out)
	}
	return rmErr
}

// freePort picks a free TCP port on 127.0.0.1 below Linux's ephemeral range.
func freePort() (int, error) {
	for i := 0; i < 200; i++ {
		p := 20000 + int(time.Now().UnixNano()%12000)
		ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
		if err == nil {
			ln.Close()
			return p, nil
		}
		time.Sleep(time.Millisecond)
	}
	return 0, errors.New("no free TCP port found on 127.0.0.1")
}
