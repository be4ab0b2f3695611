package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/sparkpack/sparkpack/clusterspec"
	"github.com/sparkpack/sparkpack/internal/scratchpg"
	"github.com/sparkpack/sparkpack/mesossim"
	"github.com/sparkpack/sparkpack/placement"
	"github.com/sparkpack/sparkpack/scheduler"
)

type demoConfig struct {
	serve       serveConfig
	mesosListen string
	cluster     string
	noSample    bool
	simSpeed    float64
	// sampleJobs, when positive, stops the sample after that many jobs;
	// 0 sends waves until Ctrl-C.
	sampleJobs int
	sampleHour int
	maxGap     time.Duration
	seed       uint64
	// powerOffAfter and bootTime are simulated time.
	powerOffAfter time.Duration
	bootTime      time.Duration
	// noWarmPool is --warm-pool=false: power management without the warm pool.
	noWarmPool bool
	// statusEvery is how often a status line is printed (0: never).
	statusEvery time.Duration
	// explicit names the flags given on the command line.
	explicit map[string]bool
	// perfTruth is --perf-truth: how the emulator times Spark applications.
	perfTruth string
	// teams is --teams: sample, off or a teams file (demoteams.go).
	teams string
}

// The demo's default addresses; a busy one is replaced by a free port
// unless it was given on the command line.
const (
	demoListen      = "127.0.0.1:8080"
	demoMesosListen = "127.0.0.1:5050"
	demoSparkListen = "127.0.0.1:7077"
)

func demoFlags(stderr io.Writer, c *demoConfig) *flag.FlagSet {
	fs := newFlagSet("demo", stderr)
	fs.StringVar(&c.serve.listen, "listen", demoListen, "address of the REST API and dashboard (a free port is used instead when the default is busy)")
	fs.StringVar(&c.mesosListen, "mesos-listen", demoMesosListen, "address of the emulated Mesos master (a free port when the default is busy)")
	fs.StringVar(&c.serve.sparkRestListen, "spark-rest-listen", demoSparkListen, "address of Spark's REST submission protocol (spark-submit --master mesos://HOST:PORT --deploy-mode cluster; a free port when the default is busy); empty disables it")
	fs.StringVar(&c.serve.databaseURL, "database-url", "", "PostgreSQL URL; empty starts a scratch server (needs Debian's postgresql package) and deletes it on exit")
	fs.StringVar(&c.cluster, "cluster", "thesis14", "emulated agents: thesis14 or a cluster spec JSON file")
	fs.StringVar(&c.serve.policy, "policy", scheduler.DefaultPolicy, "placement policy: dap (the default), bfd, ilp, exact, spread, consolidate, firstfit, morpheus or gio")
	fs.BoolVar(&c.noSample, "no-sample", false, "do not submit the sample workload")
	fs.Float64Var(&c.simSpeed, "sim-speed", 1, "simulated time runs this many times faster than wall time (job run times, sample arrivals, power off and boot; 0.01 to 10000)")
	fs.IntVar(&c.sampleJobs, "sample-jobs", 0, "stop the sample after this many jobs; 0 sends waves of jobs until Ctrl-C")
	fs.IntVar(&c.sampleHour, "sample-hour", 16, "which hourly sample of the SWIM FB-2009 trace (0-23) the sample starts from")
	fs.DurationVar(&c.maxGap, "sample-max-gap", maxGap, "longest wall-clock pause between two sample submissions")
	fs.Uint64Var(&c.seed, "seed", 1, "seed choosing which sample jobs get deadlines")
	fs.DurationVar(&c.powerOffAfter, "power-off-after", 30*time.Second, "power management: an agent idle this long (simulated time) is powered off through the emulator; 0 keeps every agent on")
	fs.DurationVar(&c.bootTime, "boot-time", 60*time.Second, "simulated time an emulated agent takes to boot after a power-on")
	fs.BoolFunc("warm-pool", "with power management, keep warm (and power on ahead) what the forecast of arrivals needs within a boot time (default true; false: idle agents power off after --power-off-after whatever the forecast)", func(v string) error {
		on, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("want true or false, got %q", v)
		}
		c.noWarmPool = !on
		return nil
	})
	fs.DurationVar(&c.statusEvery, "status-every", time.Minute, "print a status line (jobs, cost, the dashboard's address) this often; 0 never")
	fs.StringVar(&c.perfTruth, "perf-truth", "derived", "how the emulator times a Spark application: derived (its performance truth from the placement it got and its signature's hidden parameters, docs/simulation.md), a truth JSON file, or off (the job's estimate, as before)")
	fs.StringVar(&c.teams, "teams", demoTeamsSample, "teams: sample (analytics, etl and reporting, as examples/demo-teams.txt; the sample jobs carry them), off, or a teams FILE as serve --teams takes (docs/teams.md)")
	fs.StringVar(&c.serve.logLevel, "log-level", "warn", "log level of sparkpack and the emulator: debug, info, warn or error (the demo prints its own summary lines)")
	fs.StringVar(&c.serve.logFormat, "log-format", "text", "text, json or auto (JSON unless stderr is a terminal)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: sparkpack demo [flags]   (from make: make demo ARGS=\"--listen 127.0.0.1:8090 --sim-speed 4\")")
		fs.PrintDefaults()
	}
	return fs
}

