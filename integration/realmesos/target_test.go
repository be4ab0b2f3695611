package realmesos

import (
	"context"
	"fmt"
	"net"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/sparkpack/sparkpack/internal/syncbuf"
	"github.com/sparkpack/sparkpack/mesossim"
)

// target is a Mesos master a scenario runs against: the real cluster or
// the emulator with the same three agents. Everything a scenario checks
// is read over the operator API, the same way for both.
type target struct {
	name string
	url  string
	obs  *Observer
	// hosts maps agent ids to hostnames (kept when an agent is gone).
	hosts map[string]string
	// loseAgent makes an agent disappear as a crash would (real: SIGKILL
	// of the agent process; emulator: CrashAgent); returnAgent brings it
	// back with its work directory (checkpointed reservations, surviving
	// executors).
	loseAgent   func(t *testing.T, host string)
	returnAgent func(t *testing.T, host string)
	// failDriver makes a running driver task fail (real: SIGTERM to its
	// fakespark, which stops its executors and exits 143; emulator:
	// FailTask, TASK_FAILED at once).
	failDriver func(t *testing.T, frameworkID, taskID string)
	// logs returns the master's recent log lines, for failure reports.
	logs func() string
}

func (tg *target) host(agentID string) string {
	if h, ok := tg.hosts[agentID]; ok {
		return h
	}
	return agentID
}

func (tg *target) agentID(host string) string {
	for id, h := range tg.hosts {
		if h == host {
			return id
		}
	}
	return ""
}

func realTarget(t *testing.T) *target { return clusterTarget(realCluster(t)) }

// privateTarget starts a cluster of its own for the test (a fresh one:
// the shared cluster carries the history of earlier tests).
func privateTarget(t *testing.T) *target { return clusterTarget(privateCluster(t)) }

// privateCluster starts a real three-agent cluster for the test alone and
// closes it when the test ends (logging the master's log if it failed).
func privateCluster(t *testing.T) *Cluster {
	t.Helper()
	bin := mesosBin(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := Start(ctx, Options{Bin: bin, Cluster: ThreeAgents(), Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("master log:\n%s", c.MasterLog(60))
		}
		if err := c.Close(context.Background()); err != nil {
			t.Errorf("closing the cluster: %v", err)
		}
	})
	return c
}

func clusterTarget(c *Cluster) *target {
	tg := &target{name: "real", url: c.URL, obs: c.Observer(), hosts: map[string]string{}}
	for _, h := range c.Agents() {
		tg.hosts[c.AgentID(h)] = h
	}
	tg.loseAgent = func(t *testing.T, host string) {
		if err := c.KillAgent(host); err != nil {
			t.Fatal(err)
		}
	}
	tg.returnAgent = func(t *testing.T, host string) {
		if err := c.RestartAgent(context.Background(), host); err != nil {
			t.Fatal(err)
		}
	}
	tg.failDriver = func(t *testing.T, _, taskID string) {
		// The driver is fakespark, built as spark-submit (BuildFakeSpark).
		if _, err := c.TerminateTask(taskID, "spark-submit"); err != nil {
			t.Fatal(err)
		}
	}
	tg.logs = func() string { return c.MasterLog(60) }
	return tg
}

// emulatorTarget runs mesossim with ThreeAgents in real time (TimeScale
// 1) and Mesos' default intervals, so that a scenario takes the same time
// as on the real cluster.
func emulatorTarget(t *testing.T) *target {
	logs := &syncbuf.Buffer{}
	l := logrus.New()
	l.SetOutput(logs)
	l.SetLevel(logrus.InfoLevel)
	// A lost agent is marked unreachable after the real cluster's ping
	// timeouts (1 s x 3), and its executors give up after the agents'
	// --recovery_timeout (1 minute; see cluster.go).
	m, err := mesossim.New(mesossim.Config{Cluster: ThreeAgents(), Logger: l, TaskStartDelay: 500 * time.Millisecond,
		DefaultTaskDuration: time.Second, UnreachableAfter: 3 * time.Second, AgentRecoveryTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() { done <- m.ListenAndServe(ctx, "127.0.0.1:0", func(a net.Addr) { ready <- a }) }()
	var addr net.Addr
	select {
	case addr = <-ready:
	case err := <-done:
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); <-done })
	url := "http://" + addr.String()
	tg := &target{name: "emulator", url: url, obs: NewObserver(url), hosts: map[string]string{}}
	for _, a := range ThreeAgents().Agents {
		tg.hosts[a.ID] = a.Hostname
	}
	tg.loseAgent = func(t *testing.T, host string) {
		if err := m.CrashAgent(tg.agentID(host)); err != nil {
			t.Fatal(err)
		}
	}
	tg.returnAgent = func(t *testing.T, host string) {
		if err := m.RestartAgent(tg.agentID(host)); err != nil {
			t.Fatal(err)
		}
	}
	tg.failDriver = func(t *testing.T, frameworkID, taskID string) {
		if err := m.FailTask(frameworkID, taskID); err != nil {
			t.Fatal(err)
		}
	}
	tg.logs = func() string { return tail(logs.String(), 60) }
	return tg
}

