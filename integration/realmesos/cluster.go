package realmesos

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/sparkpack/sparkpack/clusterspec"
)

// Options configure a real Mesos cluster on loopback.
type Options struct {
	// Bin is the folder of mesos-master, mesos-agent and the agent's helper
	// programs (see Find).
	Bin string
	// Cluster lists the agents: each gets its cpus, memory, disk (when
	// set) and the attributes instance_type, price and location, and
	// reports the agent's Hostname (its ID when empty).
	Cluster clusterspec.Cluster
	// MasterFlags and AgentFlags are added to the defaults (later flags
	// win in Mesos). A master flag replaces the default of its name
	// (--registry=replicated_log): Mesos refuses a flag given twice.
	MasterFlags, AgentFlags []string
	// AgentMaster, if set, is the agents' --master (e.g. zk://host/mesos;
	// default: the master's host:port). Mesos refuses a flag given twice.
	AgentMaster string
	// Logf, if set, receives progress lines.
	Logf func(format string, args ...any)
}

// Cluster is a running master with its agents. Its processes run until
// Close; everything lives in a temporary directory that Close removes.
type Cluster struct {
	URL string // http://127.0.0.1:<master port>
	Dir string // the temporary directory (work dirs and logs)

	opts       Options
	master     *daemon
	masterArgs []string
	agents     []*agentProc
	obs        *Observer
}

type agentProc struct {
	spec clusterspec.Agent
	name string
	port int
	dir  string
	d    *daemon
	id   string
}

type daemon struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{}
	err  error
}

// ownerFile holds the pid of the process that owns a cluster directory,
// so that a later run can clean up after one that was killed.
const (
	dirPrefix = "sparkpack-realmesos-"
	ownerFile = "owner.pid"
)

// Start runs a master and the cluster's agents and waits until every
// agent is registered. On error everything started is stopped again.
func Start(ctx context.Context, o Options) (*Cluster, error) {
	if o.Bin == "" || !isMesosBin(o.Bin) {
		return nil, fmt.Errorf("realmesos: %q is not a Mesos bin folder", o.Bin)
	}
	if len(o.Cluster.Agents) == 0 {
		return nil, errors.New("realmesos: a cluster needs agents")
	}
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
	CleanStale(o.Logf)
	dir, err := os.MkdirTemp("", dirPrefix)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, ownerFile), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		return nil, err
	}
	c := &Cluster{Dir: dir, opts: o}
	if err := c.start(ctx); err != nil {
		c.Close(context.Background())
		return nil, err
	}
	return c, nil
}

func (c *Cluster) start(ctx context.Context) error {
	port, err := freePort()
	if err != nil {
		return err
	}
	c.URL = fmt.Sprintf("http://127.0.0.1:%d", port)
	c.obs = NewObserver(c.URL)
	args := []string{"--ip=127.0.0.1", "--port=" + strconv.Itoa(port), "--work_dir=" + filepath.Join(c.Dir, "master"),
		"--registry=in_memory",
		// An agent that stops answering is unreachable after about 3 s
		// (Mesos default: 75 s), so agent loss can be tested quickly.
		"--agent_ping_timeout=1secs", "--max_agent_ping_timeouts=3"}
	args = append(withoutFlags(args, c.opts.MasterFlags), c.opts.MasterFlags...)
	c.masterArgs = args
	c.master, err = c.run("master", filepath.Join(c.opts.Bin, "mesos-master"), args)
	if err != nil {
		return err
	}
	c.opts.Logf("realmesos: master %s starting (logs in %s)", c.URL, c.Dir)
	if err := c.waitFor(ctx, 30*time.Second, "the master to answer GET_HEALTH", func() (bool, error) {
		if err := c.master.exited(); err != nil {
			return false, err
		}
		return c.obs.Healthy(ctx), nil
	}); err != nil {
		return err
	}
	for _, spec := range c.opts.Cluster.Agents {
		p, err := freePort()
		if err != nil {
			return err
		}
		name := spec.Hostname
		if name == "" {
			name = spec.ID
		}
		a := &agentProc{spec: spec, name: name, port: p, dir: filepath.Join(c.Dir, "agent-"+name)}
		c.agents = append(c.agents, a)
		if err := c.startAgent(a); err != nil {
			return err
		}
	}
	return c.waitAgents(ctx, 60*time.Second)
}