// The range of --sim-speed: slower than a hundredth of real time or faster
// than ten thousand times it, the wall-clock durations it gives overflow or
// fall under the scheduler's own timers.
const (
	minSimSpeed = 0.01
	maxSimSpeed = 10000
)

func (c *demoConfig) validate() error {
	if !(c.simSpeed >= minSimSpeed && c.simSpeed <= maxSimSpeed) {
		// NaN passed "<= 0" and made every simulated duration NaN; a speed
		// near 0 overflowed every wall-clock duration it divides.
		return fmt.Errorf("--sim-speed must be a number from %g to %g (1: real time), got %g", float64(minSimSpeed), float64(maxSimSpeed), c.simSpeed)
	}
	if c.powerOffAfter < 0 || c.bootTime <= 0 {
		return fmt.Errorf("--power-off-after must be >= 0 and --boot-time > 0")
	}
	if c.sampleJobs < 0 {
		return fmt.Errorf("--sample-jobs must be >= 0 (0: until Ctrl-C)")
	}
	if c.sampleHour < 0 || c.sampleHour > 23 {
		return fmt.Errorf("--sample-hour must be 0..23")
	}
	if c.maxGap <= 0 {
		return fmt.Errorf("--sample-max-gap must be > 0")
	}
	if _, ok := placement.Get(c.serve.policy); !ok {
		// serve checks it in serveConfig.validate, which the demo does
		// not call: without this the demo started, and its scheduler
		// failed to start as leader, stepping down for ever.
		return fmt.Errorf("--policy %q is unknown; use one of %v", c.serve.policy, placement.Names())
	}
	if _, _, err := net.SplitHostPort(c.mesosListen); err != nil {
		return fmt.Errorf("--mesos-listen %q: %w (use host:port)", c.mesosListen, err)
	}
	if _, _, err := net.SplitHostPort(c.serve.listen); err != nil {
		return fmt.Errorf("--listen %q: %w (use host:port, e.g. 127.0.0.1:8090)", c.serve.listen, err)
	}
	return nil
}

// runDemo runs the emulated Mesos cluster, a scratch PostgreSQL and
// sparkpack serve in one process, and submits a sample workload.
func runDemo(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var c demoConfig
	c.serve.mesos = mesosConfig{role: "sparkpack", sparkSubmit: "/opt/spark/bin/spark-submit", admission: string(scheduler.AdmitReject),
		promoteAfter: scheduler.DefaultPromoteAfter, refresh: time.Second, reserveMode: "operator"}
	c.serve.shutdownTimeout = 5 * time.Second
	fs := demoFlags(stderr, &c)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	c.explicit = map[string]bool{}
	fs.Visit(func(f *flag.Flag) { c.explicit[f.Name] = true })
	if err := c.validate(); err != nil {
		return err
	}
	c.serve.mesos.durationScale = 1 / c.simSpeed
	c.serve.mesos.power = powerConfig{offAfter: time.Duration(float64(c.powerOffAfter) / c.simSpeed), provider: "emulator",
		onTimeout: 5 * time.Minute, tick: time.Second,
		bootTime: time.Duration(float64(c.bootTime) / c.simSpeed), forecastEvery: max(time.Second, time.Duration(float64(time.Minute)/c.simSpeed)),
		noWarmPool: c.noWarmPool}
	log, err := newLogger(stderr, c.serve.logLevel, c.serve.logFormat)
	if err != nil {
		return err
	}
	return demo(ctx, c, log, stdout, nil)
}

