package main

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/sparkpack/sparkpack/workload"
)

// The demo's sample workload comes in waves, so that a newcomer sees what
// sparkpack does within a few minutes and keeps seeing it:
//
//   - a wave of jobs from the SWIM FB-2009 trace (sizes from the workload
//     model, run times stretched so that they overlap) arrives every few
//     seconds and fills the cluster, so that jobs queue;
//   - about a third of them have deadlines: while the cluster is full they
//     go before regular jobs that came earlier (EDF);
//   - a big regular job arrives when the cluster is full and waits, its
//     waiting reason shown, while smaller jobs pass it;
//   - when the wave has drained the cluster idles: agents are powered off
//     (power management), and the next wave powers them on again.
//
// All durations here are simulated time; the demo divides them by
// --sim-speed.
const (
	// A wave brings trace jobs until they ask for twice the cluster's
	// cpus, at least minWave and at most maxWave of them (plus the big
	// job and the deadline job of the story), over about waveSpan.
	minWave, maxWave = 12, 60
	waveSpan         = 60 * time.Second
	// stretch makes trace jobs run long enough to overlap (the model's
	// reference run times are 10-30 s).
	stretch = 5
	// minRun and maxRun bound a sample job's run time.
	minRun, maxRun = 60 * time.Second, 180 * time.Second
	// minGap and maxGap bound the pause between two arrivals.
	minGap, maxGap = 500 * time.Millisecond, 4 * time.Second
	// quietAfter is how long the cluster idles after a wave has drained,
	// before the next wave: longer than the demo's --power-off-after.
	quietAfter = 45 * time.Second
)

// sampleJob is one job of the sample and the pause before it is sent.
type sampleJob struct {
	spec map[string]any
	// gap is the simulated pause before sending it.
	gap time.Duration
	// run is its simulated run time; deadline, if not zero, its deadline
	// in simulated seconds after submission.
	run      time.Duration
	deadline time.Duration
	// kind is trace (from the SWIM trace), big or report (the story's
	// big regular job and its deadline job).
	kind string
}

func (s sampleJob) name() string { return fmt.Sprint(s.spec["name"]) }

// sampler deals out the waves: trace jobs from --sample-hour on, wrapping
// around the 24 hours.
type sampler struct {
	trace []workload.TraceJob
	pos   int
	rng   *rand.Rand
	hour  int
	model workload.Model
}

func newSampler(hour int, seed uint64) (*sampler, error) {
	trace, err := workload.FB2009()
	if err != nil {
		return nil, err
	}
	var jobs []workload.TraceJob
	for h := 0; h < 24; h++ {
		jobs = append(jobs, workload.Hour(trace, (hour+h)%24)...)
	}
	if len(jobs) == 0 {
		return nil, fmt.Errorf("the SWIM trace has no jobs")
	}
	return &sampler{trace: jobs, rng: rand.New(rand.NewPCG(seed, 7)), hour: hour, model: workload.DefaultModel}, nil
}

// nextTrace returns the next trace job and the simulated gap before it.
func (s *sampler) nextTrace() (workload.TraceJob, time.Duration) {
	t := s.trace[s.pos%len(s.trace)]
	gap := time.Duration(0)
	if s.pos > 0 {
		prev := s.trace[(s.pos-1)%len(s.trace)]
		gap = max(t.Submit-prev.Submit, 0)
	}
	s.pos++
	return t, gap
}

// traceJob turns a trace job into a sample job; a third get deadlines of
// twice their run time plus 30 s.
func (s *sampler) traceJob(t workload.TraceJob, gap time.Duration, wave int) sampleJob {
	p := s.model.Profile(t)
	run := min(max(s.model.Reference(p)*stretch, minRun), maxRun).Round(time.Second)
	j := sampleJob{gap: gap, run: run, kind: "trace", spec: map[string]any{
		"id":   uuid.NewString(),
		"name": fmt.Sprintf("%s-%s", strings.ToLower(string(p.App)), t.ID),
		"app": map[string]any{
			"appResource": "local:///opt/spark/examples/jars/spark-examples.jar",
			"mainClass":   p.MainClass(),
			"args":        []string{fmt.Sprintf("hdfs:///swim/input/%s", t.ID)},
		},
		"executors": p.Executors, "executorCores": p.ExecutorCores, "executorMemoryMB": p.ExecutorMemoryMB,
		"estimatedDurationSeconds": run.Seconds(),
		"labels":                   map[string]string{"source": "swim-fb2009", "wave": fmt.Sprint(wave), "team": sampleTeam(p.App)},
	}}
	if s.rng.Float64() < 1.0/3 {
		j.deadline = 2*run + 30*time.Second
	}
	return j
}

