// Command sparkpack-chaos runs sparkpack's chaos suite (package
// internal/chaos): a scratch PostgreSQL, the Mesos emulator and several
// `sparkpack serve` instances, faulted scenario by scenario while jobs
// are submitted. It prints each scenario's counts (lost, doubled, leaked,
// 5xx for client errors, 503 without Retry-After, unauthorised, unwanted
// failovers) and failover times, then a Markdown table, and exits 1 on any
// breach. scripts/chaos.sh builds and runs it; it is a test tool, not part
// of the product binary.
//
//	sparkpack-chaos --bin bin/sparkpack [--instances 3] [--kills 19] [--split-brains 3] ...
//	sparkpack-chaos --bin bin/sparkpack --power [--power-new-ids] [--power-kills 12] ...
//	sparkpack-chaos --bin bin/sparkpack --preemption mdf [--preempt-kills 8] ...
//	sparkpack-chaos --bin bin/sparkpack --reserve-mode offers ...
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/sparkpack/sparkpack/internal/chaos"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	code, err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sparkpack-chaos:", err)
	}
	os.Exit(code)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) (int, error) {
	fs := flag.NewFlagSet("sparkpack-chaos", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c chaos.Config
	bin := fs.String("bin", "bin/sparkpack", "the sparkpack binary to run")
	root := fs.String("root", ".", "the repository (for scripts/scratch-pg.sh)")
	dir := fs.String("dir", "", "where the logs and the database go (default: a new temporary directory, kept)")
	n := fs.Int("instances", 3, "sparkpack instances sharing the database")
	timeScale := fs.Float64("time-scale", 0.05, "the emulator's wall-clock seconds per simulated second")
	fs.IntVar(&c.Kills, "kills", 19, "kill -9 of the leader (every other one during the new leader's recovery)")
	fs.IntVar(&c.SplitBrains, "split-brains", 3, "SIGSTOP of the leader until another leads, then SIGCONT")
	fs.IntVar(&c.Stalls, "stalls", 5, "2 s stalls of the leader's renewals in the database and 1 s pauses of its process (each); none may depose it")
	fs.IntVar(&c.DBOutages, "db-outages", 2, "PostgreSQL stopped and started again, and as many postmaster kills")
	fs.IntVar(&c.Hostile, "hostile", 330, "hostile requests")
	fs.DurationVar(&c.MaxFailover, "max-failover", 5*time.Second, "failover target: a slower failover is a breach")
	fs.DurationVar(&c.Settle, "settle", 3*time.Minute, "longest wait for the jobs to end after a scenario")
	fs.DurationVar(&c.SubmitEvery, "submit-every", 250*time.Millisecond, "pace of the job load")
	fs.Float64Var(&c.JobSeconds, "job-seconds", 20, "simulated run time of each job")
	fs.BoolVar(&c.Power.On, "power", false, "run the stack with power management (the emulator's power API): idle agents are powered off and on again for jobs, in every scenario")
	fs.BoolVar(&c.Power.NewIDs, "power-new-ids", false, "with --power: agents lose their work dir over a power cycle and come back under new agent ids (mesos-sim --agents-lose-work-dir)")
	fs.IntVar(&c.PowerKills, "power-kills", 12, "with --power: kill -9 of the leader while an agent is draining, powering off or booting (the load comes in waves)")
	fs.DurationVar(&c.Power.OffAfter, "power-off-after", 3*time.Second, "with --power: serve's --power-off-after (wall time)")
	fs.StringVar(&c.Preemption, "preemption", "", "run the stack with serve's --preemption (mdf, mlf or srt; empty: off), in every scenario")
	fs.IntVar(&c.PreemptKills, "preempt-kills", 8, "with --preemption: kill -9 of the leader while a job's eviction is decided (long regular jobs fill the cluster, deadline jobs arrive)")
	fs.StringVar(&c.ReserveMode, "reserve-mode", "", "run the stack with serve's --reserve-mode (operator or offers; empty: serve's default, operator), in every scenario")
	if err := fs.Parse(args); err != nil {
		return 2, err
	}
	if c.ReserveMode != "" && c.ReserveMode != "operator" && c.ReserveMode != "offers" {
		return 2, fmt.Errorf("--reserve-mode %q: use operator or offers", c.ReserveMode)
	}
	absBin, err := filepath.Abs(*bin)
	if err != nil {
		return 2, err
	}
	absRoot, err := filepath.Abs(*root)
	if err != nil {
		return 2, err
	}
	if *dir == "" {
		if *dir, err = os.MkdirTemp("", "sparkpack-chaos-"); err != nil {
			return 2, err
		}
	}
	results, err := chaos.Run(ctx, absBin, absRoot, *dir, *n, *timeScale, c, stderr)
	fmt.Fprintf(stdout, "\nsparkpack-chaos %v (instances %d, logs in %s)\n\n", args, *n, *dir)
	chaos.Table(stdout, results)
	if err != nil {
		return 1, err
	}
	if b := chaos.Breaches(results); b > 0 {
		return 1, fmt.Errorf("%d breaches", b)
	}
	return 0, nil
}
