package mesossim

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/sparkpack/sparkpack/clusterspec"
	"github.com/sparkpack/sparkpack/internal/pprofserve"
)

// Command runs the emulator as a command-line program (wired as
// `sparkpack mesos-sim`). It parses its own flags from args (without the
// program name), serves until ctx is done and returns nil on a clean stop.
func Command(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("mesos-sim", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		listen      = fs.String("listen", "127.0.0.1:5050", "address to serve the Mesos v1 API on (host:port)")
		cluster     = fs.String("cluster", "thesis14", "simulated agents: the built-in cluster \"thesis14\" or a cluster spec JSON file")
		offerIvl    = fs.Duration("offer-interval", time.Second, "allocation interval: how often offers are made (Mesos default 1s)")
		heartbeat   = fs.Duration("heartbeat-interval", 15*time.Second, "scheduler stream HEARTBEAT interval (Mesos default 15s)")
		retry       = fs.Duration("status-update-retry", 10*time.Second, "first re-send delay of unacknowledged status updates, doubling (Mesos: 10s)")
		startDelay  = fs.Duration("task-start-delay", 100*time.Millisecond, "time from LAUNCH to TASK_STARTING/TASK_RUNNING")
		defaultDur  = fs.Duration("default-task-duration", 10*time.Second, "task duration when a task has no "+DurationLabel+" label")
		timeScale   = fs.Float64("time-scale", 1, "wall-clock seconds per simulated second of task time (0.1 = ten times faster)")
		failRate    = fs.Float64("fault-fail-rate", 0, "probability that a task ends TASK_FAILED (fault injection)")
		lostRate    = fs.Float64("fault-lost-rate", 0, "probability that a task ends TASK_LOST (fault injection)")
		seed        = fs.Int64("fault-seed", 1, "seed of the fault injection random choices")
		noSpark     = fs.Bool("no-spark", false, "do not simulate Spark for launched spark-submit tasks")
		perfTruth   = fs.String("perf-truth", "", "time simulated Spark applications by the emulator's performance truth (docs/simulation.md):\n\"derived\" (every signature's hidden parameters from a hash of it) or a truth JSON file; empty: by the\ndriver task's "+DurationLabel+" label (sparkpack's estimate) as before")
		bootTime    = fs.Duration("boot-time", 60*time.Second, "simulated time from POST /sim/agents/power-on to the agent registering again")
		unreachable = fs.Duration("unreachable-timeout", 75*time.Second, "how long a powered-off or crashed agent stays listed (inactive) before it is marked unreachable (a real master: 15s x 5 pings)")
		loseWorkDir = fs.Bool("agents-lose-work-dir", false, "agents lose their work dir over a power cycle: a powered-on agent registers under a new agent id, without its reservations (docs/power.md)")
		logLevel    = fs.String("log-level", "info", "log level: debug, info, warn, error")
		showVersion = fs.Bool("version", false, "print the emulated Mesos version and exit")
		pprofAddr   = fs.String("pprof", "", "address to serve Go's runtime profiles on (/debug/pprof/, e.g. 127.0.0.1:6061); empty disables it")
	)
	fs.Usage = func() {
		fmt.Fprintf(stderr, `Usage: sparkpack mesos-sim [flags]

Runs an EMULATED Apache Mesos %s master with simulated agents (not a real
Mesos, not for production): the v1 scheduler API (POST /api/v1/scheduler), the
v1 operator API (POST /api/v1), JSON and protobuf, plus admin endpoints under
/sim/ (agents, tasks, fault injection, power, the bill). Tasks run for
simulated durations; a launched spark-submit with spark.mesos.role is played
as a Spark driver. Every agent is billed at its price while powered on
(GET /sim/bill, in simulated time).

Flags:
`, Version)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if *showVersion {
		fmt.Fprintf(stdout, "mesos-sim (emulates Mesos %s)\n", Version)
		return nil
	}
	lvl, err := logrus.ParseLevel(*logLevel)
	if err != nil {
		return err
	}
	log := logrus.New()
	log.SetOutput(stderr)
	log.SetLevel(lvl)
	cl, err := clusterspec.Named(*cluster)
	if err != nil {
		return err
	}
	host, _, err := net.SplitHostPort(*listen)
	if err != nil {
		return fmt.Errorf("--listen: %w", err)
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "localhost"
	}
	if *pprofAddr != "" {
		addr, err := pprofserve.Start(ctx, *pprofAddr)
		if err != nil {
			return err
		}
		log.WithField("address", addr).Info("serving Go runtime profiles at /debug/pprof/ (--pprof)")
	}
	truth, err := LoadPerfTruth(*perfTruth)
	if err != nil {
		return fmt.Errorf("--perf-truth: %w", err)
	}
	m, err := New(Config{
		Cluster: cl, Hostname: host, OfferInterval: *offerIvl, HeartbeatInterval: *heartbeat,
		StatusUpdateRetry: *retry, TaskStartDelay: *startDelay, DefaultTaskDuration: *defaultDur,
		TimeScale: *timeScale, TaskFailureRate: *failRate, TaskLostRate: *lostRate, Seed: *seed,
		DisableSpark: *noSpark, PerfTruth: truth, Logger: log, BootTime: *bootTime, UnreachableAfter: *unreachable,
		AgentsLoseWorkDir: *loseWorkDir,
	})
	if err != nil {
		return err
	}
	return m.ListenAndServe(ctx, *listen, func(a net.Addr) {
		fmt.Fprintf(stdout, "mesos-sim: emulated Mesos %s master with %d agents (cluster %s) listening on http://%s\n",
			Version, len(cl.Agents), cl.Name, a)
		fmt.Fprintf(stdout, "mesos-sim: scheduler API http://%s/api/v1/scheduler, operator API http://%s/api/v1, admin http://%s/sim/agents\n", a, a, a)
	})
}
