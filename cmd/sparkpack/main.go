package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/sparkpack/sparkpack/mesossim"
	"github.com/sparkpack/sparkpack/simulate"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

type command struct {
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

var commands = map[string]command{
	"demo":      {"run everything on an emulated Mesos cluster with a scratch PostgreSQL and a sample SWIM workload", runDemo},
	"serve":     {"run the REST API and scheduler against PostgreSQL", runServe},
	"submit":    {"submit a job to a running sparkpack and optionally follow it", runSubmit},
	"kill":      {"the same as cancel: sparkpack kill JOB-ID...", runKill},
	"version":   {"print the version", runVersion},
	"certs":     {"write a CA and a server certificate for TLS (used by the compose deployment; for tests and demos)", runCerts},
	"health":    {"probe the local sparkpack's /healthz (the container's HEALTHCHECK; follows SPARKPACK_LISTEN and SPARKPACK_TLS_CERT)", runHealth},
	"simulate":  {"replay the SWIM trace through the scheduler core and compare placement policies", simulate.Command},
	"mesos-sim": {"run the EMULATED Mesos master with simulated agents and Spark (for tests and demos)", mesossim.Command},
	"jobs":      {"list the jobs of a running sparkpack (filters: --state, --label)", runJobs},
	"job":       {"show one job: state, placement, timeline, driver command", runJob},
	"cancel":    {"cancel a waiting job or kill a running one: sparkpack cancel JOB-ID...", runCancel},
	"cluster":   {"show the agents: state, power, free resources, price and the jobs on each", runCluster},
	"queue":     {"show the waiting jobs in the order they will be tried, with why each waits", runQueue},
	"logs":      {"print a job's Spark driver output from its Mesos sandbox: sparkpack logs [--stderr] [--follow] JOB-ID", runLogs},
	"plan":      {"say where a job would go now, what it would cost and when it would run, without submitting it (submit --dry-run)", runPlan},
	"prune":     {"delete the history of jobs that ended long ago: sparkpack prune --older-than 90d", runPrune},
	"cost":      {"show the cost meter, the burn rate and (when known) the bill and the savings", runCost},
	"forecast":  {"show the forecast of arrivals from the job history next to the actual, and which agents the warm pool keeps on", runForecast},
	"usage":     {"show usage and chargeback by team, job or label: cost, cpu- and memory-hours, outcomes, deadlines met, waiting (--csv)", runUsage},
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	if args[0] == "-h" || args[0] == "--help" || args[0] == "-help" || args[0] == "help" {
		usage(stdout)
		return 0
	}
	if args[0] == "--version" || args[0] == "-version" {
		args = []string{"version"}
	}
	cmd, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "sparkpack: unknown command %q\n\n", args[0])
		usage(stderr)
		return 2
	}
	if asksForHelp(args[1:]) {
		// Help that was asked for is output, not a diagnostic: it goes
		// to standard output (as with kubectl, nomad, git), so that
		// `sparkpack submit --help | less` works.
		stderr = stdout
	}
	err := cmd.run(ctx, args[1:], stdout, stderr)
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errUsage):
		return 2
	}
	fmt.Fprintf(stderr, "sparkpack %s: %v\n", args[0], err)
	var ec exitCode
	if errors.As(err, &ec) {
		return int(ec)
	}
	return 1
}

var errUsage = errors.New("usage error")

// asksForHelp reports whether a command's arguments ask for its help
// (-h, -help or --help before a "--").
func asksForHelp(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "-h", "-help", "--help":
			return true
		}
	}
	return false
}

// exitCode lets a command choose its exit status.
type exitCode int

func (e exitCode) Error() string { return "exit status " + strconv.Itoa(int(e)) }

func usage(w io.Writer) {
	fmt.Fprintln(w, "sparkpack schedules Apache Spark jobs on Apache Mesos at the lowest cost.")
	fmt.Fprintln(w, "\nUsage: sparkpack <command> [flags]   (sparkpack <command> --help for its flags)")
	fmt.Fprintln(w, "\nCommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].summary)
	}
}

func runVersion(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("version", stderr)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "sparkpack %s (%s, %s/%s)\n", version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return nil
}

