package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	stdlog "log"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/gorilla/mux"
	"github.com/sirupsen/logrus"

	"github.com/sparkpack/sparkpack/api"
	"github.com/sparkpack/sparkpack/chargeback"
	"github.com/sparkpack/sparkpack/internal/pprofserve"
	"github.com/sparkpack/sparkpack/internal/tlsutil"
	"github.com/sparkpack/sparkpack/leader"
	"github.com/sparkpack/sparkpack/metrics"
	"github.com/sparkpack/sparkpack/offers"
	"github.com/sparkpack/sparkpack/placement"
	"github.com/sparkpack/sparkpack/scheduler"
	"github.com/sparkpack/sparkpack/sparkrest"
	"github.com/sparkpack/sparkpack/sparksubmit"
	"github.com/sparkpack/sparkpack/store"
)

type serveConfig struct {
	listen      string
	databaseURL string
	// databaseWait bounds how long serve waits at start for a PostgreSQL
	// that is not reachable yet (dbwait.go); 0 fails at once.
	databaseWait    time.Duration
	policy          string
	tokensFile      string
	teamsFile       string // --teams (teams.go)
	protectReads    bool
	logLevel        string
	logFormat       string
	shutdownTimeout time.Duration
	// sparkRestListen, when set, serves Spark's REST submission protocol
	// (package sparkrest) there; empty disables it.
	sparkRestListen string
	// sparkRestLn, if set, is the already open listener of sparkRestListen.
	sparkRestLn net.Listener
	// sparkRestAllow is --spark-rest-allow as given ("" unset, "none" or
	// CIDRs); allow is its parsed form.
	sparkRestAllow string
	allow          []netip.Prefix
	// sparkRestPlaintext keeps the Spark REST listener on http when TLS is on.
	sparkRestPlaintext bool
	// tlsCert and tlsKey, when set, serve both listeners over TLS.
	tlsCert, tlsKey string
	// tlsReload is how often the TLS files are checked for changes.
	tlsReload time.Duration
	// rateLimit, rateBurst and maxWaiting as given; rate, burst and
	// maxWaitingN parsed.
	rateLimit, rateBurst, maxWaiting string
	rate                             float64
	burst, maxWaitingN               int
	mesos                            mesosConfig
	ha                               haConfig
	// allowSparkConf and allowEnv are --allow-spark-conf and --allow-env
	// as given; containment the policy built from them.
	allowSparkConf, allowEnv string
	containment              scheduler.Containment
	// pprof, when set, serves Go's runtime profiles on that address.
	pprof string
	// teamBudgets is --team-budgets as given; budgets its parsed form.
	teamBudgets string
	budgets     chargeback.Static
	// started, if set, is called once the server accepts requests (the
	// demo watches jobs through it).
	started func(serveRuntime)
}

// serveRuntime is what a running serve hands to its started hook.
type serveRuntime struct {
	API    *api.Server
	Broker *api.Broker
	Store  *store.Store
	// Live is the scheduler of this instance's current term as leader,
	// nil while it does not lead or without --mesos-master.
	Live func() *live
}