// demoAddrs is where a running demo listens.
type demoAddrs struct {
	API, Mesos, SparkREST string
}

// listenDemo listens on addr; when addr is busy and was not given on the
// command line it listens on a free port of the same host instead, and
// says so.
func listenDemo(addr, flagName string, explicit bool, stdout io.Writer) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err == nil {
		return ln, nil
	}
	if explicit || !errors.Is(err, syscall.EADDRINUSE) {
		return nil, portError(flagName, addr, err)
	}
	host, _, _ := net.SplitHostPort(addr)
	ln, err2 := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err2 != nil {
		return nil, portError(flagName, addr, err)
	}
	fmt.Fprintf(stdout, "demo: %s is in use; using %s for --%s instead\n", addr, ln.Addr(), flagName)
	return ln, nil
}

func portError(flagName, addr string, err error) error {
	return fmt.Errorf("--%s %s: %w; choose another address: sparkpack demo --%s 127.0.0.1:PORT (with make: make demo ARGS=\"--%s 127.0.0.1:PORT\")",
		flagName, addr, err, flagName, flagName)
}

// demo runs until ctx ends; ready, if not nil, receives the addresses once
// everything listens. On the way out sparkpack stops first, then the
// emulator, then the scratch database.
func demo(ctx context.Context, c demoConfig, log *logrus.Logger, stdout io.Writer, ready chan<- demoAddrs) error {
	cl, err := clusterspec.Named(c.cluster)
	if err != nil {
		return fmt.Errorf("--cluster: %w", err)
	}
	out := &lineWriter{w: stdout}
	// 1. The emulated Mesos master, on a context of its own: it must
	// outlive sparkpack, which deregisters nothing but still talks to it
	// while shutting down.
	emuCtx, stopEmu := context.WithCancel(context.Background())
	defer stopEmu()
	pt := c.perfTruth
	if pt == "off" {
		pt = ""
	}
	truth, err := mesossim.LoadPerfTruth(pt)
	if err != nil {
		return fmt.Errorf("--perf-truth: %w", err)
	}
	m, err := mesossim.New(mesossim.Config{Cluster: cl, TimeScale: 1 / c.simSpeed, BootTime: c.bootTime, PerfTruth: truth, Logger: log.WithField("component", "mesos-emulator")})
	if err != nil {
		return err
	}
	mesosAddr, mesosErr, err := startEmulator(emuCtx, m, c, out)
	if err != nil {
		return err
	}
	defer func() { stopEmu(); <-mesosErr }()

	// 2. PostgreSQL.
	if c.serve.databaseURL == "" {
		dir, err := os.MkdirTemp("", "sparkpack-demo-pg-")
		if err != nil {
			return err
		}
		os.Remove(dir)
		pg, err := scratchpg.Start(ctx, dir, out)
		if err != nil {
			return err
		}
		defer func() {
			if err := pg.Stop(); err != nil {
				log.WithError(err).Warn("stopping the scratch PostgreSQL")
			}
		}()
		c.serve.databaseURL = pg.URL
	}

	// 3. sparkpack serve against both.
	c.serve.mesos.master = "http://" + mesosAddr.String()
	teamsPath, removeTeams, err := demoTeams(c.teams)
	if err != nil {
		return err
	}
	defer removeTeams()
	c.serve.teamsFile = teamsPath
	ln, err := listenDemo(c.serve.listen, "listen", c.explicit["listen"], out)
	if err != nil {
		return err
	}
	if c.serve.sparkRestListen != "" {
		sln, err := listenDemo(c.serve.sparkRestListen, "spark-rest-listen", c.explicit["spark-rest-listen"], out)
		if err != nil {
			ln.Close()
			return fmt.Errorf("%w, or --spark-rest-listen= to disable it", err)
		}
		c.serve.sparkRestLn = sln
		c.serve.sparkRestListen = sln.Addr().String()
	}
	w := &watcher{out: out, simSpeed: c.simSpeed}
	c.serve.started = w.attach
	serveCtx, stopServe := context.WithCancel(ctx)
	defer stopServe()
	serveReady := make(chan string, 1)
	serveErr := make(chan error, 1)
	go func() { serveErr <- serve(serveCtx, c.serve, log, ln, serveReady) }()
	var apiAddr string
	select {
	case apiAddr = <-serveReady:
	case err := <-serveErr:
		return err
	}
	base := "http://" + apiAddr
	w.base = base
	banner(out, c, cl, base, mesosAddr.String())
	if ready != nil {
		ready <- demoAddrs{API: base, Mesos: "http://" + mesosAddr.String(), SparkREST: c.serve.sparkRestListen}
	}
	var bg sync.WaitGroup
	bgCtx, stopBG := context.WithCancel(ctx)
	defer func() { stopBG(); bg.Wait() }()
	bg.Add(1)
	go func() { defer bg.Done(); w.run(bgCtx, c.statusEvery) }()
	if !c.noSample {
		bg.Add(1)
		go func() {
			defer bg.Done()
			if err := runSample(bgCtx, base, c, clusterCapacity(cl), out, w); err != nil && bgCtx.Err() == nil {
				out.printf("demo: the sample workload stopped: %v\n", err)
			}
		}()
	}
	select {
	case err := <-serveErr:
		return err
	case err := <-mesosErr:
		mesosErr <- err
		stopServe()
		<-serveErr
		return fmt.Errorf("emulated Mesos master stopped: %w", err)
	case <-ctx.Done():
	}
	out.printf("demo: stopping: sparkpack first, then the emulated Mesos master and the scratch database\n")
	stopBG()
	bg.Wait()
	err = <-serveErr
	stopEmu()
	if e := <-mesosErr; e != nil && err == nil {
		err = fmt.Errorf("emulated Mesos master: %w", e)
	}
	mesosErr <- nil
	if err == nil {
		out.printf("demo: stopped\n")
	}
	return err
}