// newFlagSet makes a flag set whose --help lists every flag with its
// environment variable.
func newFlagSet(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("sparkpack "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

// parseFlags parses a command's flags. --help prints every flag; a bad
// flag prints the problem and where to look, not the whole list.
// Positional arguments are refused.
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := parseFlagsOnly(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(fs.Output(), "unexpected argument %q; see %s --help\n", fs.Arg(0), fs.Name())
		return errUsage
	}
	return nil
}

// parseFlagsOnly is parseFlags that leaves positional arguments in fs.Args.
func parseFlagsOnly(fs *flag.FlagSet, args []string) error {
	usage := fs.Usage
	fs.Usage = func() {}
	err := fs.Parse(args)
	fs.Usage = usage
	if err == nil {
		if err := checkEnvValues(fs); err != nil {
			fmt.Fprintln(fs.Output(), err)
			return errUsage
		}
		return nil
	}
	if errors.Is(err, flag.ErrHelp) {
		if usage != nil {
			usage()
		} else {
			fmt.Fprintf(fs.Output(), "Usage of %s:\n", fs.Name())
			fs.PrintDefaults()
		}
		return err
	}
	fmt.Fprintf(fs.Output(), "see: %s --help\n", fs.Name())
	return errUsage
}

var envInHelpRE = regexp.MustCompile(`\(env (SPARKPACK_[A-Z0-9_]+)\)`)

// checkEnvValues refuses an environment variable that stands in for a flag
// not given on the command line but whose value is not of the flag's type
// (SPARKPACK_LEADER_LEASE=10, SPARKPACK_PROTECT_READS=yes): the env*
// helpers fall back to the default on such a value, which silently ran
// with a setting other than the operator's (issue: ops10). An empty value
// counts as unset, as compose files write unset variables.
func checkEnvValues(fs *flag.FlagSet) error {
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	var problems []string
	fs.VisitAll(func(f *flag.Flag) {
		m := envInHelpRE.FindStringSubmatch(f.Usage)
		if m == nil || given[f.Name] {
			return
		}
		v, ok := os.LookupEnv(m[1])
		if !ok || strings.TrimSpace(v) == "" {
			return
		}
		if p := envValueProblem(f.Value, v); p != "" {
			problems = append(problems, fmt.Sprintf("%s=%q (the environment variable of --%s): %s; fix or unset it", m[1], v, f.Name, p))
		}
	})
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "\n"))
	}
	return nil
}

// envValueProblem says what is wrong with v as a value of the flag whose
// value is fv, or "" when it parses.
func envValueProblem(fv flag.Value, v string) string {
	if b, ok := fv.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
		if _, err := strconv.ParseBool(v); err != nil {
			return "not a boolean (true or false)"
		}
		return ""
	}
	g, ok := fv.(flag.Getter)
	if !ok {
		return ""
	}
	switch g.Get().(type) {
	case time.Duration:
		if _, err := time.ParseDuration(v); err != nil {
			return "not a duration (with a unit: 500ms, 10s, 2m, 1h)"
		}
	case bool:
		if _, err := strconv.ParseBool(v); err != nil {
			return "not a boolean (true or false)"
		}
	case float64:
		if _, err := strconv.ParseFloat(v, 64); err != nil {
			return "not a number"
		}
	case int:
		if _, err := strconv.Atoi(v); err != nil {
			return "not a whole number"
		}
	}
	return ""
}

// envDefault returns the environment variable's value, or def.
func envDefault(env, def string) string {
	if v, ok := os.LookupEnv(env); ok {
		return v
	}
	return def
}

func envBool(env string, def bool) bool {
	v, ok := os.LookupEnv(env)
	if !ok {
		return def
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return def
	}
	return b
}

func envDuration(env string, def time.Duration) time.Duration {
	v, ok := os.LookupEnv(env)
	if !ok {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return def
	}
	return d
}

// newLogger logs JSON when stderr is not a terminal, text otherwise.
func newLogger(stderr io.Writer, level, format string) (*logrus.Logger, error) {
	log := logrus.New()
	log.SetOutput(stderr)
	lvl, err := logrus.ParseLevel(level)
	if err != nil {
		return nil, fmt.Errorf("--log-level: %w (use debug, info, warn or error)", err)
	}
	log.SetLevel(lvl)
	switch format {
	case "json":
		log.SetFormatter(&logrus.JSONFormatter{})
	case "text":
		log.SetFormatter(&logrus.TextFormatter{FullTimestamp: true})
	case "", "auto":
		if f, ok := stderr.(*os.File); ok && isTerminal(f) {
			log.SetFormatter(&logrus.TextFormatter{FullTimestamp: true})
		} else {
			log.SetFormatter(&logrus.JSONFormatter{})
		}
	default:
		return nil, fmt.Errorf("--log-format must be auto, json or text, got %q", format)
	}
	return log, nil
}

func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// withEnv appends the environment variable that sets a flag to its help.
func withEnv(help, env string) string { return help + " (env " + env + ")" }

var dsnPasswordRE = regexp.MustCompile(`(password=)\S+`)

// redactURL hides the password of a database URL or key=value DSN for logs.
func redactURL(u string) string {
	u = dsnPasswordRE.ReplaceAllString(u, "${1}xxxxx")
	at := strings.LastIndex(u, "@")
	scheme := strings.Index(u, "://")
	if at < 0 || scheme < 0 || at < scheme {
		return u
	}
	cred := u[scheme+3 : at]
	if user, _, ok := strings.Cut(cred, ":"); ok {
		return u[:scheme+3] + user + ":xxxxx" + u[at:]
	}
	return u
}
