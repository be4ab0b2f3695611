package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/sparkpack/sparkpack/store"
)

// runPrune is `sparkpack prune`: the retention of the job history. It
// deletes, a batch at a time, the jobs that ended before --older-than ago
// (with their events, placements and driver records); jobs that wait or
// run, and ended jobs that still hold a reservation, are never touched. Run
// it from cron or a systemd timer (docs/deploy-cluster.md).
func runPrune(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("prune", stderr)
	dbURL := fs.String("database-url", envDefault("SPARKPACK_DATABASE_URL", ""), withEnv("PostgreSQL URL of sparkpack's database (required)", "SPARKPACK_DATABASE_URL"))
	olderThan := fs.String("older-than", "", "delete jobs that ended longer ago than this: 90d, 36h, 30m (required)")
	batch := fs.Int("batch", 1000, "jobs deleted per transaction (1-100000)")
	dryRun := fs.Bool("dry-run", false, "only count the jobs that would be deleted")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: sparkpack prune --older-than 90d [flags]   (deletes the history of jobs that ended before then)")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *dbURL == "" {
		return fmt.Errorf("--database-url is required (or SPARKPACK_DATABASE_URL)")
	}
	age, err := parseAge(*olderThan)
	if err != nil {
		return fmt.Errorf("--older-than: %w", err)
	}
	if *batch < 1 || *batch > 100000 {
		return fmt.Errorf("--batch %d: want 1 to 100000", *batch)
	}
	st, err := store.Open(ctx, *dbURL)
	if err != nil {
		return fmt.Errorf("open the database: %w (check --database-url)", err)
	}
	defer st.Close()
	cut := time.Now().Add(-age)
	total, err := st.Prunable(ctx, cut)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "prune: %d jobs ended before %s\n", total, cut.Local().Format(cliTime))
	if *dryRun || total == 0 {
		return nil
	}
	done := 0
	for {
		n, err := st.PruneEnded(ctx, cut, *batch)
		if err != nil {
			return fmt.Errorf("after deleting %d jobs: %w (run it again: it goes on where it stopped)", done, err)
		}
		done += n
		if n > 0 {
			fmt.Fprintf(stdout, "prune: deleted %d of %d\n", done, total)
		}
		if n < *batch {
			return nil
		}
	}
}

// parseAge reads a duration that may also be given in days ("90d").
func parseAge(s string) (time.Duration, error) {
	if s == "" {
		return 0, fmt.Errorf("required: how old an ended job must be to go, e.g. 90d")
	}
	var d time.Duration
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil || n < 0 || n > 100000 {
			return 0, fmt.Errorf("%q: want a whole number of days such as 90d, or a duration such as 36h", s)
		}
		d = time.Duration(n) * 24 * time.Hour
	} else {
		var err error
		if d, err = time.ParseDuration(s); err != nil {
			return 0, fmt.Errorf("%q: want a number of days such as 90d, or a duration such as 36h", s)
		}
	}
	if d < time.Minute {
		return 0, fmt.Errorf("%q: want at least 1m (jobs that just ended are still being looked at)", s)
	}
	return d, nil
}
