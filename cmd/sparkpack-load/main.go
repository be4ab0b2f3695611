// Command sparkpack-load is the scale scenario of scripts/bench-scale.sh: it
// drives a running `sparkpack serve` (against an emulated cluster) over its
// REST API and prints the figures the scale targets name. It is a
// measuring tool, not part of the product binary.
//
//	sparkpack-load --api http://127.0.0.1:8080 --database-url postgres://... [flags]
//
// The scenario: a long job holds the cluster but a few cpus; 64 clients
// submit jobs of 12 executors x 2 cpus (which cannot fit) as fast as they
// can; then at a fixed rate (how soon stored jobs are queued); then until
// the queues hold --queued jobs; then the queue view is read many times, a
// small job that fits is submitted (how soon it starts), and sparkpack's
// memory and scheduling-pass times are read from /metrics.
package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"reflect"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"time"

	_ "github.com/lib/pq"

	"github.com/sparkpack/sparkpack/integration/loadgen"
)

type options struct {
	api, token, dbURL   string
	clients             int
	burst               time.Duration
	rate                float64
	rateFor             time.Duration
	queued              int
	queueGets           int
	executors, cores    int
	memMB               int
	blockerFree         int
	jsonOut             bool
	smallTimeout        time.Duration
	settleBeforeMeasure time.Duration
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "sparkpack-load:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var o options
	fs := flag.NewFlagSet("sparkpack-load", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.api, "api", "http://127.0.0.1:8080", "sparkpack's API (serve --listen)")
	fs.StringVar(&o.token, "token", os.Getenv("SPARKPACK_TOKEN"), "bearer token, when serve has tokens")
	fs.StringVar(&o.dbURL, "database-url", "", "sparkpack's PostgreSQL, to read event times (empty: skip the intake lag)")
	fs.IntVar(&o.clients, "clients", 64, "concurrent submitters")
	fs.DurationVar(&o.burst, "burst", 20*time.Second, "how long to submit as fast as possible (the durable-submission figure)")
	fs.Float64Var(&o.rate, "rate", 1000, "submissions per second of the sustained phase")
	fs.DurationVar(&o.rateFor, "rate-for", 30*time.Second, "length of the sustained phase")
	fs.IntVar(&o.queued, "queued", 100000, "fill the queues up to this many waiting jobs before measuring reads")
	fs.IntVar(&o.queueGets, "queue-gets", 500, "GET /api/v1/queues requests to time")
	fs.IntVar(&o.executors, "executors", 12, "executors of each load job")
	fs.IntVar(&o.cores, "cores", 2, "cpus per executor of each load job")
	fs.IntVar(&o.memMB, "memory-mb", 2048, "memory per executor of each load job (MiB)")
	fs.IntVar(&o.blockerFree, "blocker-free", 6, "cpus the blocking job leaves free (one goes to its driver)")
	fs.DurationVar(&o.smallTimeout, "small-timeout", 60*time.Second, "how long to wait for the small job to start")
	fs.DurationVar(&o.settleBeforeMeasure, "settle", 3*time.Second, "pause before reading intake times")
	fs.BoolVar(&o.jsonOut, "json", false, "print the results as JSON")
	cpuProfile := fs.String("cpuprofile", "", "write the load generator's own cpu profile to this file (what the load costs the machine it shares)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			return fmt.Errorf("--cpuprofile: %w", err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return fmt.Errorf("--cpuprofile: %w", err)
		}
		defer pprof.StopCPUProfile()
	}
	c := loadgen.NewClient(o.api, o.token, o.clients+8)
	say := func(format string, a ...any) { fmt.Fprintf(stderr, "sparkpack-load: "+format+"\n", a...) }
	var db *sql.DB
	if o.dbURL != "" {
		var err error
		if db, err = sql.Open("postgres", o.dbURL); err != nil {
			return fmt.Errorf("--database-url: %w", err)
		}
		defer db.Close()
	}
	r, err := scenario(ctx, c, db, o, say)
	if err != nil {
		return err
	}
	if o.jsonOut {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(r.finite())
	}
	r.print(stdout)
	return nil
}