func serveFlags(name string, stderr io.Writer, c *serveConfig) *flag.FlagSet {
	fs := newFlagSet(name, stderr)
	fs.StringVar(&c.listen, "listen", envDefault("SPARKPACK_LISTEN", "127.0.0.1:8080"), withEnv("address of the REST API and dashboard", "SPARKPACK_LISTEN"))
	fs.StringVar(&c.databaseURL, "database-url", envDefault("SPARKPACK_DATABASE_URL", ""), withEnv("PostgreSQL URL, e.g. postgres://user:pass@host:5432/sparkpack?sslmode=disable (required)", "SPARKPACK_DATABASE_URL"))
	fs.DurationVar(&c.databaseWait, "database-wait", envDuration("SPARKPACK_DATABASE_WAIT", DefaultDatabaseWait), withEnv("how long serve waits at start for a PostgreSQL that is not reachable yet (connection refused, name not resolving yet, Unix socket not there yet, no answer, starting up), trying again and logging each attempt, before it exits; a bad URL, refused credentials or a missing database fail at once. 0: fail at once", "SPARKPACK_DATABASE_WAIT"))
	fs.StringVar(&c.mesos.master, "mesos-master", envDefault("SPARKPACK_MESOS_MASTER", ""), withEnv("Mesos master: host:port or http(s)://host:port; several masters host1:5050,host2:5050 (each is tried, the leader followed, another tried when it stops answering); or zk://zk1:2181,zk2:2181/mesos (the leader read from ZooKeeper as Mesos does, and followed); empty runs the API and store only (jobs are stored, not scheduled)", "SPARKPACK_MESOS_MASTER"))
	fs.StringVar(&c.mesos.principal, "mesos-principal", envDefault("SPARKPACK_MESOS_PRINCIPAL", ""), withEnv("Mesos principal for the framework, reservations and quota (HTTP basic auth)", "SPARKPACK_MESOS_PRINCIPAL"))
	fs.StringVar(&c.mesos.secretFile, "mesos-secret-file", envDefault("SPARKPACK_MESOS_SECRET_FILE", ""), withEnv("file holding the principal's secret", "SPARKPACK_MESOS_SECRET_FILE"))
	fs.StringVar(&c.mesos.role, "mesos-role", envDefault("SPARKPACK_MESOS_ROLE", "sparkpack"), withEnv("role sparkpack's framework subscribes in; Spark drivers run there (each job's executors get role sparkpack-job-<id>)", "SPARKPACK_MESOS_ROLE"))
	fs.StringVar(&c.mesos.sparkMaster, "spark-master", envDefault("SPARKPACK_SPARK_MASTER", ""), withEnv("master URL the Spark drivers use (default: mesos://<the leading master at launch>, or mesos://zk://... as --mesos-master gives it without credentials)", "SPARKPACK_SPARK_MASTER"))
	fs.StringVar(&c.mesos.sparkSubmit, "spark-submit", envDefault("SPARKPACK_SPARK_SUBMIT", sparksubmit.DefaultSparkSubmit), withEnv("path of spark-submit on the Mesos agents", "SPARKPACK_SPARK_SUBMIT"))
	fs.StringVar(&c.mesos.sparkPrincipal, "spark-principal", envDefault("SPARKPACK_SPARK_PRINCIPAL", ""), withEnv("Mesos principal the Spark drivers authenticate with (spark.mesos.principal)", "SPARKPACK_SPARK_PRINCIPAL"))
	fs.StringVar(&c.mesos.sparkSecretFile, "spark-secret-file", envDefault("SPARKPACK_SPARK_SECRET_FILE", ""), withEnv("path on the agents of the Spark principal's secret (spark.mesos.secret.file)", "SPARKPACK_SPARK_SECRET_FILE"))
	fs.StringVar(&c.mesos.sparkHome, "spark-home", envDefault("SPARKPACK_SPARK_HOME", ""), withEnv("Spark's directory on the agents, for executors (spark.mesos.executor.home)", "SPARKPACK_SPARK_HOME"))
	fs.StringVar(&c.mesos.executorImage, "executor-docker-image", envDefault("SPARKPACK_EXECUTOR_DOCKER_IMAGE", ""), withEnv("Docker image for Spark executors (spark.mesos.executor.docker.image); empty runs them without Docker", "SPARKPACK_EXECUTOR_DOCKER_IMAGE"))
	fs.StringVar(&c.mesos.prices, "prices", envDefault("SPARKPACK_PRICES", ""), withEnv("hourly prices of agents without a price attribute, by instance_type: m5.xlarge=0.192,m5.2xlarge=0.384", "SPARKPACK_PRICES"))
	fs.StringVar(&c.mesos.admission, "admission", envDefault("SPARKPACK_ADMISSION", "reject"), withEnv("a deadline job that cannot make its deadline: reject, or accept-and-flag", "SPARKPACK_ADMISSION"))
	fs.DurationVar(&c.mesos.promoteAfter, "promote-after", envDuration("SPARKPACK_PROMOTE_AFTER", scheduler.DefaultPromoteAfter), withEnv("a regular job skipped this long moves to the deadline queue (anti-starvation; negative disables)", "SPARKPACK_PROMOTE_AFTER"))
	fs.DurationVar(&c.mesos.refresh, "agents-refresh", envDuration("SPARKPACK_AGENTS_REFRESH", 2*time.Second), withEnv("how often GET_AGENTS is read", "SPARKPACK_AGENTS_REFRESH"))
	fs.StringVar(&c.mesos.reserveMode, "reserve-mode", envDefault("SPARKPACK_RESERVE_MODE", "operator"), withEnv("how reservations are made: operator (operator API with a quota limit per job: executors stay inside the reservations) or offers (ACCEPT with RESERVE, for a principal without operator rights; no quota cap)", "SPARKPACK_RESERVE_MODE"))
	fs.DurationVar(&c.mesos.launchTimeout, "launch-timeout", envDuration("SPARKPACK_LAUNCH_TIMEOUT", 2*time.Minute), withEnv("a driver that finds no offer with room this long is withdrawn and its job placed again", "SPARKPACK_LAUNCH_TIMEOUT"))
	fs.DurationVar(&c.mesos.confirm, "reserve-timeout", envDuration("SPARKPACK_RESERVE_TIMEOUT", offers.DefaultReserveTimeout), withEnv("how long one reservation or release waits for Mesos (GET_AGENTS to show it; from offers, the offers and OPERATION_FINISHED) before it gives up: a reservation is rolled back and the job placed again, a release is tried again by the leak sweep; raise it for a slow master (0: the default)", "SPARKPACK_RESERVE_TIMEOUT"))
	fs.DurationVar(&c.mesos.offerHold, "offer-hold", envDuration("SPARKPACK_OFFER_HOLD", 5*time.Second), withEnv("longest time an unused offer is held before it is declined", "SPARKPACK_OFFER_HOLD"))
	fs.DurationVar(&c.mesos.sweep, "leak-sweep", envDuration("SPARKPACK_LEAK_SWEEP", 30*time.Second), withEnv("how often reservations labelled for jobs that are over, or that no plan of the job holds (left by a crash or an agent that came back), are looked for and released", "SPARKPACK_LEAK_SWEEP"))
	fs.StringVar(&c.policy, "policy", envDefault("SPARKPACK_POLICY", scheduler.DefaultPolicy), withEnv("placement policy: dap (deadline-aware packing, the default), bfd, ilp, exact, spread, consolidate, firstfit, morpheus or gio", "SPARKPACK_POLICY"))
	fs.StringVar(&c.mesos.ordering, "queue", envDefault("SPARKPACK_QUEUE", string(scheduler.DefaultOrdering)), withEnv("queue discipline: feasible-lpt (EDF, jobs that can no longer make their deadline after those that can, longest first; the default), feasible-edf (the same, those jobs in EDF order), algorithm3 (thesis Algorithm 3) or fifo", "SPARKPACK_QUEUE"))
	fs.StringVar(&c.tokensFile, "tokens-file", envDefault("SPARKPACK_TOKENS_FILE", ""), withEnv("file of bearer tokens, one a line: name:token:scopes (scopes from submit, cancel, read, metrics, admin) or a bare token (every scope); when set (or SPARKPACK_TOKENS lists tokens) every mutating request needs one", "SPARKPACK_TOKENS_FILE"))
	fs.BoolVar(&c.protectReads, "protect-reads", envBool("SPARKPACK_PROTECT_READS", false), withEnv("require a token with the read scope on reads too, and read or metrics on /metrics", "SPARKPACK_PROTECT_READS"))
	fs.StringVar(&c.logLevel, "log-level", envDefault("SPARKPACK_LOG_LEVEL", "info"), withEnv("debug, info, warn or error", "SPARKPACK_LOG_LEVEL"))
	fs.StringVar(&c.logFormat, "log-format", envDefault("SPARKPACK_LOG_FORMAT", "auto"), withEnv("auto (JSON unless stderr is a terminal), json or text", "SPARKPACK_LOG_FORMAT"))
	fs.StringVar(&c.sparkRestListen, "spark-rest-listen", envDefault("SPARKPACK_SPARK_REST_LISTEN", ""), withEnv("address of Spark's REST submission protocol, for spark-submit --master mesos://HOST:PORT --deploy-mode cluster (7077 by convention, e.g. 0.0.0.0:7077); empty disables it. With tokens it needs --spark-rest-allow", "SPARKPACK_SPARK_REST_LISTEN"))
	fs.StringVar(&c.sparkRestAllow, "spark-rest-allow", envDefault("SPARKPACK_SPARK_REST_ALLOW", ""), withEnv("client networks allowed to create and kill through the Spark REST listener WITHOUT a token (Spark 3.5's spark-submit cannot send one): CIDRs or addresses, comma-separated, e.g. 10.1.0.0/16,192.168.5.7; 'none' accepts only clients sending Authorization: Bearer <token>. Required with tokens and --spark-rest-listen", "SPARKPACK_SPARK_REST_ALLOW"))
	fs.BoolVar(&c.sparkRestPlaintext, "spark-rest-plaintext", envBool("SPARKPACK_SPARK_REST_PLAINTEXT", false), withEnv("serve the Spark REST listener over plain http even with --tls-cert (Spark 3.5's spark-submit speaks http only; keep --spark-rest-allow tight)", "SPARKPACK_SPARK_REST_PLAINTEXT"))
	fs.StringVar(&c.tlsCert, "tls-cert", envDefault("SPARKPACK_TLS_CERT", ""), withEnv("PEM certificate (chain) for TLS on the API and the Spark REST listener; reloaded on SIGHUP and when the file changes", "SPARKPACK_TLS_CERT"))
	fs.StringVar(&c.tlsKey, "tls-key", envDefault("SPARKPACK_TLS_KEY", ""), withEnv("PEM private key of --tls-cert", "SPARKPACK_TLS_KEY"))
	fs.DurationVar(&c.tlsReload, "tls-reload-interval", envDuration("SPARKPACK_TLS_RELOAD_INTERVAL", 5*time.Second), withEnv("how often --tls-cert and --tls-key are checked for new contents", "SPARKPACK_TLS_RELOAD_INTERVAL"))
	fs.StringVar(&c.mesos.caFile, "mesos-ca-file", envDefault("SPARKPACK_MESOS_CA_FILE", ""), withEnv("PEM CA certificates that sign the Mesos master's TLS certificate (with an https:// --mesos-master; default: the system's roots)", "SPARKPACK_MESOS_CA_FILE"))
	fs.StringVar(&c.rateLimit, "rate-limit", envDefault("SPARKPACK_RATE_LIMIT", "50"), withEnv("mutating requests (submit, cancel, kill) a second per token, or per client address without one; past it: 429 with Retry-After. 0 disables", "SPARKPACK_RATE_LIMIT"))
	fs.StringVar(&c.rateBurst, "rate-burst", envDefault("SPARKPACK_RATE_BURST", "500"), withEnv("mutating requests a token or address may make at once before --rate-limit applies", "SPARKPACK_RATE_BURST"))
	fs.StringVar(&c.maxWaiting, "max-waiting-per-token", envDefault("SPARKPACK_MAX_WAITING_PER_TOKEN", "0"), withEnv("most jobs one token may have waiting (SUBMITTED or QUEUED); more submissions get 429. 0: no cap", "SPARKPACK_MAX_WAITING_PER_TOKEN"))
	fs.StringVar(&c.allowSparkConf, "allow-spark-conf", envDefault("SPARKPACK_ALLOW_SPARK_CONF", ""), withEnv("Spark properties that choose how drivers and executors are launched (spark.mesos.executor.docker.image, spark.driver.extraJavaOptions, ...) and that jobs may set nonetheless, comma-separated; by default a job setting one is refused (400). Only for submitters you trust with the cluster", "SPARKPACK_ALLOW_SPARK_CONF"))
	fs.StringVar(&c.allowEnv, "allow-env", envDefault("SPARKPACK_ALLOW_ENV", ""), withEnv("environment variables that choose how drivers are launched (SPARK_HOME, JAVA_TOOL_OPTIONS, LD_PRELOAD, PATH, ...) and that jobs may set nonetheless, comma-separated; by default a job setting one is refused (400)", "SPARKPACK_ALLOW_ENV"))
	fs.StringVar(&c.teamBudgets, "team-budgets", envDefault("SPARKPACK_TEAM_BUDGETS", ""), withEnv(teamBudgetsHelp, "SPARKPACK_TEAM_BUDGETS"))
	powerFlags(fs, &c.mesos.power)
	preemptFlags(fs, &c.mesos.preempt)
	fs.StringVar(&c.ha.instance, "instance-id", envDefault("SPARKPACK_INSTANCE_ID", ""), withEnv("this instance's name among several sparkpack instances sharing the database (default HOSTNAME:PORT of --listen; must differ between instances)", "SPARKPACK_INSTANCE_ID"))
	fs.StringVar(&c.ha.advertise, "advertise-url", envDefault("SPARKPACK_ADVERTISE_URL", ""), withEnv("this instance's API URL as the other instances reach it, to forward dashboard views to the leader (default from --listen and the hostname)", "SPARKPACK_ADVERTISE_URL"))
	fs.DurationVar(&c.ha.ttl, "leader-lease", envDuration("SPARKPACK_LEADER_LEASE", leader.DefaultTTL), withEnv("leadership lease: a leader that cannot renew it for this long stops, and another instance takes over (a dead leader is replaced within lease + --leader-retry; a live one rides out renewal stalls shorter than 0.8 x lease - --leader-renew)", "SPARKPACK_LEADER_LEASE"))
	fs.DurationVar(&c.ha.renew, "leader-renew", envDuration("SPARKPACK_LEADER_RENEW", leader.DefaultRenew), withEnv("how often the leader renews its lease", "SPARKPACK_LEADER_RENEW"))
	fs.DurationVar(&c.ha.modelRefresh, "model-refresh", envDuration("SPARKPACK_MODEL_REFRESH", 10*time.Second), withEnv("how often a follower's learned run-time model reads the runs the leader recorded since (it right-sizes \"executors\": \"auto\" jobs submitted through it); 0 turns it off", "SPARKPACK_MODEL_REFRESH"))
	fs.DurationVar(&c.ha.rescan, "lost-job-rescan", envDuration("SPARKPACK_LOST_JOB_RESCAN", 30*time.Second), withEnv("how often the leader looks for jobs stored lately that it never heard of (a lost notification) and queues them; 0 turns it off", "SPARKPACK_LOST_JOB_RESCAN"))
	fs.DurationVar(&c.ha.retry, "leader-retry", envDuration("SPARKPACK_LEADER_RETRY", leader.DefaultRetry), withEnv("how often a follower tries to take the lease", "SPARKPACK_LEADER_RETRY"))
	fs.StringVar(&c.teamsFile, "teams", envDefault("SPARKPACK_TEAMS", ""), withEnv("teams file, one team a line: NAME weight=W guaranteed-cpus=N guaranteed-memory=SIZE max-cpus=N max-memory=SIZE max-waiting=N max-deadline=N budget=USD/day|month budget-action=hold|reject (docs/teams.md); reloaded on SIGHUP and when it changes. A job's team is its token's (name:token:scopes:team) or its team label", "SPARKPACK_TEAMS"))
	fs.StringVar(&c.pprof, "pprof", envDefault("SPARKPACK_PPROF", ""), withEnv("address to serve Go's runtime profiles on (/debug/pprof/, e.g. 127.0.0.1:6060) for diagnosis; empty disables it. Keep it on a private address", "SPARKPACK_PPROF"))
	fs.DurationVar(&c.shutdownTimeout, "shutdown-timeout", envDuration("SPARKPACK_SHUTDOWN_TIMEOUT", 15*time.Second), withEnv("how long to let requests finish on SIGTERM", "SPARKPACK_SHUTDOWN_TIMEOUT"))
	return fs
}