// startEmulator starts the emulated master on --mesos-listen, or on a free
// port when the default is busy.
func startEmulator(ctx context.Context, m *mesossim.Master, c demoConfig, out *lineWriter) (net.Addr, chan error, error) {
	try := func(addr string) (net.Addr, chan error, error) {
		ready := make(chan net.Addr, 1)
		errc := make(chan error, 1)
		go func() { errc <- m.ListenAndServe(ctx, addr, func(a net.Addr) { ready <- a }) }()
		select {
		case a := <-ready:
			return a, errc, nil
		case err := <-errc:
			return nil, nil, err
		}
	}
	a, errc, err := try(c.mesosListen)
	if err == nil {
		return a, errc, nil
	}
	if c.explicit["mesos-listen"] || !errors.Is(err, syscall.EADDRINUSE) {
		return nil, nil, portError("mesos-listen", c.mesosListen, err)
	}
	host, _, _ := net.SplitHostPort(c.mesosListen)
	a, errc, err2 := try(net.JoinHostPort(host, "0"))
	if err2 != nil {
		return nil, nil, portError("mesos-listen", c.mesosListen, err)
	}
	out.printf("demo: %s is in use; using %s for --mesos-listen instead\n", c.mesosListen, a)
	return a, errc, nil
}

// banner prints what a newcomer needs, short enough to stay on screen.
func banner(out *lineWriter, c demoConfig, cl clusterspec.Cluster, base, mesos string) {
	speed := ""
	if c.simSpeed != 1 {
		speed = fmt.Sprintf(", simulated time x%g", c.simSpeed)
	}
	out.printf("demo: sparkpack on an EMULATED Mesos %s cluster: %d agents (%s)%s; not a real Mesos\n", mesossim.Version, len(cl.Agents), cl.Name, speed)
	out.printf("demo: dashboard  %s/\n", base)
	out.printf("demo: REST API   %s/api/v1/jobs   metrics %s/metrics\n", base, base)
	out.printf("demo: CLI        bin/sparkpack jobs --server %s   (or export SPARKPACK_SERVER=%s)\n", base, base)
	if c.serve.sparkRestListen != "" {
		out.printf("demo: spark-submit --master mesos://%s --deploy-mode cluster ...\n", c.serve.sparkRestListen)
	}
	out.printf("demo: emulator   http://%s/sim/agents\n", mesos)
	switch c.teams {
	case demoTeamsOff:
	case demoTeamsSample:
		out.printf("demo: teams      analytics, etl, reporting (examples/demo-teams.txt): bin/sparkpack usage --by team, %s/api/v1/teams\n", base)
	default:
		out.printf("demo: teams      from %s: bin/sparkpack usage --by team, %s/api/v1/teams\n", c.teams, base)
	}
	if c.noSample {
		out.printf("demo: no sample workload (--no-sample); submit your own: bin/sparkpack submit --server %s --app-resource local:///opt/spark/examples/jars/spark-examples.jar --main-class org.apache.spark.examples.SparkPi --executors 2 --executor-cores 1 --executor-memory 1g --estimated-duration 30\n", base)
	}
	out.printf("demo: press Ctrl-C to stop\n")
}