// withoutFlags is args without the flags (--name=value) that over names.
func withoutFlags(args, over []string) []string {
	name := func(f string) string {
		f, _, _ = strings.Cut(f, "=")
		return f
	}
	var out []string
	for _, a := range args {
		if !slices.ContainsFunc(over, func(o string) bool { return name(o) == name(a) }) {
			out = append(out, a)
		}
	}
	return out
}

// agentArgs are the flags of an agent: its resources and attributes, the
// posix launcher and isolators (no cgroups, no containers).
func (c *Cluster) agentArgs(a *agentProc) []string {
	s := a.spec
	res := fmt.Sprintf("cpus:%g;mem:%g", s.CPUs, s.MemMB)
	if s.DiskMB > 0 {
		res += fmt.Sprintf(";disk:%g", s.DiskMB)
	}
	res += ";ports:[31000-32000]"
	attrs := s.AllAttributes()
	keys := make([]string, 0, len(attrs))
	for k := range attrs {
		keys = append(keys, k)
	}
	order := map[string]int{"instance_type": 0, "price": 1, "location": 2}
	sort.Slice(keys, func(i, j int) bool {
		oi, iok := order[keys[i]]
		oj, jok := order[keys[j]]
		if iok && jok {
			return oi < oj
		}
		if iok != jok {
			return iok
		}
		return keys[i] < keys[j]
	})
	var av []string
	for _, k := range keys {
		if attrs[k] != "" {
			av = append(av, k+":"+attrs[k])
		}
	}
	master := strings.TrimPrefix(c.URL, "http://")
	if c.opts.AgentMaster != "" {
		master = c.opts.AgentMaster
	}
	args := []string{"--master=" + master, "--ip=127.0.0.1", "--port=" + strconv.Itoa(a.port),
		"--work_dir=" + a.dir, "--hostname=" + a.name,
		"--resources=" + res, "--attributes=" + strings.Join(av, ";"),
		"--launcher=posix", "--isolation=posix/cpu,posix/mem", "--launcher_dir=" + c.opts.Bin,
		"--no-systemd_enable_support", "--registration_backoff_factor=100ms",
		// Executors of checkpointing frameworks wait this long for a
		// killed agent to come back (default 15 minutes).
		"--recovery_timeout=1mins"}
	return append(args, c.opts.AgentFlags...)
}

func (c *Cluster) startAgent(a *agentProc) error {
	d, err := c.run("agent-"+a.name, filepath.Join(c.opts.Bin, "mesos-agent"), c.agentArgs(a))
	if err != nil {
		return err
	}
	a.d = d
	return nil
}

// waitAgents waits until every running agent is registered and active,
// and learns the agent ids.
func (c *Cluster) waitAgents(ctx context.Context, timeout time.Duration) error {
	return c.waitFor(ctx, timeout, "every agent to register", func() (bool, error) {
		for _, a := range c.agents {
			if a.d != nil {
				if err := a.d.exited(); err != nil {
					return false, err
				}
			}
		}
		agents, err := c.obs.Agents(ctx)
		if err != nil {
			return false, nil
		}
		active := map[string]string{}
		for _, x := range agents {
			if x.Active {
				active[x.Hostname] = x.ID
			}
		}
		for _, a := range c.agents {
			if a.d == nil {
				continue
			}
			id, ok := active[a.name]
			if !ok {
				return false, nil
			}
			a.id = id
		}
		return true, nil
	})
}