func (c *serveConfig) validate() error {
	if c.databaseURL == "" {
		return fmt.Errorf("--database-url (or SPARKPACK_DATABASE_URL) is required; for a scratch database run: scripts/scratch-pg.sh start /tmp/sparkpack-pg")
	}
	if _, _, err := net.SplitHostPort(c.listen); err != nil {
		return fmt.Errorf("--listen %q: %w (use host:port, e.g. 127.0.0.1:8080)", c.listen, err)
	}
	if c.sparkRestListen != "" {
		if _, _, err := net.SplitHostPort(c.sparkRestListen); err != nil {
			return fmt.Errorf("--spark-rest-listen %q: %w (use host:port, e.g. 0.0.0.0:7077, or leave it empty)", c.sparkRestListen, err)
		}
	}
	allow, err := api.ParseAllowlist(c.sparkRestAllow)
	if err != nil {
		return fmt.Errorf("--spark-rest-allow: %w", err)
	}
	c.allow = allow
	if c.containment, err = scheduler.NewContainment(strings.Split(c.allowSparkConf, ","), strings.Split(c.allowEnv, ",")); err != nil {
		return err
	}
	if (c.tlsCert == "") != (c.tlsKey == "") {
		return fmt.Errorf("--tls-cert and --tls-key go together: set both (a PEM certificate and its key) or neither")
	}
	if c.rate, err = strconv.ParseFloat(c.rateLimit, 64); err != nil || c.rate < 0 || c.rate > 1e6 {
		return fmt.Errorf("--rate-limit %q: want requests a second, e.g. 50 or 0.5 (0 disables)", c.rateLimit)
	}
	if c.burst, err = strconv.Atoi(c.rateBurst); err != nil || c.burst < 1 {
		return fmt.Errorf("--rate-burst %q: want a whole number of at least 1", c.rateBurst)
	}
	if c.maxWaitingN, err = strconv.Atoi(c.maxWaiting); err != nil || c.maxWaitingN < 0 {
		return fmt.Errorf("--max-waiting-per-token %q: want a whole number (0: no cap)", c.maxWaiting)
	}
	if c.budgets, err = chargeback.ParseStatic(c.teamBudgets); err != nil {
		return fmt.Errorf("--team-budgets: %w", err)
	}
	if c.mesos.caFile != "" && c.mesos.master == "" {
		return fmt.Errorf("--mesos-ca-file is set but --mesos-master is not")
	}
	switch scheduler.AdmissionMode(c.mesos.admission) {
	case scheduler.AdmitReject, scheduler.AdmitFlag:
	default:
		return fmt.Errorf("--admission %q: use %s or %s", c.mesos.admission, scheduler.AdmitReject, scheduler.AdmitFlag)
	}
	if c.mesos.reserveMode != "operator" && c.mesos.reserveMode != "offers" {
		return fmt.Errorf("--reserve-mode %q: use operator or offers", c.mesos.reserveMode)
	}
	// A negative duration used to be taken as the default (or as off)
	// without a word: refuse it, naming the flag.
	for _, d := range []struct {
		flag string
		v    time.Duration
	}{
		{"--agents-refresh", c.mesos.refresh}, {"--launch-timeout", c.mesos.launchTimeout}, {"--offer-hold", c.mesos.offerHold},
		{"--leak-sweep", c.mesos.sweep}, {"--tls-reload-interval", c.tlsReload}, {"--leader-lease", c.ha.ttl},
		{"--leader-renew", c.ha.renew}, {"--leader-retry", c.ha.retry}, {"--model-refresh", c.ha.modelRefresh},
		{"--lost-job-rescan", c.ha.rescan}, {"--shutdown-timeout", c.shutdownTimeout}, {"--database-wait", c.databaseWait},
	} {
		if d.v < 0 {
			return fmt.Errorf("%s %s: want a duration >= 0, e.g. 30s (see sparkpack serve --help for what 0 means)", d.flag, d.v)
		}
	}
	if c.mesos.confirm < 0 {
		return fmt.Errorf("--reserve-timeout %s: want a positive duration, e.g. 30s or 2m (0: the default, %s)", c.mesos.confirm, offers.DefaultReserveTimeout)
	}
	if _, err := offers.ParsePriceTable(c.mesos.prices); err != nil {
		return fmt.Errorf("--prices: %w", err)
	}
	switch o := scheduler.Ordering(c.mesos.ordering); o {
	case "", scheduler.OrderFeasibleLPT, scheduler.OrderFeasibleEDF, scheduler.OrderAlgorithm3, scheduler.OrderFIFO:
	default:
		return fmt.Errorf("--queue %q: use %s, %s, %s or %s", c.mesos.ordering, scheduler.OrderFeasibleLPT, scheduler.OrderFeasibleEDF, scheduler.OrderAlgorithm3, scheduler.OrderFIFO)
	}
	if err := c.mesos.preempt.validate(); err != nil {
		return err
	}
	if err := c.mesos.power.validate(); err != nil {
		return err
	}
	if _, ok := placement.Get(c.policy); !ok {
		return fmt.Errorf("--policy %q is unknown; use one of %v", c.policy, placement.Names())
	}
	return nil
}

