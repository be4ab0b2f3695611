package mesossim

// The performance truth of the simulated Spark (Config.PerfTruth). Without
// it a driver runs for its task's duration (the DurationLabel sparkpack
// writes from the user's estimate, a DurationFunc or the default). With it
// the application starts once its executors are there (spark.cores.max
// reached, or SparkMaxWait after the driver started with at least one
// executor) and runs for the time package perftruth computes from the
// placement it actually got and from its signature's hidden parameters:
// the label is ignored. Executors lost later do not change a run's time.

import (
	"fmt"
	"math"
	"os"
	"sort"
	"strconv"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/sparkpack/sparkpack/mesossim/perftruth"
)

// Spark properties of the simulated application's data (a user's
// sparkConf): the input it reads in GB (default 1) and its passes over
// it (default 1). They describe the data, not a run time.
const (
	SimInputGBConf    = "spark.sparkpack.sim.inputGB"
	SimIterationsConf = "spark.sparkpack.sim.iterations"
)

// sparkValueOption are spark-submit's options that take a value (the
// application is the first argument that is neither one nor its value).
var sparkValueOption = map[string]bool{
	"--master": true, "--deploy-mode": true, "--jars": true, "--packages": true, "--exclude-packages": true,
	"--repositories": true, "--files": true, "--archives": true, "--py-files": true, "--properties-file": true,
	"--driver-memory": true, "--driver-java-options": true, "--driver-library-path": true, "--driver-class-path": true,
	"--driver-cores": true, "--proxy-user": true, "--num-executors": true, "--principal": true, "--keytab": true,
	"--queue": true, "--kill": true, "--status": true,
}

// SparkRun is one simulated application's run under the performance
// truth: where it ran and for how long.
type SparkRun struct {
	// DriverTaskID is the driver task (the framework's task id).
	DriverTaskID string
	Signature    string
	InputGB      float64
	Iterations   int
	// PerAgent is the executors on each agent (agent id -> count).
	PerAgent      map[string]int
	ExecutorCores float64
	BusiestLoad   float64
	// Seconds is the simulated run time from the application's start;
	// Truth how it was made up.
	Seconds float64
	Truth   perftruth.Breakdown
	Started time.Time
}

// SparkRuns are the runs the performance truth has timed so far, in the
// order they started (empty without Config.PerfTruth).
func (m *Master) SparkRuns() []SparkRun {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]SparkRun, len(m.sparkRuns))
	for i, r := range m.sparkRuns {
		r.PerAgent = make(map[string]int, len(r.PerAgent))
		for k, v := range m.sparkRuns[i].PerAgent {
			r.PerAgent[k] = v
		}
		out[i] = r
	}
	return out
}

// sparkTruthWaitLocked arms the wait for executors once the driver's
// framework is registered: after SparkMaxWait (wall time: x TimeScale, at
// least three offer intervals) the application starts with what it has.
func (m *Master) sparkTruthWaitLocked(job *sparkJob) {
	wall := max(time.Duration(float64(m.cfg.SparkMaxWait)*m.cfg.TimeScale), 3*m.cfg.OfferInterval)
	job.driver.timers = append(job.driver.timers, m.afterLocked(wall, func() {
		job.waitOver = true
		m.sparkTruthMaybeStartLocked(job)
	}))
}

// sparkTruthMaybeStartLocked starts the application's timed run when its
// executors are there.
func (m *Master) sparkTruthMaybeStartLocked(job *sparkJob) {
	d := job.driver
	if m.cfg.PerfTruth == nil || job.started || job.done || d.unreachable || isTerminal(d.actual) || len(job.executors) == 0 {
		return
	}
	full := job.conf.CoresMax > 0 && job.acquired >= job.conf.CoresMax
	if !full && !job.waitOver && job.conf.CoresMax > 0 {
		return
	}
	job.started = true
	per := map[string]int{}
	var agents []*agent
	for t := range job.executors {
		if per[t.agent.id] == 0 {
			agents = append(agents, t.agent)
		}
		per[t.agent.id]++
	}
	sort.Slice(agents, func(i, j int) bool { return agents[i].id < agents[j].id })
	pl := perftruth.Placement{ExecutorCores: job.acquired / float64(len(job.executors))}
	for _, a := range agents {
		pl.PerAgent = append(pl.PerAgent, per[a.id])
		if c := a.base.scalar("cpus"); c > 0 {
			pl.BusiestLoad = max(pl.BusiestLoad, min(1, float64(a.used.scalar("cpus"))/float64(c)))
		}
	}
	c := job.conf
	run := perftruth.Run{InputGB: c.InputGB, Iterations: c.Iterations, Placement: pl, Seed: perftruth.HashSeed(d.fw.id + "/" + d.id)}
	b := m.cfg.PerfTruth.For(c.AppResource, c.MainClass).Seconds(run)
	secs := b.Total()
	rec := SparkRun{DriverTaskID: d.id, Signature: perftruth.Signature(c.AppResource, c.MainClass), InputGB: c.InputGB,
		Iterations: c.Iterations, PerAgent: per, ExecutorCores: pl.ExecutorCores, BusiestLoad: pl.BusiestLoad,
		Seconds: secs, Truth: b, Started: time.Now()}
	m.sparkRuns = append(m.sparkRuns, rec)
	if len(m.sparkRuns) > maxSparkRuns {
		m.sparkRuns = m.sparkRuns[len(m.sparkRuns)-maxSparkRuns:]
	}
	wall := truthWall(secs, m.cfg.TimeScale)
	d.finishAt = time.Now().Add(wall)
	d.timers = append(d.timers, m.afterLocked(wall, func() { m.finishTaskLocked(d) }))
	m.log.WithFields(logrus.Fields{"task": d.id, "signature": rec.Signature, "executors": len(job.executors), "agents": len(per),
		"cross_share": b.CrossShare, "busiest_load": pl.BusiestLoad, "seconds": secs}).Info("simulated Spark application started (performance truth)")
	m.sandboxSparkLocked(job, "SparkContext", "Running Spark application with "+strconv.Itoa(len(job.executors))+" executors on "+strconv.Itoa(len(per))+" agents")
}

// truthWall is the wall time of a run of secs simulated seconds,
// saturating at the largest Duration: a run of 1e6 GB x 1e6 iterations
// (the largest the sim conf takes) is some 1e17 s, and its product with
// 1e9 ns converted to a negative Duration, which finished it at once.
func truthWall(secs, timeScale float64) time.Duration {
	ns := secs * float64(time.Second) * timeScale
	switch {
	case !(ns > 0):
		return 0
	case ns >= math.MaxInt64:
		return time.Duration(math.MaxInt64)
	}
	return time.Duration(ns)
}

// maxSparkRuns bounds the runs SparkRuns keeps.
const maxSparkRuns = 10_000

// LoadPerfTruth is the truth a --perf-truth value names: nil for "" (the
// old behaviour), every signature derived for "derived", else the truth
// file at that path.
func LoadPerfTruth(v string) (*perftruth.Truth, error) {
	switch v {
	case "":
		return nil, nil
	case "derived":
		return perftruth.Default(), nil
	}
	b, err := os.ReadFile(v)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", v, err)
	}
	t, err := perftruth.Parse(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", v, err)
	}
	return t, nil
}