func (c *Cluster) waitFor(ctx context.Context, timeout time.Duration, what string, cond func() (bool, error)) error {
	deadline := time.Now().Add(timeout)
	for {
		ok, err := cond()
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("realmesos: waited %s for %s; see the logs in %s", timeout, what, c.Dir)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// run starts a daemon with its output in <Dir>/<name>.log. MESOS_* and
// LIBPROCESS_* variables of the test's environment are not passed on:
// Mesos would read them as flags.
func (c *Cluster) run(name, path string, args []string) (*daemon, error) {
	logPath := filepath.Join(c.Dir, name+".log")
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(path, args...)
	cmd.Stdout, cmd.Stderr = f, f
	// SIGKILL when the test process dies, even by a panic or a timeout
	// (the executors of a dead agent end by themselves: see
	// --recovery_timeout). Pdeathsig is bound to the thread that forks,
	// so all daemons are forked by one thread that lives as long as the
	// process (see spawn).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "MESOS_") || strings.HasPrefix(kv, "LIBPROCESS_") {
			continue
		}
		cmd.Env = append(cmd.Env, kv)
	}
	if err := spawn(cmd); err != nil {
		f.Close()
		return nil, fmt.Errorf("realmesos: start %s: %w", name, err)
	}
	d := &daemon{name: name, cmd: cmd, log: logPath, done: make(chan struct{})}
	go func() {
		d.err = cmd.Wait()
		f.Close()
		close(d.done)
	}()
	return d, nil
}

// exited returns an error when the daemon has ended.
func (d *daemon) exited() error {
	select {
	case <-d.done:
		return fmt.Errorf("realmesos: %s exited (%v); its log %s ends:\n%s", d.name, d.err, d.log, tailFile(d.log, 20))
	default:
		return nil
	}
}

// signal sends sig and waits up to timeout for the daemon to end, then
// kills it.
func (d *daemon) stop(sig syscall.Signal, timeout time.Duration) {
	select {
	case <-d.done:
		return
	default:
	}
	_ = d.cmd.Process.Signal(sig)
	select {
	case <-d.done:
	case <-time.After(timeout):
		_ = d.cmd.Process.Kill()
		<-d.done
	}
}

// Observer returns an Observer of the cluster's master.
func (c *Cluster) Observer() *Observer { return c.obs }

// Agents returns the agents' names (hostnames) in cluster order.
func (c *Cluster) Agents() []string {
	out := make([]string, len(c.agents))
	for i, a := range c.agents {
		out[i] = a.name
	}
	return out
}

// AgentID returns the id the master gave the named agent ("" if unknown).
func (c *Cluster) AgentID(name string) string {
	for _, a := range c.agents {
		if a.name == name {
			return a.id
		}
	}
	return ""
}

// AgentName returns the name of the agent with the given id ("" if unknown).
func (c *Cluster) AgentName(id string) string {
	for _, a := range c.agents {
		if a.id == id {
			return a.name
		}
	}
	return ""
}

func (c *Cluster) agent(name string) (*agentProc, error) {
	for _, a := range c.agents {
		if a.name == name || a.id == name {
			return a, nil
		}
	}
	return nil, fmt.Errorf("realmesos: no agent %q", name)
}

// KillAgent kills an agent's process with SIGKILL, as a crash would. Its
// executors keep running until the agent returns or they give up; the
// master marks the agent unreachable a few seconds later.
func (c *Cluster) KillAgent(name string) error {
	a, err := c.agent(name)
	if err != nil {
		return err
	}
	if a.d == nil {
		return fmt.Errorf("realmesos: agent %s is not running", name)
	}
	a.d.stop(syscall.SIGKILL, 10*time.Second)
	a.d = nil
	c.opts.Logf("realmesos: agent %s (%s) killed with SIGKILL", a.name, a.id)
	return nil
}

// PauseAgent stops an agent's process with SIGSTOP: it keeps its
// connections but answers nothing and cannot re-register with a master
// that failed over (as a slow or hung agent); ResumeAgent goes on.
func (c *Cluster) PauseAgent(name string) error { return c.signalAgent(name, syscall.SIGSTOP) }