// checkSparkRestAllow refuses a Spark REST listener with tokens but no
// --spark-rest-allow: the operator must choose who may submit without one.
func (c *serveConfig) checkSparkRestAllow(withTokens bool) error {
	if withTokens && c.sparkRestListen != "" && c.sparkRestAllow == "" {
		return fmt.Errorf("--spark-rest-listen with tokens configured needs --spark-rest-allow: Spark 3.5's spark-submit sends no token, " +
			"so list the client networks that may submit without one (e.g. --spark-rest-allow 10.1.0.0/16, env SPARKPACK_SPARK_REST_ALLOW), " +
			"or set --spark-rest-allow none to accept only clients that send Authorization: Bearer <token>; see docs/deploy.md")
	}
	return nil
}

func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var c serveConfig
	fs := serveFlags("serve", stderr, &c)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := c.validate(); err != nil {
		return err
	}
	log, err := newLogger(stderr, c.logLevel, c.logFormat)
	if err != nil {
		return err
	}
	if c.pprof != "" {
		addr, err := pprofserve.Start(ctx, c.pprof)
		if err != nil {
			return err
		}
		log.WithField("address", addr).Info("serving Go runtime profiles at /debug/pprof/ (--pprof)")
	}
	ln, err := net.Listen("tcp", c.listen)
	if err != nil {
		return fmt.Errorf("listen on %s: %w (is another sparkpack running? choose another --listen)", c.listen, err)
	}
	return serve(ctx, c, log, ln, nil)
}

