package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/sirupsen/logrus"

	"github.com/sparkpack/sparkpack/clusterspec"
	"github.com/sparkpack/sparkpack/integration/mesossim"
	"github.com/sparkpack/sparkpack/internal/scratchpg"
	"github.com/sparkpack/sparkpack/scheduler"
	"github.com/sparkpack/sparkpack/workload"
)

type demoConfig struct {
	serve       serveConfig
	mesosListen string
	cluster     string
	noSample    bool
	simSpeed    float64
	sampleJobs  int
	sampleHour  int
	maxGap      time.Duration
	seed        uint64
	// powerOffAfter and bootTime are simulated time.
	powerOffAfter time.Duration
	bootTime      time.Duration
}

func demoFlags(stderr io.Writer, c *demoConfig) *flag.FlagSet {
	fs := newFlagSet("demo", stderr)
	fs.StringVar(&c.serve.listen, "listen", "127.0.0.1:8080", "address of the REST API and dashboard")
	fs.StringVar(&c.mesosListen, "mesos-listen", "127.0.0.1:5050", "address of the emulated Mesos master")
	fs.StringVar(&c.serve.sparkRestListen, "spark-rest-listen", "127.0.0.1:7077", "address of Spark's REST submission protocol (spark-submit --master mesos://HOST:PORT --deploy-mode cluster); empty disables it")
	fs.StringVar(&c.serve.databaseURL, "database-url", "", "PostgreSQL URL; empty starts a scratch server (needs Debian's postgresql package) and deletes it on exit")
	fs.StringVar(&c.cluster, "cluster", "thesis14", "emulated agents: thesis14 or a cluster spec JSON file")
	fs.StringVar(&c.serve.policy, "policy", scheduler.DefaultPolicy, "placement policy: dap (the default), bfd, ilp, exact, spread, consolidate, firstfit, morpheus or gio")
	fs.BoolVar(&c.noSample, "no-sample", false, "do not submit the sample workload")
	fs.Float64Var(&c.simSpeed, "sim-speed", 1, "simulated time runs this many times faster than wall time (job run times, sample arrivals)")
	fs.IntVar(&c.sampleJobs, "sample-jobs", 12, "how many jobs of the SWIM trace the sample submits")
	fs.IntVar(&c.sampleHour, "sample-hour", 16, "which hourly sample of the SWIM FB-2009 trace (0-23) the jobs come from")
	fs.DurationVar(&c.maxGap, "sample-max-gap", 5*time.Second, "longest wall-clock pause between two sample submissions")
	fs.Uint64Var(&c.seed, "seed", 1, "seed choosing which sample jobs get deadlines")
	fs.DurationVar(&c.powerOffAfter, "power-off-after", 30*time.Second, "power management: an agent idle this long (simulated time) is powered off through the emulator; 0 keeps every agent on")
	fs.DurationVar(&c.bootTime, "boot-time", 60*time.Second, "simulated time an emulated agent takes to boot after a power-on")
	fs.StringVar(&c.serve.logLevel, "log-level", "info", "debug, info, warn or error")
	fs.StringVar(&c.serve.logFormat, "log-format", "text", "text or json")
	return fs
}