// capacity is what the sample needs to know of the cluster.
type capacity struct {
	CPUs       float64 // all agents together
	AgentCPUs  float64 // the largest agent
	AgentMemMB float64
}

// wave returns the jobs of wave n (1, 2, ...): trace jobs until they ask
// for twice the cluster's cpus, arriving over about waveSpan (the trace's
// own rhythm, compressed), with the big job of the story once the jobs
// sent so far ask for about the whole cluster, and a deadline job three
// jobs after it.
func (s *sampler) wave(n int, c capacity) []sampleJob {
	var trace []sampleJob
	demand := 0.0
	for (demand < 2*c.CPUs || len(trace) < minWave) && len(trace) < maxWave {
		t, gap := s.nextTrace()
		j := s.traceJob(t, gap, n)
		demand += j.cpus()
		trace = append(trace, j)
	}
	var span time.Duration
	for _, j := range trace[1:] {
		span += j.gap
	}
	scale := 1.0
	if span > 0 {
		scale = float64(waveSpan) / float64(span)
	}
	out := make([]sampleJob, 0, len(trace)+2)
	demand, bigAt := 0, -1
	for i, j := range trace {
		if i > 0 {
			j.gap = min(max(time.Duration(float64(j.gap)*scale), minGap), maxGap).Round(100 * time.Millisecond)
		}
		if bigAt < 0 && demand >= 0.9*c.CPUs {
			bigAt = len(out)
			out = append(out, s.bigJob(n, c))
		}
		if bigAt >= 0 && len(out) == bigAt+3 {
			out = append(out, reportJob(n))
		}
		demand += j.cpus()
		out = append(out, j)
	}
	return out
}

// reportJob is a small deadline job that arrives when the cluster is full.
func reportJob(n int) sampleJob {
	return sampleJob{gap: 2 * time.Second, run: 45 * time.Second, deadline: 150 * time.Second, kind: "report", spec: map[string]any{
		"id":   uuid.NewString(),
		"name": fmt.Sprintf("hourly-report-%d", n),
		"app": map[string]any{
			"appResource": "local:///opt/spark/examples/jars/spark-examples.jar",
			"mainClass":   "org.apache.spark.examples.JavaWordCount",
			"args":        []string{"hdfs:///reports/hourly"},
		},
		"executors": 2, "executorCores": 1, "executorMemoryMB": 2048,
		"estimatedDurationSeconds": 45.0,
		"labels":                   map[string]string{"source": "demo", "wave": fmt.Sprint(n), "team": teamReporting},
	}}
}

// bigJob asks for about 40% of the cluster in executors of up to 4 cpus:
// it cannot start while the wave fills the cluster.
func (s *sampler) bigJob(n int, c capacity) sampleJob {
	cores := int(min(4, max(1, c.AgentCPUs)))
	execs := max(2, int(0.4*c.CPUs)/cores)
	mem := int(min(6144, max(1024, c.AgentMemMB/2-512)))
	return sampleJob{gap: 2 * time.Second, run: 90 * time.Second, kind: "big", spec: map[string]any{
		"id":   uuid.NewString(),
		"name": fmt.Sprintf("nightly-etl-%d", n),
		"app": map[string]any{
			"appResource": "local:///opt/spark/examples/jars/spark-examples.jar",
			"mainClass":   "org.apache.spark.examples.sql.SparkSQLExample",
		},
		"executors": execs, "executorCores": cores, "executorMemoryMB": mem,
		"estimatedDurationSeconds": 90.0,
		"labels":                   map[string]string{"source": "demo", "wave": fmt.Sprint(n), "team": teamETL},
	}}
}

// cpus is what the job holds while it runs: its executors and a driver.
func (j sampleJob) cpus() float64 {
	e, _ := j.spec["executors"].(int)
	c, _ := j.spec["executorCores"].(int)
	return float64(e*c) + 1
}

// body is the job JSON for the API: durations in simulated seconds, the
// deadline in wall-clock seconds from submission (the scheduler knows
// estimates are simulated: DurationScale).
func (j sampleJob) body(simSpeed float64) map[string]any {
	out := make(map[string]any, len(j.spec)+1)
	for k, v := range j.spec {
		out[k] = v
	}
	if j.deadline > 0 {
		out["deadline"] = j.deadline.Seconds() / simSpeed
	}
	return out
}