// onBoth runs a scenario against the real master and the emulator at the
// same time and requires the same outcome from both. Without a real Mesos
// it skips (the emulator alone is covered by package integration).
func onBoth[O any](t *testing.T, scenario func(t *testing.T, tg *target) O) {
	t.Helper()
	mesosBin(t)
	var real, emu O
	var realOK, emuOK bool
	t.Run("group", func(t *testing.T) {
		t.Run("real", func(t *testing.T) {
			t.Parallel()
			tg := realTarget(t)
			real = scenario(t, tg)
			realOK = !t.Failed()
			if t.Failed() {
				t.Logf("master log:\n%s", tg.logs())
			}
		})
		t.Run("emulator", func(t *testing.T) {
			t.Parallel()
			tg := emulatorTarget(t)
			emu = scenario(t, tg)
			emuOK = !t.Failed()
			if t.Failed() {
				t.Logf("emulator log:\n%s", tg.logs())
			}
		})
	})
	if !realOK || !emuOK {
		return
	}
	if !reflect.DeepEqual(real, emu) {
		t.Errorf("the emulator and the real master differ:\nreal:     %+v\nemulator: %+v", real, emu)
	} else {
		t.Logf("same outcome on both: %+v", real)
	}
}

// ---- observations ----------------------------------------------------------

// jobRole is the Mesos role of a job's executors.
func jobRole(id string) string { return "sparkpack-job-" + id }

// watch samples the master while jobs run: every reservation (by role:
// host -> largest cpus seen) and every task (by framework and task id).
type watch struct {
	tg   *target
	mu   sync.Mutex
	res  map[string]map[string]float64
	task map[string]Task
	fwRo map[string]string // framework id -> its (first) role
	stop chan struct{}
	done chan struct{}
	once sync.Once
}

func startWatch(tg *target) *watch {
	w := &watch{tg: tg, res: map[string]map[string]float64{}, task: map[string]Task{}, fwRo: map[string]string{},
		stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		for {
			w.sample()
			select {
			case <-w.stop:
				w.sample()
				return
			case <-time.After(150 * time.Millisecond):
			}
		}
	}()
	return w
}

func (w *watch) sample() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rs, err := w.tg.obs.Reservations(ctx)
	if err == nil {
		w.mu.Lock()
		for _, r := range rs {
			m := w.res[r.Role]
			if m == nil {
				m = map[string]float64{}
				w.res[r.Role] = m
			}
			if r.CPUs > m[w.tg.host(r.AgentID)] {
				m[w.tg.host(r.AgentID)] = r.CPUs
			}
		}
		w.mu.Unlock()
	}
	fws, _ := w.tg.obs.Frameworks(ctx)
	ts, err := w.tg.obs.Tasks(ctx)
	if err != nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, f := range fws {
		if len(f.Roles) > 0 {
			w.fwRo[f.ID] = f.Roles[0]
		}
	}
	for _, t := range ts {
		if t.Role == "" {
			t.Role = w.fwRo[t.FrameworkID]
		}
		key := t.FrameworkID + "/" + t.ID
		if old, ok := w.task[key]; ok && old.Completed && !t.Completed {
			continue
		}
		w.task[key] = t
	}
}

func (w *watch) finish() {
	w.once.Do(func() { close(w.stop) })
	<-w.done
}

// reserved returns the role's reservations seen: host -> cpus.
func (w *watch) reserved(role string) map[string]float64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := map[string]float64{}
	for h, v := range w.res[role] {
		out[h] = v
	}
	return out
}

// executors returns the tasks seen in a role.
func (w *watch) executors(role string) []Task {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []Task
	for _, t := range w.task {
		if t.Role == role {
			out = append(out, t)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// running counts the role's tasks that run now.
func (tg *target) running(t *testing.T, role string) int {
	t.Helper()
	ts, err := tg.obs.Tasks(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	fws, _ := tg.obs.Frameworks(context.Background())
	fwRole := map[string]string{}
	for _, f := range fws {
		if len(f.Roles) > 0 {
			fwRole[f.ID] = f.Roles[0]
		}
	}
	n := 0
	for _, x := range ts {
		r := x.Role
		if r == "" {
			r = fwRole[x.FrameworkID]
		}
		if r == role && x.State == "TASK_RUNNING" && !x.Completed {
			n++
		}
	}
	return n
}

// leftovers lists sparkpack's reservations and job-role quotas still in
// the master.
func (tg *target) leftovers(t *testing.T) []string {
	t.Helper()
	ctx := context.Background()
	var out []string
	rs, err := tg.obs.Reservations(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		if r.Labels["sparkpack-job"] != "" || strings.HasPrefix(r.Role, "sparkpack-job-") {
			out = append(out, fmt.Sprintf("reservation %s on %s: %g cpus %g MiB", r.Role, tg.host(r.AgentID), r.CPUs, r.MemMB))
		}
	}
	qs, err := tg.obs.QuotaLimits(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for role, q := range qs {
		if strings.HasPrefix(role, "sparkpack-job-") {
			out = append(out, fmt.Sprintf("quota %s: %v", role, q))
		}
	}
	sort.Strings(out)
	return out
}

// waitNoLeftovers waits until the master holds nothing of sparkpack's.
func (tg *target) waitNoLeftovers(t *testing.T, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		l := tg.leftovers(t)
		if len(l) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s Mesos still holds after %s:\n%s", tg.name, timeout, strings.Join(l, "\n"))
		}
		time.Sleep(200 * time.Millisecond)
	}
}
