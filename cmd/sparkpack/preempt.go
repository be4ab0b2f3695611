package main

import (
	"flag"
	"fmt"
	"math"
	"os"
	"strconv"
	"time"

	"github.com/sparkpack/sparkpack/scheduler"
)

// preemptConfig holds the --preemption flags of serve (docs/preemption.md).
type preemptConfig struct {
	policy   string
	protect  time.Duration
	maxShare float64
	max      int
}

// preemptFlags adds the --preemption and --preempt-* flags.
func preemptFlags(fs *flag.FlagSet, c *preemptConfig) {
	fs.StringVar(&c.policy, "preemption", envDefault("SPARKPACK_PREEMPTION", string(scheduler.PreemptNone)), withEnv("evict running jobs for a deadline job that would miss its deadline waiting: none (the default), mdf (furthest deadline first), mlf (most laxity first) or srt (longest remaining time first); regular jobs go first, evicted jobs run again from scratch", "SPARKPACK_PREEMPTION"))
	fs.DurationVar(&c.protect, "preempt-protect", envDuration("SPARKPACK_PREEMPT_PROTECT", scheduler.DefaultPreemptProtect), withEnv("never evict a job expected to end within this time (0: the default)", "SPARKPACK_PREEMPT_PROTECT"))
	fs.Float64Var(&c.maxShare, "preempt-max-share", envFloat("SPARKPACK_PREEMPT_MAX_SHARE", scheduler.DefaultPreemptMaxShare), withEnv("most of the running jobs' cpus evicted in any minute, as a share in (0, 1]", "SPARKPACK_PREEMPT_MAX_SHARE"))
	fs.IntVar(&c.max, "max-preemptions", envInt("SPARKPACK_MAX_PREEMPTIONS", scheduler.DefaultMaxPreemptions), withEnv("a job evicted this many times is not evicted again", "SPARKPACK_MAX_PREEMPTIONS"))
}

func envInt(env string, def int) int {
	if v := os.Getenv(env); v != "" {
		if n, err := strconv.Atoi(v); err == nil {
			return n
		}
	}
	return def
}

func (c *preemptConfig) validate() error {
	pol, err := scheduler.ParsePreemption(c.policy)
	if err != nil {
		return fmt.Errorf("--preemption: %w", err)
	}
	c.policy = string(pol)
	// Zero values (a config built in code) take the core's defaults.
	if c.protect < 0 {
		return fmt.Errorf("--preempt-protect %s: want a duration >= 0, e.g. 60s (0: the default, %s)", c.protect, scheduler.DefaultPreemptProtect)
	}
	if c.maxShare < 0 || c.maxShare > 1 || math.IsNaN(c.maxShare) {
		return fmt.Errorf("--preempt-max-share %g: want a share in (0, 1], e.g. 0.5", c.maxShare)
	}
	if c.max < 0 {
		return fmt.Errorf("--max-preemptions %d: want at least 1 (use --preemption none to never evict)", c.max)
	}
	return nil
}