// ResumeAgent continues an agent stopped by PauseAgent (SIGCONT).
func (c *Cluster) ResumeAgent(name string) error { return c.signalAgent(name, syscall.SIGCONT) }

func (c *Cluster) signalAgent(name string, sig syscall.Signal) error {
	a, err := c.agent(name)
	if err != nil {
		return err
	}
	if a.d == nil {
		return fmt.Errorf("realmesos: agent %s is not running", name)
	}
	if err := a.d.cmd.Process.Signal(sig); err != nil {
		return fmt.Errorf("realmesos: agent %s: %v: %w", name, sig, err)
	}
	c.opts.Logf("realmesos: agent %s (%s) sent %v", a.name, a.id, sig)
	return nil
}

// TerminateTask sends SIGTERM to the processes named comm (as
// /proc/PID/comm shows them) that run in the sandbox of task taskID on any
// agent, as a driver stopped from outside would be: the task's command
// ends and its executor reports it. It returns how many it signalled.
func (c *Cluster) TerminateTask(taskID, comm string) (int, error) {
	n := 0
	for _, pid := range processesUnder(c.Dir) {
		cwd, err := os.Readlink(fmt.Sprintf("/proc/%d/cwd", pid))
		if err != nil || !strings.Contains(cwd, "/executors/"+taskID+"/runs/") {
			continue
		}
		name, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
		if err != nil || strings.TrimSpace(string(name)) != comm {
			continue
		}
		if err := syscall.Kill(pid, syscall.SIGTERM); err == nil {
			n++
		}
	}
	if n == 0 {
		return 0, fmt.Errorf("realmesos: no process %q in the sandbox of task %s", comm, taskID)
	}
	c.opts.Logf("realmesos: task %s: %d %s process(es) sent SIGTERM", taskID, n, comm)
	return n, nil
}

// RestartAgent starts a killed agent again with its work directory, so it
// recovers its id, its checkpointed reservations and its executors, and
// waits until the master shows it active.
func (c *Cluster) RestartAgent(ctx context.Context, name string) error {
	a, err := c.agent(name)
	if err != nil {
		return err
	}
	if a.d != nil {
		return fmt.Errorf("realmesos: agent %s is running", name)
	}
	if err := c.startAgent(a); err != nil {
		return err
	}
	c.opts.Logf("realmesos: agent %s restarting", a.name)
	return c.waitAgents(ctx, 60*time.Second)
}

// RestartMaster kills the master with SIGKILL, keeps it down for down,
// starts it again on the same port (its registry is in memory: agents
// re-register, frameworks re-subscribe) and returns when it answers
// GET_HEALTH again, with that time.
func (c *Cluster) RestartMaster(ctx context.Context, down time.Duration) (time.Time, error) {
	c.master.stop(syscall.SIGKILL, 10*time.Second)
	c.opts.Logf("realmesos: master killed with SIGKILL; down for %s", down)
	select {
	case <-ctx.Done():
		return time.Time{}, ctx.Err()
	case <-time.After(down):
	}
	var err error
	if c.master, err = c.run("master", filepath.Join(c.opts.Bin, "mesos-master"), c.masterArgs); err != nil {
		return time.Time{}, err
	}
	var back time.Time
	err = c.waitFor(ctx, 30*time.Second, "the restarted master to answer GET_HEALTH", func() (bool, error) {
		if err := c.master.exited(); err != nil {
			return false, err
		}
		back = time.Now()
		return c.obs.Healthy(ctx), nil
	})
	return back, err
}

// MasterLog returns the last n lines of the master's log.
func (c *Cluster) MasterLog(n int) string { return tailFile(filepath.Join(c.Dir, "master.log"), n) }

// AgentLog returns the last n lines of an agent's log.
func (c *Cluster) AgentLog(name string, n int) string {
	return tailFile(filepath.Join(c.Dir, "agent-"+name+".log"), n)
}