// serve runs the API on ln until ctx ends. ready, if not nil, is closed
// once the server accepts requests.
func serve(ctx context.Context, c serveConfig, log *logrus.Logger, ln net.Listener, ready chan<- string) error {
	tokens, err := api.LoadTokens(c.tokensFile, os.Getenv("SPARKPACK_TOKENS"))
	if err != nil {
		ln.Close()
		return err
	}
	if err := c.checkSparkRestAllow(tokens.Len() > 0); err != nil {
		ln.Close()
		return err
	}
	for _, w := range tokens.Warnings() {
		log.Warn(w)
	}
	if u := c.mesos.power.unused(); len(u) > 0 {
		log.WithField("flags", u).Warn("power management is off (--power-off-after is 0, the default): these power settings do nothing; " +
			"set --power-off-after (e.g. 10m, env SPARKPACK_POWER_OFF_AFTER) to turn it on, or remove them")
	}
	stopHangup := onHangup(c.tokensFile, tokens, log)
	defer stopHangup()
	if tokens.Len() > 0 {
		log.WithField("tokens", tokens.Names()).Info("bearer tokens loaded")
	} else {
		if c.protectReads {
			log.Warn("--protect-reads has no effect without tokens (--tokens-file or SPARKPACK_TOKENS)")
		}
		if c.maxWaitingN > 0 {
			log.Warn("--max-waiting-per-token has no effect without tokens: it counts per token")
		}
	}
	var certs *tlsutil.Reloader
	if c.tlsCert != "" {
		if certs, err = tlsutil.NewReloader(c.tlsCert, c.tlsKey, log.WithField("component", "tls")); err != nil {
			ln.Close()
			return err
		}
	}
	// The listeners answer from now on: until PostgreSQL answers, with the
	// waiting handlers (waiting.go: /healthz alive, the rest 503), so that
	// no client hangs on a port that is open but silent. Both are open
	// before the wait, so that a busy port fails at once.
	// net/http's own messages go to the configured logger: a recovered
	// handler panic as an error, the rest (TLS handshake failures of
	// scanners, ...) at debug level.
	httpErrLog := stdlog.New(httpErrorLog{log.WithField("component", "http")}, "", 0)
	progress := &dbProgress{}
	front := newSwapHandler(waitingAPI(progress))
	httpSrv := &http.Server{
		ErrorLog:          httpErrLog,
		Handler:           front,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       60 * time.Second,
		IdleTimeout:       120 * time.Second,
	}
	defer httpSrv.Close() // on every early return; a no-op after Shutdown
	errc := make(chan error, 2)
	// TLS: one reloading pair for both listeners, checked until serve ends.
	var tlsWG sync.WaitGroup
	scheme := "http"
	if certs != nil {
		scheme = "https"
		tlsCtx, stopTLS := context.WithCancel(context.Background())
		hup := make(chan os.Signal, 1)
		signal.Notify(hup, syscall.SIGHUP)
		tlsWG.Add(1)
		go func() { defer tlsWG.Done(); certs.Run(tlsCtx, c.tlsReload, hup) }()
		defer func() { signal.Stop(hup); stopTLS(); tlsWG.Wait() }()
		httpSrv.TLSConfig = certs.ServerConfig()
		ln = tls.NewListener(ln, httpSrv.TLSConfig)
	}
	var sparkSrv *http.Server
	var sparkFront *swapHandler
	var sln net.Listener
	sparkScheme := "http"
	if c.sparkRestListen != "" {
		sln = c.sparkRestLn
		if sln == nil {
			sln, err = net.Listen("tcp", c.sparkRestListen)
			if err != nil {
				ln.Close()
				return fmt.Errorf("--spark-rest-listen %s: %w (choose another address, or empty to disable)", c.sparkRestListen, err)
			}
		}
		sparkFront = newSwapHandler(waitingSparkREST(progress))
		sparkSrv = &http.Server{
			ErrorLog:          httpErrLog,
			Handler:           sparkFront,
			ReadHeaderTimeout: 10 * time.Second,
			ReadTimeout:       60 * time.Second,
			IdleTimeout:       120 * time.Second,
		}
		defer sparkSrv.Close()
		if certs != nil && !c.sparkRestPlaintext {
			sparkScheme = "https"
			sparkSrv.TLSConfig = certs.ServerConfig()
			sln = tls.NewListener(sln, sparkSrv.TLSConfig)
		}
		go func() { errc <- sparkSrv.Serve(sln) }()
	}
	go func() { errc <- httpSrv.Serve(ln) }()
	addr := ln.Addr().String()
	lf := logrus.Fields{"listen": addr, "database": redactURL(c.databaseURL)}
	if sln != nil {
		lf["spark_rest_listen"] = sln.Addr().String()
	}
	log.WithFields(lf).Info("connecting to PostgreSQL; until it answers, " + scheme + "://" + addr + "/healthz says alive and every other request gets 503 with Retry-After (/readyz: not ready)")
	st, err := openStoreWaiting(ctx, c.databaseURL, c.databaseWait, log, progress, func(ctx context.Context) (*store.Store, error) {
		return store.Open(ctx, c.databaseURL, store.WithLogger(log))
	})
	if err != nil {
		ln.Close()
		if ctx.Err() != nil {
			// Stopped (SIGTERM, Ctrl-C) while waiting: a stop asked for,
			// as once serving, not a failure (exit 0; systemd marked the
			// unit failed on exit 1).
			log.WithField("database", redactURL(c.databaseURL)).Info("stopped while waiting for PostgreSQL")
			return nil
		}
		return err
	}
	defer st.Close()
	broker := api.NewBroker()
	m := metrics.New(st)
	tw, err := loadTeams(c, log)
	if err != nil {
		ln.Close()
		return err
	}
	c.mesos.teams = tw.holder()
	defer tw.run()()
	guard := &api.Guard{Tokens: tokens, ProtectReads: c.protectReads, SparkAllow: c.allow,
		Limiter: api.NewLimiter(c.rate, c.burst), Refused: m.Refused}
	acfg := api.Config{Store: st, Usage: st, Guard: guard, MaxWaitingPerToken: c.maxWaitingN, Log: log, Containment: c.containment,
		Broker: broker, Dashboard: true,
		Mount: func(r *mux.Router, s *api.Server) {
			r.Handle("/metrics", s.Require(api.ScopeMetrics, api.WithQuery(nil, m.Handler()))).Methods(http.MethodGet)
		}}
	liveCtx, stopLive := context.WithCancel(context.Background())
	defer stopLive()
	tw.wire(&acfg)
	acfg.EstimateScale = c.mesos.durationScale
	var haWG sync.WaitGroup
	var ha *leadership
	budgets := newBudgetTracker(c.budgets, tw.holder(), st, log)
	if budgets != nil {
		c.mesos.budgets, acfg.BudgetRefusal, acfg.Budgets = budgets, budgetRefusal(budgets), budgets.Verdicts
	}
	m.WatchTeams(teamMetrics{st: st, budgets: budgets}, metrics.DefaultTeamSeries)
	if c.mesos.master != "" {
		scheme := "http"
		if certs != nil {
			scheme = "https"
		}
		if c.ha.instance == "" {
			c.ha.instance = defaultInstance(ln.Addr().String())
		}
		if c.ha.advertise == "" {
			c.ha.advertise = defaultAdvertise(scheme, ln.Addr().String())
		}
		if err := preflight(c.mesos, log); err != nil {
			ln.Close()
			return err
		}
		ha, err = newLeadership(c, st, broker, m, log)
		if err != nil {
			ln.Close()
			return fmt.Errorf("leadership: %w", err)
		}
		tw.leading(ha)
		acfg.Notifier, acfg.Admit, acfg.Decide, acfg.Views, acfg.DriverCommand = ha, ha.Admit, ha.Decide, ha, ha.DriverCommand
		acfg.Forward, acfg.Leader = ha.Forward, ha.Status
		acfg.JobCosts, acfg.Logs, acfg.Preview = ha.JobCosts, ha, ha.Preview
		acfg.Forecast = ha.Forecast
		acfg.RightSize = ha.RightSize
		mv := modelsView{m: ha.Models(), scale: c.mesos.durationScale}
		acfg.Models, acfg.JobPrediction, acfg.RunPrediction = mv, mv.jobPrediction, ha.RunPrediction
		if certs != nil && c.mesos.caFile != "" {
			if tc, err := tlsutil.ClientConfig(c.mesos.caFile); err == nil {
				acfg.ForwardTransport = &http.Transport{TLSClientConfig: tc}
			}
		}
		log.WithFields(logrus.Fields{"mesos_master": c.mesos.master, "instance": c.ha.instance, "advertise": c.ha.advertise}).
			Info("campaigning for leadership: the leader runs the scheduler and the Mesos framework")
		// The model loads while the instance serves (and campaigns): until
		// then it predicts with the prior (docs/learning.md).
		haWG.Add(1)
		go func() { defer haWG.Done(); ha.loadModel(liveCtx, log) }()
		haWG.Add(1)
		go func() { defer haWG.Done(); ha.run(liveCtx) }()
		haWG.Add(1)
		go func() { defer haWG.Done(); ha.followModel(liveCtx, c.ha.modelRefresh) }()
	} else {
		log.Warn("no --mesos-master: jobs are stored and listed but not scheduled")
	}
	if budgets != nil {
		budgets.OnChange = func() {
			if ha != nil {
				if lv := ha.cur.Load(); lv != nil {
					lv.core.ClusterChanged()
				}
			}
		}
		haWG.Add(1)
		go func() { defer haWG.Done(); budgets.Run(liveCtx, chargeback.DefaultRefresh) }()
	}
	stopAll := func() {
		stopLive()
		haWG.Wait()
	}
	defer stopAll()
	srv := api.New(acfg)
	front.set(srv.Handler())
	if sparkSrv != nil {
		// Submit and Cancel are the native API's own: both front ends
		// validate, store, notify the scheduler and kill alike.
		sparkFront.set(sparkrest.New(sparkrest.Config{Store: st, Submit: srv.Submit, Cancel: srv.Cancel,
			Log: log.WithField("listener", "spark-rest"), Guard: guard, Containment: c.containment}))
		sl := log.WithFields(logrus.Fields{"spark_rest_listen": sln.Addr().String(), "scheme": sparkScheme, "allow": c.sparkRestAllow})
		switch {
		case sparkScheme == "https":
			sl.Warn("Spark REST listener over TLS: Spark 3.5's spark-submit speaks plain http only; use a client that speaks https, or --spark-rest-plaintext")
		case tokens.Len() == 0 && len(c.allow) == 0 && !isLoopback(sln.Addr()):
			sl.Warn("Spark REST listener without authentication: anyone who reaches it can run code on the cluster; configure tokens and --spark-rest-allow, or bind it to a trusted network")
		case tokens.Len() == 0 && len(c.allow) == 0:
			sl.Info("Spark REST listener without authentication on a loopback address: only clients on this machine reach it")
		default:
			sl.Info("Spark REST submission protocol: spark-submit --master mesos://" + sln.Addr().String() + " --deploy-mode cluster")
		}
	}
	log.WithFields(logrus.Fields{"listen": addr, "policy": c.policy, "auth": tokens.Len() > 0, "tls": certs != nil,
		"rate_limit": c.rate, "rate_burst": c.burst, "max_waiting_per_token": c.maxWaitingN}).
		Info("sparkpack is serving: API at " + scheme + "://" + addr + "/api/v1/jobs")
	if c.started != nil {
		rt := serveRuntime{API: srv, Broker: broker, Store: st, Live: func() *live { return nil }}
		if ha != nil {
			rt.Live = ha.cur.Load
		}
		c.started(rt)
	}
	if ready != nil {
		if ha != nil {
			// Tests and the demo start using the scheduler's views at once:
			// wait until this instance leads or another one does.
			ha.settle(ctx, 30*time.Second)
		}
		ready <- addr
	}
	select {
	case err := <-errc:
		httpSrv.Close()
		if sparkSrv != nil {
			sparkSrv.Close()
		}
		return fmt.Errorf("HTTP server: %w", err)
	case <-ctx.Done():
	}
	log.Info("shutting down: letting requests finish")
	sctx, cancel := context.WithTimeout(context.Background(), c.shutdownTimeout)
	defer cancel()
	if sparkSrv != nil {
		if err := sparkSrv.Shutdown(sctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("shutdown of the Spark REST listener: %w", err)
		}
	}
	if err := httpSrv.Shutdown(sctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("shutdown: %w", err)
	}
	return nil
}

// isLoopback reports whether a listener's address is a loopback address.
func isLoopback(a net.Addr) bool {
	tcp, ok := a.(*net.TCPAddr)
	return ok && tcp.IP.IsLoopback()
}

// httpErrorLog writes net/http's log lines to logrus.
type httpErrorLog struct{ log logrus.FieldLogger }

func (h httpErrorLog) Write(p []byte) (int, error) {
	msg := strings.TrimSpace(string(p))
	if strings.Contains(msg, "panic") {
		h.log.Error(msg)
	} else {
		h.log.Debug(msg)
	}
	return len(p), nil
}