func (c *demoConfig) validate() error {
	if c.simSpeed <= 0 {
		return fmt.Errorf("--sim-speed must be > 0, got %g", c.simSpeed)
	}
	if c.powerOffAfter < 0 || c.bootTime <= 0 {
		return fmt.Errorf("--power-off-after must be >= 0 and --boot-time > 0")
	}
	if c.sampleJobs < 0 {
		return fmt.Errorf("--sample-jobs must be >= 0")
	}
	if c.sampleHour < 0 || c.sampleHour > 23 {
		return fmt.Errorf("--sample-hour must be 0..23")
	}
	if _, _, err := net.SplitHostPort(c.mesosListen); err != nil {
		return fmt.Errorf("--mesos-listen %q: %w (use host:port)", c.mesosListen, err)
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
	if err := c.validate(); err != nil {
		return err
	}
	c.serve.mesos.durationScale = 1 / c.simSpeed
	c.serve.mesos.power = powerConfig{offAfter: time.Duration(float64(c.powerOffAfter) / c.simSpeed), provider: "emulator",
		onTimeout: 5 * time.Minute, tick: time.Second}
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

// demo runs until ctx ends; ready, if not nil, receives the addresses once
// everything listens.
func demo(ctx context.Context, c demoConfig, log *logrus.Logger, stdout io.Writer, ready chan<- demoAddrs) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cl, err := clusterspec.Named(c.cluster)
	if err != nil {
		return fmt.Errorf("--cluster: %w", err)
	}
	// 1. The emulated Mesos master.
	m, err := mesossim.New(mesossim.Config{Cluster: cl, TimeScale: 1 / c.simSpeed, BootTime: c.bootTime, Logger: log.WithField("component", "mesos-emulator")})
	if err != nil {
		return err
	}
	mesosReady := make(chan net.Addr, 1)
	mesosErr := make(chan error, 1)
	go func() { mesosErr <- m.ListenAndServe(ctx, c.mesosListen, func(a net.Addr) { mesosReady <- a }) }()
	var mesosAddr net.Addr
	select {
	case mesosAddr = <-mesosReady:
	case err := <-mesosErr:
		return fmt.Errorf("emulated Mesos master on %s: %w (choose another --mesos-listen)", c.mesosListen, err)
	}
	defer func() { cancel(); <-mesosErr }()
	fmt.Fprintf(stdout, "demo: emulated Mesos %s master with %d agents (%s) at http://%s (EMULATED: not a real Mesos)\n", mesossim.Version, len(cl.Agents), cl.Name, mesosAddr)

	// 2. PostgreSQL.
	if c.serve.databaseURL == "" {
		dir, err := os.MkdirTemp("", "sparkpack-demo-pg-")
		if err != nil {
			return err
		}
		os.Remove(dir)
		pg, err := scratchpg.Start(ctx, dir, stdout)
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
	ln, err := net.Listen("tcp", c.serve.listen)
	if err != nil {
		return fmt.Errorf("listen on %s: %w (choose another --listen)", c.serve.listen, err)
	}
	if c.serve.sparkRestListen != "" {
		sln, err := net.Listen("tcp", c.serve.sparkRestListen)
		if err != nil {
			ln.Close()
			return fmt.Errorf("--spark-rest-listen %s: %w (choose another address, or --spark-rest-listen= to disable)", c.serve.sparkRestListen, err)
		}
		c.serve.sparkRestLn = sln
		c.serve.sparkRestListen = sln.Addr().String()
	}
	serveReady := make(chan string, 1)
	serveErr := make(chan error, 1)
	go func() { serveErr <- serve(ctx, c.serve, log, ln, serveReady) }()
	var apiAddr string
	select {
	case apiAddr = <-serveReady:
	case err := <-serveErr:
		return err
	}
	base := "http://" + apiAddr
	fmt.Fprintf(stdout, "demo: dashboard  %s/\n", base)
	fmt.Fprintf(stdout, "demo: REST API   %s/api/v1/jobs\n", base)
	if c.serve.sparkRestListen != "" {
		fmt.Fprintf(stdout, "demo: spark-submit --master mesos://%s --deploy-mode cluster ...\n", c.serve.sparkRestListen)
	}
	fmt.Fprintf(stdout, "demo: emulator   http://%s/sim/agents (agents), /sim/tasks (tasks)\n", mesosAddr)
	fmt.Fprintf(stdout, "demo: submit a job: sparkpack submit --server %s --app-resource local:///opt/spark/examples/jars/spark-examples.jar --main-class org.apache.spark.examples.SparkPi --executors 2 --executor-cores 1 --executor-memory-mb 1024 --estimated-duration 30 --follow\n", base)
	fmt.Fprintln(stdout, "demo: press Ctrl-C to stop")
	if ready != nil {
		ready <- demoAddrs{API: base, Mesos: "http://" + mesosAddr.String(), SparkREST: c.serve.sparkRestListen}
	}
	if !c.noSample && c.sampleJobs > 0 {
		go func() {
			if err := submitSample(ctx, base, c, stdout); err != nil && ctx.Err() == nil {
				fmt.Fprintf(stdout, "demo: sample workload: %v\n", err)
			}
		}()
	}
	select {
	case err := <-serveErr:
		return err
	case err := <-mesosErr:
		mesosErr <- err
		return fmt.Errorf("emulated Mesos master stopped: %w", err)
	case <-ctx.Done():
	}
	fmt.Fprintln(stdout, "demo: stopping")
	return <-serveErr
}

// sampleSpecs turns the first jobs of a SWIM trace hour into job bodies:
// sizes and modelled duration from the performance model (docs/simulation.md),
// a deadline of twice the duration for about a third of them.
func sampleSpecs(c demoConfig) ([]map[string]any, []time.Duration, error) {
	trace, err := workload.FB2009()
	if err != nil {
		return nil, nil, err
	}
	hour := workload.Hour(trace, c.sampleHour)
	if len(hour) > c.sampleJobs {
		hour = hour[:c.sampleJobs]
	}
	rng := rand.New(rand.NewPCG(c.seed, 7))
	model := workload.DefaultModel
	var specs []map[string]any
	var gaps []time.Duration
	prev := time.Duration(0)
	for i, t := range hour {
		p := model.Profile(t)
		ref := model.Reference(p).Seconds()
		spec := map[string]any{
			"id":   uuid.NewSHA1(uuid.NameSpaceURL, []byte(fmt.Sprintf("sparkpack-demo/%d/%s/%d", c.sampleHour, t.ID, c.seed))).String(),
			"name": fmt.Sprintf("%s-%s", strings.ToLower(string(p.App)), t.ID),
			"app": map[string]any{
				"appResource": "local:///opt/spark/examples/jars/spark-examples.jar",
				"mainClass":   p.MainClass(),
				"args":        []string{fmt.Sprintf("hdfs:///swim/input/%s", t.ID)},
			},
			"executors": p.Executors, "executorCores": p.ExecutorCores, "executorMemoryMB": p.ExecutorMemoryMB,
			"estimatedDurationSeconds": ref,
			"labels":                   map[string]string{"source": "swim-fb2009", "hour": fmt.Sprint(c.sampleHour)},
		}
		if rng.Float64() < 1.0/3 {
			// Twice the modelled run time, in wall-clock seconds (the
			// scheduler knows estimates are simulated time: DurationScale).
			spec["deadline"] = 2 * ref / c.simSpeed
		}
		gap := time.Duration(float64(t.Submit-prev) / c.simSpeed)
		if gap > c.maxGap || i == 0 {
			gap = min(gap, c.maxGap)
		}
		prev = t.Submit
		specs = append(specs, spec)
		gaps = append(gaps, gap)
	}
	return specs, gaps, nil
}

func submitSample(ctx context.Context, base string, c demoConfig, stdout io.Writer) error {
	specs, gaps, err := sampleSpecs(c)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "demo: submitting %d jobs of hour %d of the SWIM FB-2009 trace (--no-sample to skip)\n", len(specs), c.sampleHour)
	client := &http.Client{Timeout: 10 * time.Second}
	for i, spec := range specs {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(gaps[i]):
		}
		body, _ := json.Marshal(spec)
		var status int
		for attempt := 0; attempt < 5; attempt++ {
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/api/v1/jobs", bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			resp, err := client.Do(req)
			if err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				time.Sleep(time.Second)
				continue
			}
			msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
			resp.Body.Close()
			status = resp.StatusCode
			if status == http.StatusServiceUnavailable {
				time.Sleep(time.Second)
				continue
			}
			if status >= 300 {
				return fmt.Errorf("job %v refused: %d %s", spec["name"], status, bytes.TrimSpace(msg))
			}
			break
		}
		dl := ""
		if d, ok := spec["deadline"]; ok {
			dl = fmt.Sprintf(", deadline in %.0fs", d)
		}
		fmt.Fprintf(stdout, "demo: submitted %d/%d %v (%v executors x %v cores%s)\n", i+1, len(specs), spec["name"], spec["executors"], spec["executorCores"], dl)
	}
	return nil
}
