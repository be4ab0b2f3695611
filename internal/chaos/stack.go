package chaos

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	_ "github.com/lib/pq" // the checks read the store
)

// Tokens of the stack (--tokens-file): the load submits as "chaos"; the
// hostile requests try the others' limits.
const (
	TokenChaos  = "chaos-token-0123456789abcdef"
	TokenOther  = "other-token-0123456789abcdef"
	TokenReader = "reader-token-0123456789abcdef"
	TokenAdmin  = "admin-token-0123456789abcdef"
)

const tokensFile = "chaos:" + TokenChaos + ":submit,cancel,read,metrics\n" +
	"other:" + TokenOther + ":submit,cancel,read\n" +
	"reader:" + TokenReader + ":read\n" +
	"admin:" + TokenAdmin + ":submit,cancel,read,metrics,admin\n"

// Stack is a scratch PostgreSQL, the Mesos emulator and several sparkpack
// instances, each a process of its own.
type Stack struct {
	Bin, Dir, Root string
	DBURL          string
	pgDir          string
	EmuURL         string
	emu            *exec.Cmd
	Instances      []*Instance
	db             *sql.DB
	log            func(format string, args ...any)
	// seen are the doubles reported so far (the emulator's launch counts
	// are cumulative over the run).
	seen map[string]bool
	// cancelled are the jobs the suite cancelled on purpose: Check does
	// not count them as not finished.
	cancelled map[string]bool
	// mayReject are deadline jobs that may be REJECTED (their deadline
	// passed while they waited): not a breach when they are.
	mayReject map[string]bool
}

// Options are the stack's optional features.
type Options struct {
	Power      Power
	Preemption string // serve's --preemption ("" leaves it off)
	// ReserveMode is serve's --reserve-mode ("" leaves serve's default,
	// operator): offers reserves from offers (ACCEPT with RESERVE).
	ReserveMode string
}