// lineWriter serialises whole lines from several goroutines.
type lineWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lineWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (l *lineWriter) printf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(l.w, format, args...)
}

// runSample sends the sample workload: waves until ctx ends (or
// --sample-jobs jobs when set), each followed by a quiet spell once the
// cluster has drained, so that agents go idle and power off.
func runSample(ctx context.Context, base string, c demoConfig, cap capacity, out *lineWriter, w *watcher) error {
	s, err := newSampler(c.sampleHour, c.seed)
	if err != nil {
		return err
	}
	client := &http.Client{Timeout: 10 * time.Second}
	sent := 0
	wall := func(d time.Duration) time.Duration { return time.Duration(float64(d) / c.simSpeed) }
	sleep := func(d time.Duration) error {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
			return nil
		}
	}
	for wave := 1; ; wave++ {
		jobs := s.wave(wave, cap)
		if c.sampleJobs > 0 && len(jobs) > c.sampleJobs-sent {
			jobs = jobs[:c.sampleJobs-sent]
		}
		var span time.Duration
		for _, j := range jobs {
			span += min(wall(j.gap), c.maxGap)
		}
		out.printf("demo: wave %d: %d sample jobs arrive over the next %s (SWIM FB-2009 trace sizes; a third with deadlines; one big job)\n",
			wave, len(jobs), span.Round(time.Second))
		ids := make([]string, 0, len(jobs))
		for i, j := range jobs {
			if i > 0 || wave > 1 {
				if err := sleep(min(wall(j.gap), c.maxGap)); err != nil {
					return err
				}
			}
			body := j.body(c.simSpeed)
			if c.perfTruth != "off" {
				body = withSimData(body, j.run) // demotruth.go
			}
			if err := postSample(ctx, client, base, body); err != nil {
				return err
			}
			ids = append(ids, fmt.Sprint(j.spec["id"]))
			sent++
		}
		if c.sampleJobs > 0 && sent >= c.sampleJobs {
			out.printf("demo: the sample's %d jobs are submitted (--sample-jobs)\n", sent)
			return nil
		}
		// Wait for the wave to drain, then let the cluster idle.
		for !w.allEnded(ids) {
			if err := sleep(time.Second); err != nil {
				return err
			}
		}
		out.printf("demo: wave %d is done; the cluster idles (idle agents power off after %s) until the next wave in %s\n",
			wave, wall(c.powerOffAfter).Round(time.Second), wall(quietAfter).Round(time.Second))
		if err := sleep(wall(quietAfter)); err != nil {
			return err
		}
	}
}

// clusterCapacity sums the emulated cluster for the sample.
func clusterCapacity(cl clusterspec.Cluster) capacity {
	var c capacity
	for _, a := range cl.Agents {
		c.CPUs += a.CPUs
		c.AgentCPUs = max(c.AgentCPUs, a.CPUs)
		c.AgentMemMB = max(c.AgentMemMB, a.MemMB)
	}
	return c
}

// postSample submits one job, retrying (same id) while the server is
// unreachable or answers 503.
func postSample(ctx context.Context, client *http.Client, base string, spec map[string]any) error {
	body, _ := json.Marshal(spec)
	for attempt := 1; ; attempt++ {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/api/v1/jobs", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		status := 0
		var msg []byte
		if err == nil {
			msg, _ = io.ReadAll(io.LimitReader(resp.Body, 4096))
			resp.Body.Close()
			status = resp.StatusCode
			if status < 300 {
				return nil
			}
			if status != http.StatusServiceUnavailable && status != http.StatusTooManyRequests {
				return fmt.Errorf("job %v refused: %d %s", spec["name"], status, bytes.TrimSpace(msg))
			}
		} else if ctx.Err() != nil {
			return ctx.Err()
		}
		if attempt == 10 {
			if err != nil {
				return fmt.Errorf("job %v: %w", spec["name"], err)
			}
			return fmt.Errorf("job %v: %d %s", spec["name"], status, bytes.TrimSpace(msg))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
}