// Close tears down every framework (which kills their tasks), stops the
// agents and the master, kills whatever process still runs in the
// cluster's directory and removes it.
func (c *Cluster) Close(ctx context.Context) error {
	var errs []error
	if c.obs != nil && c.master != nil && c.master.exited() == nil {
		if err := c.teardownAll(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	for _, a := range c.agents {
		if a.d != nil {
			a.d.stop(syscall.SIGTERM, 15*time.Second)
			a.d = nil
		}
	}
	if c.master != nil {
		c.master.stop(syscall.SIGTERM, 15*time.Second)
	}
	if names := killUnder(c.Dir); len(names) > 0 {
		c.opts.Logf("realmesos: killed %d processes left in %s: %s", len(names), c.Dir, strings.Join(names, ", "))
	}
	if err := os.RemoveAll(c.Dir); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// teardownAll removes every active framework and waits (a while) for
// their tasks to end.
func (c *Cluster) teardownAll(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	fws, err := c.obs.Frameworks(ctx)
	if err != nil {
		return err
	}
	for _, f := range fws {
		if !f.Completed {
			_ = c.obs.Teardown(ctx, f.ID)
		}
	}
	return c.waitFor(ctx, 20*time.Second, "the torn down frameworks' tasks to end", func() (bool, error) {
		ts, err := c.obs.Tasks(ctx)
		if err != nil {
			return false, nil
		}
		for _, t := range ts {
			if !t.Completed {
				return false, nil
			}
		}
		return true, nil
	})
}

// CleanStale removes the directories (and kills the processes) of
// clusters whose owning test process is gone, e.g. killed by a timeout.
func CleanStale(logf func(string, ...any)) {
	matches, _ := filepath.Glob(filepath.Join(os.TempDir(), dirPrefix+"*"))
	for _, dir := range matches {
		b, err := os.ReadFile(filepath.Join(dir, ownerFile))
		if err != nil {
			continue
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || pid <= 0 || processAlive(pid) {
			continue
		}
		names := killUnder(dir)
		_ = os.RemoveAll(dir)
		if logf != nil {
			logf("realmesos: cleaned up %s left by process %d (killed: %s)", dir, pid, strings.Join(names, ", "))
		}
	}
}

func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// killUnder kills (SIGKILL) every process whose working directory or
// command line lies in dir: the cluster's daemons and the executors and
// tasks the agents started. It repeats until none is left and returns
// the names of the processes killed.
func killUnder(dir string) []string {
	var killed []string
	for round := 0; round < 20; round++ {
		pids := processesUnder(dir)
		if len(pids) == 0 {
			return killed
		}
		for _, pid := range pids {
			name, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
			if syscall.Kill(pid, syscall.SIGKILL) == nil {
				killed = append(killed, fmt.Sprintf("%s[%d]", strings.TrimSpace(string(name)), pid))
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return killed
}

func processesUnder(dir string) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	self := os.Getpid()
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		p := "/proc/" + e.Name()
		if cwd, err := os.Readlink(p + "/cwd"); err == nil && (cwd == dir || strings.HasPrefix(cwd, dir+"/")) {
			out = append(out, pid)
			continue
		}
		if cmd, err := os.ReadFile(p + "/cmdline"); err == nil && strings.Contains(string(cmd), dir+"/") {
			out = append(out, pid)
		}
	}
	return out
}

var spawner struct {
	once sync.Once
	reqs chan spawnReq
}

type spawnReq struct {
	cmd  *exec.Cmd
	errc chan error
}

// spawn starts cmd from a goroutine locked to its own OS thread for the
// life of the process, so that Pdeathsig fires only when the process dies.
func spawn(cmd *exec.Cmd) error {
	spawner.once.Do(func() {
		spawner.reqs = make(chan spawnReq)
		go func() {
			runtime.LockOSThread() // never unlocked: the thread lives on
			for r := range spawner.reqs {
				r.errc <- r.cmd.Start()
			}
		}()
	})
	errc := make(chan error, 1)
	spawner.reqs <- spawnReq{cmd: cmd, errc: errc}
	return <-errc
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func tailFile(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "(" + err.Error() + ")"
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