// Instance is one `sparkpack serve`.
type Instance struct {
	ID, API, SparkREST string
	args               []string
	bin, logPath       string

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// StartStack starts everything under dir (logs, the database) with n
// instances; root is the repository (for scripts/scratch-pg.sh).
//
// With o.Power.On, every instance runs power management against the
// emulator's power API (agents idle o.Power.OffAfter are powered off and
// powered on again for jobs); with o.Power.NewIDs too, the emulator's
// agents lose their work dir over a power cycle and come back under new
// agent ids. With o.Preemption, every instance evicts running jobs for
// deadline jobs with that policy. With o.ReserveMode, every instance
// reserves in that mode (serve's --reserve-mode).
func StartStack(ctx context.Context, bin, root, dir string, n int, timeScale float64, o Options, logf func(string, ...any)) (*Stack, error) {
	pw := o.Power
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	// The database goes in a directory of its own under the system's
	// temporary directory: as root the server runs as the postgres user,
	// who must reach it.
	pgDir, err := os.MkdirTemp("", "sparkpack-chaos-pg.")
	if err != nil {
		return nil, err
	}
	os.Remove(pgDir)
	s := &Stack{Bin: bin, Dir: dir, Root: root, pgDir: pgDir, log: logf, seen: map[string]bool{}, cancelled: map[string]bool{}, mayReject: map[string]bool{}}
	cmd := exec.CommandContext(ctx, filepath.Join(root, "scripts", "scratch-pg.sh"), "start", s.pgDir)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("scratch PostgreSQL: %w: %s", err, stderr.String())
	}
	s.DBURL = strings.TrimSpace(string(out))
	if s.db, err = sql.Open("postgres", s.DBURL); err != nil {
		return s, err
	}
	s.db.SetMaxOpenConns(4)
	port, err := freePort()
	if err != nil {
		return s, err
	}
	s.EmuURL = fmt.Sprintf("http://127.0.0.1:%d", port)
	emuLog, err := os.Create(filepath.Join(dir, "mesos-sim.log"))
	if err != nil {
		return s, err
	}
	s.emu = exec.Command(bin, "mesos-sim", "--listen", fmt.Sprintf("127.0.0.1:%d", port), "--time-scale", strconv.FormatFloat(timeScale, 'g', -1, 64),
		"--offer-interval", "200ms", "--log-level", "warn")
	if pw.NewIDs {
		s.emu.Args = append(s.emu.Args, "--agents-lose-work-dir")
	}
	s.emu.Stdout, s.emu.Stderr = emuLog, emuLog
	if err := s.emu.Start(); err != nil {
		return s, err
	}
	if err := waitHTTP(ctx, s.EmuURL+"/health", 30*time.Second); err != nil {
		return s, fmt.Errorf("mesos-sim: %w", err)
	}
	tokens := filepath.Join(dir, "tokens")
	if err := os.WriteFile(tokens, []byte(tokensFile), 0o600); err != nil {
		return s, err
	}
	for i := 0; i < n; i++ {
		api, err := freePort()
		if err != nil {
			return s, err
		}
		rest, err := freePort()
		if err != nil {
			return s, err
		}
		id := fmt.Sprintf("chaos-%d", i+1)
		in := &Instance{ID: id, API: fmt.Sprintf("http://127.0.0.1:%d", api), SparkREST: fmt.Sprintf("http://127.0.0.1:%d", rest),
			bin: bin, logPath: filepath.Join(dir, id+".log")}
		in.args = []string{"serve", "--listen", fmt.Sprintf("127.0.0.1:%d", api), "--database-url", s.DBURL,
			"--mesos-master", s.EmuURL, "--instance-id", id, "--advertise-url", in.API,
			"--spark-rest-listen", fmt.Sprintf("127.0.0.1:%d", rest), "--spark-rest-allow", "127.0.0.1/32",
			"--tokens-file", tokens, "--log-format", "json", "--log-level", "info", "--agents-refresh", "500ms",
			"--rate-limit", "0", "--lost-job-rescan", "5s"}
		if pw.On {
			in.args = append(in.args, pw.serveArgs(timeScale)...)
		}
		if o.Preemption != "" {
			in.args = append(in.args, "--preemption", o.Preemption, "--preempt-protect", "1s")
		}
		if o.ReserveMode != "" {
			in.args = append(in.args, "--reserve-mode", o.ReserveMode)
		}
		if err := in.Start(); err != nil {
			return s, err
		}
		s.Instances = append(s.Instances, in)
	}
	for _, in := range s.Instances {
		if err := waitHTTP(ctx, in.API+"/healthz", 60*time.Second); err != nil {
			return s, fmt.Errorf("%s: %w", in.ID, err)
		}
	}
	return s, nil
}

// Start runs the instance's process (again, after a kill).
func (in *Instance) Start() error {
	in.mu.Lock()
	defer in.mu.Unlock()
	f, err := os.OpenFile(in.logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	cmd := exec.Command(in.bin, in.args...)
	cmd.Env = append(os.Environ(), "SPARKPACK_TOKENS=")
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		f.Close()
		return err
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); f.Close(); close(done) }()
	in.cmd, in.done = cmd, done
	return nil
}

// Signal sends sig to the running process.
func (in *Instance) Signal(sig syscall.Signal) error {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.cmd == nil {
		return fmt.Errorf("%s is not running", in.ID)
	}
	return in.cmd.Process.Signal(sig)
}

// Kill9 kills the process (SIGKILL) and waits for it to end.
func (in *Instance) Kill9() {
	in.mu.Lock()
	cmd, done := in.cmd, in.done
	in.cmd = nil
	in.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGCONT)
	_ = cmd.Process.Kill()
	<-done
}

// Running reports whether the process runs.
func (in *Instance) Running() bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.cmd == nil {
		return false
	}
	select {
	case <-in.done:
		return false
	default:
		return true
	}
}

// Stop ends the stack (SIGTERM, then SIGKILL) and removes the database.
func (s *Stack) Stop() {
	for _, in := range s.Instances {
		in.mu.Lock()
		cmd, done := in.cmd, in.done
		in.mu.Unlock()
		if cmd == nil {
			continue
		}
		_ = cmd.Process.Signal(syscall.SIGCONT)
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			in.Kill9()
		}
	}
	if s.emu != nil && s.emu.Process != nil {
		_ = s.emu.Process.Kill()
		_, _ = s.emu.Process.Wait()
	}
	if s.db != nil {
		s.db.Close()
	}
	_ = exec.Command(filepath.Join(s.Root, "scripts", "scratch-pg.sh"), "stop", s.pgDir).Run()
}