// results are the scenario's figures.
type results struct {
	BurstClients       int     `json:"burstClients"`
	BurstSubmitsPerSec float64 `json:"burstSubmitsPerSec"`
	BurstP50Ms         float64 `json:"burstP50Ms"`
	BurstP99Ms         float64 `json:"burstP99Ms"`
	BurstFailed        int     `json:"burstFailed"`
	SustainedRate      float64 `json:"sustainedRate"`
	SustainedAchieved  float64 `json:"sustainedAchieved"`
	IntakeP50Ms        float64 `json:"intakeP50Ms"`
	IntakeP99Ms        float64 `json:"intakeP99Ms"`
	IntakeMaxMs        float64 `json:"intakeMaxMs"`
	IntakeWithin1sPct  float64 `json:"intakeWithin1sPct"`
	IntakeNotQueued    int     `json:"intakeNotQueued"`
	CoreCatchUpMs      float64 `json:"coreCatchUpMs"`
	Queued             int     `json:"queued"`
	QueuesP50Ms        float64 `json:"queuesP50Ms"`
	QueuesP99Ms        float64 `json:"queuesP99Ms"`
	SmallStartMs       float64 `json:"smallJobStartMs"`
	SmallState         string  `json:"smallJobState"`
	RSSMiB             float64 `json:"serveRSSMiB"`
	PassFullP99Ms      float64 `json:"passFullP99Ms"`
	PassFullMaxMs      float64 `json:"passFullMaxMs"`
	PassIncMaxMs       float64 `json:"passIncrementalMaxMs"`
	PassIncP99Ms       float64 `json:"passIncrementalP99Ms"`
	PassFullCount      float64 `json:"passFullCount"`
	PassIncCount       float64 `json:"passIncrementalCount"`
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func scenario(ctx context.Context, c *loadgen.Client, db *sql.DB, o options, say func(string, ...any)) (results, error) {
	r := results{BurstClients: o.clients, SustainedRate: o.rate}
	// 0. The cluster.
	var cl struct {
		Agents []struct {
			CPUs float64 `json:"cpus"`
		} `json:"agents"`
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		if err := c.GetJSON(ctx, "/api/v1/cluster", &cl); err == nil && len(cl.Agents) > 0 {
			break
		} else if time.Now().After(deadline) {
			return r, fmt.Errorf("no agents at %s/api/v1/cluster after 60 s (is serve running with --mesos-master?): %v", c.API, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	total := 0.0
	for _, a := range cl.Agents {
		total += a.CPUs
	}
	// 1. A long job holds all but a few cpus.
	blockerE := int(total) - o.blockerFree
	if blockerE < 1 {
		return r, fmt.Errorf("the cluster has %g cpus; --blocker-free %d leaves nothing to block", total, o.blockerFree)
	}
	blocker := loadgen.Job(loadgen.NewID(), "load-blocker", blockerE, 1, 1024, 7*24*3600)
	if _, err := c.Submit(ctx, blocker); err != nil {
		return r, err
	}
	say("blocker: %d executors of 1 cpu on a %g-cpu cluster; waiting for it to run", blockerE, total)
	wctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	_, err := c.WaitFor(wctx, fmt.Sprint(blocker["id"]), "RUNNING")
	cancel()
	if err != nil {
		return r, fmt.Errorf("the blocking job did not start: %w", err)
	}
	mk := func(prefix string) func(int) (string, []byte) {
		return func(i int) (string, []byte) {
			id := loadgen.NewID()
			return id, loadgen.JobBody(id, prefix+"-"+strconv.Itoa(i), o.executors, o.cores, o.memMB, 600)
		}
	}
	progress := func(phase string) func(int, time.Duration) {
		return func(sent int, el time.Duration) {
			say("%s: %d submitted in %.0f s (%.0f/s)", phase, sent, el.Seconds(), float64(sent)/el.Seconds())
		}
	}
	// 2. As fast as possible.
	say("burst: %d clients for %s", o.clients, o.burst)
	b := c.RunBurst(ctx, loadgen.Burst{Clients: o.clients, Duration: o.burst, Body: mk("burst"), Progress: progress("burst")})
	r.BurstSubmitsPerSec, r.BurstFailed = b.PerSecond(), b.Failed
	r.BurstP50Ms, r.BurstP99Ms = ms(loadgen.Percentile(b.Latencies, 50)), ms(loadgen.Percentile(b.Latencies, 99))
	if b.Failed > 0 {
		say("burst: %d submissions failed; first: %s", b.Failed, b.FirstError)
	}
	// 3. At a fixed rate: how soon are stored jobs queued?
	say("sustained: %.0f submissions/s for %s", o.rate, o.rateFor)
	s := c.RunBurst(ctx, loadgen.Burst{Clients: o.clients, Duration: o.rateFor, Rate: o.rate, Body: mk("rate"), Progress: progress("sustained")})
	r.SustainedAchieved = s.PerSecond()
	// How soon the core holds every stored job in its queues (its view
	// is published at most every max(100 ms, 20× its copy time)).
	want := 0
	if t, err := c.QueueTotals(ctx); err == nil {
		want = t.Deadline + t.Regular + t.Intake
	}
	caught := time.Now()
	for {
		t, err := c.QueueTotals(ctx)
		if err != nil {
			return r, err
		}
		if t.Intake == 0 && t.Deadline+t.Regular >= want {
			break
		}
		if time.Since(caught) > time.Minute {
			say("the core's queues did not catch up within a minute: %+v", t)
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if n := len(s.PostedAt); n > 0 {
		r.CoreCatchUpMs = ms(time.Since(s.PostedAt[n-1]))
	}
	if db != nil {
		time.Sleep(o.settleBeforeMeasure)
		lags, notQ, err := loadgen.IntakeLag(ctx, db, s.IDs)
		if err != nil {
			return r, err
		}
		r.IntakeNotQueued = notQ
		r.IntakeP50Ms, r.IntakeP99Ms, r.IntakeMaxMs = ms(loadgen.Percentile(lags, 50)), ms(loadgen.Percentile(lags, 99)), ms(loadgen.Percentile(lags, 100))
		within := 0
		for _, l := range lags {
			if l <= time.Second {
				within++
			}
		}
		if len(lags) > 0 {
			r.IntakeWithin1sPct = 100 * float64(within) / float64(len(lags))
		}
	}
	// 4. Fill the queues.
	var tot loadgen.Totals
	for round := 0; ; round++ {
		var err error
		if tot, err = c.QueueTotals(ctx); err != nil {
			return r, err
		}
		have := tot.Deadline + tot.Regular + tot.Intake
		if have >= o.queued || round == 5 {
			break
		}
		say("fill: %d waiting, submitting %d more", have, o.queued-have)
		f := c.RunBurst(ctx, loadgen.Burst{Clients: o.clients, MaxJobs: o.queued - have, Body: mk("fill"), Progress: progress("fill")})
		if f.Failed > 0 {
			say("fill: %d submissions failed; first: %s", f.Failed, f.FirstError)
		}
	}
	for {
		var err error
		if tot, err = c.QueueTotals(ctx); err != nil {
			return r, err
		}
		if tot.Intake == 0 {
			break
		}
		say("waiting for the intake to drain: %d left", tot.Intake)
		time.Sleep(time.Second)
	}
	r.Queued = tot.Deadline + tot.Regular
	say("%d jobs queued", r.Queued)
	// 5. Read the queue view.
	lat, err := c.TimeGets(ctx, "/api/v1/queues", o.queueGets, 8)
	if err != nil {
		return r, err
	}
	r.QueuesP50Ms, r.QueuesP99Ms = ms(loadgen.Percentile(lat, 50)), ms(loadgen.Percentile(lat, 99))
	// 6. A small job that fits.
	small := loadgen.Job(loadgen.NewID(), "load-small", 1, 1, 1024, 60)
	t0 := time.Now()
	if _, err := c.Submit(ctx, small); err != nil {
		return r, err
	}
	sctx, cancel := context.WithTimeout(ctx, o.smallTimeout)
	j, err := c.WaitFor(sctx, fmt.Sprint(small["id"]), "RESERVING", "LAUNCHING", "RUNNING", "FINISHED")
	cancel()
	wall := time.Since(t0)
	r.SmallState = j.State
	if err != nil {
		say("the small job did not start: %v", err)
		r.SmallStartMs = math.NaN()
	} else if at := j.EventAt("RESERVING"); !at.IsZero() && !j.EventAt("SUBMITTED").IsZero() {
		r.SmallStartMs = ms(at.Sub(j.EventAt("SUBMITTED")))
	} else {
		r.SmallStartMs = ms(wall)
	}
	// 7. Memory and pass times.
	if v, ok, err := c.Metric(ctx, "process_resident_memory_bytes"); err == nil && ok {
		r.RSSMiB = v / (1 << 20)
	}
	r.PassFullP99Ms, r.PassFullCount = histQuantile(ctx, c, "sparkpack_scheduling_pass_seconds", `kind="full"`, 0.99)
	r.PassIncP99Ms, r.PassIncCount = histQuantile(ctx, c, "sparkpack_scheduling_pass_seconds", `kind="incremental"`, 0.99)
	r.PassFullMaxMs, r.PassIncMaxMs = -1, -1 // not reported (JSON has no NaN)
	if v, ok, err := c.Metric(ctx, "sparkpack_scheduling_pass_max_seconds", `kind="full"`); err == nil && ok {
		r.PassFullMaxMs = v * 1000
	}
	if v, ok, err := c.Metric(ctx, "sparkpack_scheduling_pass_max_seconds", `kind="incremental"`); err == nil && ok {
		r.PassIncMaxMs = v * 1000
	}
	return r, nil
}

// finite is r with every figure that could not be measured (NaN: the small
// job never started, a histogram with no observation) as -1: JSON has no
// NaN, and encoding/json refuses to write one.
func (r results) finite() results {
	v := reflect.ValueOf(&r).Elem()
	for i := 0; i < v.NumField(); i++ {
		if f := v.Field(i); f.Kind() == reflect.Float64 && (math.IsNaN(f.Float()) || math.IsInf(f.Float(), 0)) {
			f.SetFloat(-1)
		}
	}
	return r
}

// histQuantile is the upper bound (ms) of the bucket holding quantile q
// of a histogram of seconds, and its count.
func histQuantile(ctx context.Context, c *loadgen.Client, name, label string, q float64) (float64, float64) {
	bound, count, err := c.HistogramQuantile(ctx, name, label, q)
	if err != nil {
		return math.NaN(), 0
	}
	return bound * 1000, count
}

func (r results) print(w io.Writer) {
	row := func(what, got, target string, ok bool) {
		mark := "ok"
		if !ok {
			mark = "MISSED"
		}
		if target == "" {
			mark = ""
		}
		fmt.Fprintf(w, "%-52s %-22s %-18s %s\n", what, got, target, mark)
	}
	fmt.Fprintf(w, "%-52s %-22s %-18s %s\n", "figure", "measured", "target", "")
	fmt.Fprintln(w, strings.Repeat("-", 100))
	row(fmt.Sprintf("POST /api/v1/jobs, %d clients: submits/s", r.BurstClients), fmt.Sprintf("%.0f", r.BurstSubmitsPerSec), "see pgbench ratio", true)
	row("POST /api/v1/jobs latency p50 / p99 (ms)", fmt.Sprintf("%.1f / %.1f", r.BurstP50Ms, r.BurstP99Ms), "p99 < 50", r.BurstP99Ms < 50)
	row("POST failures", fmt.Sprint(r.BurstFailed), "0", r.BurstFailed == 0)
	row(fmt.Sprintf("sustained rate asked / achieved (/s)"), fmt.Sprintf("%.0f / %.0f", r.SustainedRate, r.SustainedAchieved), ">= 1000", r.SustainedAchieved >= 0.98*r.SustainedRate && r.SustainedRate >= 1000)
	row("stored -> QUEUED p50 / p99 / max (ms)", fmt.Sprintf("%.0f / %.0f / %.0f", r.IntakeP50Ms, r.IntakeP99Ms, r.IntakeMaxMs), "<= 1000", r.IntakeMaxMs <= 1000 && r.IntakeNotQueued == 0)
	row("last sustained submission -> in the core's queues (ms)", fmt.Sprintf("%.0f", r.CoreCatchUpMs), "<= 1000", r.CoreCatchUpMs <= 1000)
	row("stored -> QUEUED within 1 s (%)", fmt.Sprintf("%.2f (%d not queued)", r.IntakeWithin1sPct, r.IntakeNotQueued), "100", r.IntakeWithin1sPct >= 100 && r.IntakeNotQueued == 0)
	row("jobs queued during reads", fmt.Sprint(r.Queued), ">= 100000", r.Queued >= 100000)
	row("GET /api/v1/queues p50 / p99 (ms)", fmt.Sprintf("%.1f / %.1f", r.QueuesP50Ms, r.QueuesP99Ms), "p99 < 100", r.QueuesP99Ms < 100)
	row("small job: submitted -> RESERVING (ms)", fmt.Sprintf("%.0f (%s)", r.SmallStartMs, r.SmallState), "< 1000", 0 <= r.SmallStartMs && r.SmallStartMs < 1000)
	row("serve RSS (MiB)", fmt.Sprintf("%.0f", r.RSSMiB), "< 500", r.RSSMiB > 0 && r.RSSMiB < 500)
	row("full pass: longest (ms; count)", fmt.Sprintf("%.1f (%.0f)", r.PassFullMaxMs, r.PassFullCount), "< 100", 0 <= r.PassFullMaxMs && r.PassFullMaxMs < 100)
	row("full pass p99 (ms, bucket bound)", fmt.Sprintf("%.1f", r.PassFullP99Ms), "", true)
	row("incremental pass: longest / p99 (ms, bucket bound; count)", fmt.Sprintf("%.1f / %.1f (%.0f)", r.PassIncMaxMs, r.PassIncP99Ms, r.PassIncCount), "", true)
}