// PG runs scripts/scratch-pg.sh VERB on the stack's database (kill, resume).
func (s *Stack) PG(verb string) error {
	out, err := exec.Command(filepath.Join(s.Root, "scripts", "scratch-pg.sh"), verb, s.pgDir).CombinedOutput()
	if err != nil {
		return fmt.Errorf("scratch-pg.sh %s: %v: %s", verb, err, out)
	}
	return nil
}

// KillPostmaster kills PostgreSQL's postmaster with SIGKILL (its backends
// then exit on their own).
func (s *Stack) KillPostmaster() error {
	b, err := os.ReadFile(filepath.Join(s.pgDir, "data", "postmaster.pid"))
	if err != nil {
		return err
	}
	pid, err := strconv.Atoi(strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[0]))
	if err != nil {
		return err
	}
	return syscall.Kill(pid, syscall.SIGKILL)
}

// ResumePG starts PostgreSQL again, retrying while the killed server's
// backends are still going away.
func (s *Stack) ResumePG(ctx context.Context) error {
	var err error
	for i := 0; i < 30; i++ {
		if err = s.PG("resume"); err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(time.Second):
		}
	}
	return err
}

// LeaderStatus is GET /api/v1/leader.
type LeaderStatus struct {
	Leader         bool   `json:"leader"`
	Instance       string `json:"instance"`
	LeaderInstance string `json:"leaderInstance"`
	Token          int64  `json:"token"`
}

var quick = &http.Client{Timeout: 2 * time.Second}

// Leader asks every running instance at once; it returns the first that
// says it leads (nil when none does). Asked one after the other, a stopped
// instance (SIGSTOP: it accepts connections and never answers) made every
// round wait its 2 s timeout, so a failover was seen up to 2 s late (the
// split brains' 6.1 s against 4.1 s).
func (s *Stack) Leader() (*Instance, LeaderStatus) {
	type answer struct {
		in *Instance
		st LeaderStatus
	}
	answers := make(chan answer, len(s.Instances))
	asked := 0
	for _, in := range s.Instances {
		if !in.Running() {
			continue
		}
		asked++
		go func(in *Instance) {
			var st LeaderStatus
			if getJSON(in.API+"/api/v1/leader", TokenChaos, &st) != nil || !st.Leader {
				in = nil
			}
			answers <- answer{in, st}
		}(in)
	}
	for ; asked > 0; asked-- {
		if a := <-answers; a.in != nil {
			return a.in, a.st
		}
	}
	return nil, LeaderStatus{}
}

// WaitLeader waits until an instance other than not leads.
func (s *Stack) WaitLeader(ctx context.Context, not *Instance, timeout time.Duration) (*Instance, LeaderStatus, error) {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if in, st := s.Leader(); in != nil && in != not {
			return in, st, nil
		}
		select {
		case <-ctx.Done():
			return nil, LeaderStatus{}, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return nil, LeaderStatus{}, fmt.Errorf("no instance led within %s", timeout)
}

// Live is a running instance, chosen round-robin by i.
func (s *Stack) Live(i int) *Instance {
	for k := 0; k < len(s.Instances); k++ {
		in := s.Instances[(i+k)%len(s.Instances)]
		if in.Running() {
			return in
		}
	}
	return s.Instances[0]
}

func getJSON(url, token string, v any) error {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := quick.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %d", url, resp.StatusCode)
	}
	return json.NewDecoder(resp.Body).Decode(v)
}

func waitHTTP(ctx context.Context, url string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		resp, err := quick.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode < 500 {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s did not answer within %s (%v)", url, timeout, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// scanLog returns the lines of an instance's log that contain substr.
func (in *Instance) scanLog(substr string) []string {
	f, err := os.Open(in.logPath)
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if strings.Contains(sc.Text(), substr) {
			out = append(out, sc.Text())
		}
	}
	return out
}
