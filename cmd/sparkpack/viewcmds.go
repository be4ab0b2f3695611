package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/sparkpack/sparkpack/api"
	"github.com/sparkpack/sparkpack/internal/plural"
	"github.com/sparkpack/sparkpack/scheduler"
)

// The read-only views of a running sparkpack, as the dashboard shows them:
// `sparkpack cluster`, `sparkpack queue` and `sparkpack cost`.

// viewFlags are the flags the three view commands share.
type viewFlags struct {
	clientFlags
	out      *outputFormat
	watch    *bool
	interval *time.Duration
}

func newViewFlags(name, what string, stderr io.Writer) (*viewFlags, *flag.FlagSet) {
	v := &viewFlags{}
	fs := newFlagSet(name, stderr)
	v.register(fs)
	v.out = registerOutput(fs, what)
	v.watch = fs.Bool("watch", false, "print the view again every --interval until Ctrl-C (also -w)")
	fs.BoolVar(v.watch, "w", false, "the same as --watch")
	v.interval = fs.Duration("interval", 5*time.Second, "how often --watch asks the server")
	return v, fs
}

// run fetches path into a fresh value and shows it, once or (--watch) again
// and again.
func (v *viewFlags) run(ctx context.Context, stderr io.Writer, path, what string, show func(any) error, fresh func() any) error {
	if *v.interval < 100*time.Millisecond {
		return fmt.Errorf("--interval %s: want at least 100ms", *v.interval)
	}
	cl, err := v.client()
	if err != nil {
		return err
	}
	cl.retries = 2
	once := func(ctx context.Context) error {
		x := fresh()
		if _, err := cl.do(ctx, http.MethodGet, path, nil, x); err != nil {
			var he *httpError
			if errors.As(err, &he) && he.Status == http.StatusNotFound && !he.foreign {
				return fmt.Errorf("this sparkpack has no %s view: it is served when serve runs with --mesos-master (as in the demo)", what)
			}
			return explain(err, what)
		}
		return show(x)
	}
	if !*v.watch {
		return once(ctx)
	}
	return watchLoop(ctx, *v.interval, stderr, once)
}

func runCluster(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	v, fs := newViewFlags("cluster", "wide adds attributes and what each agent holds", stderr)
	state := fs.String("state", "", "only agents in this state: idle, active or off")
	limit := fs.Int("limit", 0, "at most this many agents (default: the server's page, 1000)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: sparkpack cluster [flags]   (the agents: state, power, free resources, price, what runs there)")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *limit < 0 {
		return fmt.Errorf("--limit %d: want at least 1 (or leave it out for the server's page)", *limit)
	}
	q := url.Values{}
	if *state != "" {
		q.Set("state", *state)
	}
	if *limit > 0 {
		q.Set("limit", fmt.Sprint(*limit))
	}
	path := "/api/v1/cluster"
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	return v.run(ctx, stderr, path, "cluster", func(x any) error {
		c := x.(*api.ClusterView)
		switch *v.out {
		case outJSON, outYAML:
			return writeStructured(stdout, *v.out, c)
		case outName:
			for _, a := range c.Agents {
				fmt.Fprintln(stdout, a.ID)
			}
			return nil
		}
		printCluster(stdout, c, *v.out == outWide)
		return nil
	}, func() any { return new(api.ClusterView) })
}

func printCluster(w io.Writer, c *api.ClusterView, wide bool) {
	if s := c.Summary; s != nil {
		fmt.Fprintf(w, "%s: %s free of %s, %.0f of %.0f GiB free; $%.2f/h for the agents that are on\n",
			plural.N(s.Agents, "agent"), plural.G(round2(s.FreeCPUs), "cpu"), plural.G(round2(s.CPUs), "cpu"),
			s.FreeMemMB/1024, s.MemMB/1024, s.PricePerHour)
		fmt.Fprintf(w, "by state: %s", countsText(s.ByState))
		if len(s.ByPower) > 0 {
			fmt.Fprintf(w, "; power: %s", countsText(s.ByPower))
		}
		fmt.Fprintln(w)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	h := "HOST\tSTATE\tPOWER\tCPUS FREE\tMEM FREE\t$/H\tJOBS"
	if wide {
		h += "\tID\tTYPE\tLOCATION\tHOLDS"
	}
	fmt.Fprintln(tw, h)
	var powerErrs []string
	for _, a := range c.Agents {
		power := a.Power
		if power == "" {
			power = "-"
		} else if a.PowerSince != nil && power != "on" {
			// off, booting, draining: since when (on is the usual state)
			power += " " + shortDur(time.Since(*a.PowerSince))
		}
		if a.PowerError != "" {
			power += " (!)"
			powerErrs = append(powerErrs, fmt.Sprintf("%s: %s", agentName(a.Hostname, a.ID), a.PowerError))
		}
		jobs := map[string]bool{}
		var holds []string
		for _, r := range a.Reservations {
			jobs[r.JobID] = true
			holds = append(holds, fmt.Sprintf("%s:%s", shortID(r.JobID), plural.N(r.Executors, "executor")))
		}
		for _, d := range a.Drivers {
			jobs[d.JobID] = true
			holds = append(holds, shortID(d.JobID)+":driver")
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%g/%g\t%.0f/%.0f MiB\t%.2f\t%d", agentName(a.Hostname, a.ID), a.State, power,
			round2(a.FreeCPUs), a.CPUs, a.FreeMemMB, a.MemMB, a.PricePerHour, len(jobs))
		if wide {
			typ := a.InstanceType
			if typ == "" {
				typ = "-"
			}
			h := strings.Join(holds, " ")
			if h == "" {
				h = "-"
			}
			fmt.Fprintf(tw, "\t%s\t%s\t%s\t%s", a.ID, typ, a.Location, h)
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	for _, e := range powerErrs {
		fmt.Fprintf(w, "(!) power: %s\n", e)
	}
	if c.Next != "" {
		fmt.Fprintf(w, "(%d agents in all; this is the first page: --limit, or -o json for the cursor)\n", c.Total)
	}
}

func runQueue(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	v, fs := newViewFlags("queue", "wide adds the resource demand and slack", stderr)
	limit := fs.Int("limit", 0, "at most this many waiting jobs (default: the server's page, 100)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: sparkpack queue [flags]   (the waiting jobs in the order they will be tried, with why each waits)")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *limit < 0 {
		return fmt.Errorf("--limit %d: want at least 1 (or leave it out for the server's page)", *limit)
	}
	path := "/api/v1/queues"
	if *limit > 0 {
		path += "?limit=" + fmt.Sprint(*limit)
	}
	return v.run(ctx, stderr, path, "queues", func(x any) error {
		q := x.(*api.QueuesView)
		switch *v.out {
		case outJSON, outYAML:
			return writeStructured(stdout, *v.out, q)
		case outName:
			for _, j := range append(q.Deadline, q.Regular...) {
				fmt.Fprintln(stdout, j.ID)
			}
			return nil
		}
		printQueues(stdout, q, *v.out == outWide)
		return nil
	}, func() any { return new(api.QueuesView) })
}

// regularOrderText says how the regular queue is ordered (regularOrder).
func regularOrderText(order, withinTeam string) string {
	switch order {
	case "fifo":
		return "first submitted first"
	case "fair-share":
		if withinTeam == "fifo" {
			return "team by team in the fair share between teams, each team's first submitted first"
		}
		return "team by team in the fair share between teams, each team's largest demand first"
	case "demand":
		return "largest demand first"
	}
	return ""
}

// fairShareLine is the teams of a fair-share page in the order the pass
// offers them the room, and what that order means.
func fairShareLine(ts []scheduler.QueueTeam) string {
	parts := make([]string, 0, len(ts))
	for _, t := range ts {
		name := t.Team
		if name == "" {
			name = "(default)"
		}
		share := fmt.Sprintf("weighted share %.2f", t.Share)
		if t.BelowGuarantee {
			share = fmt.Sprintf("below its guarantee, %.2f of it held", t.Share)
		}
		parts = append(parts, fmt.Sprintf("%s (%s; %s)", name, share, plural.N(t.Jobs, "job")))
	}
	return "teams offered the room in this order, as they stand now: " + strings.Join(parts, ", ") +
		"\n(the order the next pass tries them until one starts: a start ranks its team again, and that team's later jobs may then go after other teams')"
}

func printQueues(w io.Writer, q *api.QueuesView, wide bool) {
	order := ""
	if o := regularOrderText(q.RegularOrder, q.WithinTeam); o != "" {
		order = " (" + o + ")"
	}
	fmt.Fprintf(w, "deadline queue: %s waiting (earliest deadline first); regular queue: %s waiting%s\n",
		plural.N(q.Totals.Deadline, "job"), plural.N(q.Totals.Regular, "job"), order)
	fair := q.RegularOrder == "fair-share"
	if fair && len(q.Teams) > 0 {
		fmt.Fprintln(w, fairShareLine(q.Teams))
	}
	if len(q.Deadline)+len(q.Regular) == 0 {
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	h := "QUEUE\t#\tID\tNAME\tEXECUTORS\tWAITING\tDEADLINE\tREASON"
	if fair {
		h = "QUEUE\t#\tID\tNAME\tTEAM\tEXECUTORS\tWAITING\tDEADLINE\tREASON"
	}
	if wide {
		h += "\tRD\tSLACK"
	}
	fmt.Fprintln(tw, h)
	now := time.Now()
	row := func(queue string, i int, j api.QueuedJobView) {
		name := j.Name
		if name == "" {
			name = "-"
		}
		dl := "-"
		if j.DeadlineAt != nil {
			dl = "in " + shortDur(j.DeadlineAt.Sub(now))
			if j.DeadlineAt.Before(now) {
				dl = "passed"
			}
			if j.AtRisk {
				dl += " (at risk)"
			}
		}
		reason := j.WaitingReason
		if !wide {
			reason = clip(reason, 70)
		}
		name = clip(name, 24)
		if fair {
			team := j.Team
			if team == "" {
				team = "-"
			}
			name += "\t" + clip(team, 16)
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%d×(%s, %d MiB)\t%s\t%s\t%s", queue, i+1, j.ID, name, j.Executors,
			plural.N(j.ExecutorCores, "cpu"), j.ExecutorMemoryMB, shortDur(now.Sub(j.SubmittedAt)), dl, reason)
		if wide {
			slack := "-"
			if j.SlackSeconds != nil {
				slack = shortDur(time.Duration(*j.SlackSeconds * float64(time.Second)))
			}
			fmt.Fprintf(tw, "\t%.4f\t%s", j.ResourceDemand, slack)
		}
		fmt.Fprintln(tw)
	}
	for i, j := range q.Deadline {
		row("deadline", i, j)
	}
	for i, j := range q.Regular {
		row("regular", i, j)
	}
	tw.Flush()
	if q.Next != "" {
		fmt.Fprintln(w, "(more waiting jobs: --limit, or -o json for the cursor)")
	}
}

func runCost(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	v, fs := newViewFlags("cost", "wide adds the last points of the cost series", stderr)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: sparkpack cost [flags]   (the cost meter: spent so far, the burn rate, and the bill when it is known)")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	return v.run(ctx, stderr, "/api/v1/cost", "cost", func(x any) error {
		c := x.(*api.CostView)
		switch *v.out {
		case outJSON, outYAML:
			return writeStructured(stdout, *v.out, c)
		case outName:
			return fmt.Errorf("-o name lists ids; the cost view has none (use table, wide, json or yaml)")
		}
		printCost(stdout, c, *v.out == outWide)
		return nil
	}, func() any { return new(api.CostView) })
}

func printCost(w io.Writer, c *api.CostView, wide bool) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "meter\t$%.4f\t(what the agents holding sparkpack's reservations or drivers cost while they did)\n", c.TotalUSD)
	if c.JobsUSD != nil && c.IdleUSD != nil {
		fmt.Fprintf(tw, "  jobs\t$%.4f\t(the jobs' costUSD summed: each job's share of the agents it held)\n", *c.JobsUSD)
		fmt.Fprintf(tw, "  idle\t$%.4f\t(what active agents cost beyond their jobs' shares; jobs + idle = meter)\n", *c.IdleUSD)
	}
	fmt.Fprintf(tw, "burn rate\t$%.4f/h\t(the agents active now)\n", c.BurnRateUSDPerHour)
	if b := c.Bill; b != nil {
		fmt.Fprintf(tw, "bill\t$%.4f\t(every agent while powered on, over %s)\n", b.TotalUSD, shortDur(time.Duration(b.Seconds*float64(time.Second))))
		fmt.Fprintf(tw, "always on\t$%.4f\t(the same cluster with every agent on)\n", b.AlwaysOnUSD)
		if b.AlwaysOnUSD > 0 {
			saved := b.AlwaysOnUSD - b.TotalUSD
			fmt.Fprintf(tw, "saved\t$%.4f\t(%.1f%% of always on)\n", saved, 100*saved/b.AlwaysOnUSD)
		}
	}
	tw.Flush()
	if wide && len(c.Series) > 0 {
		fmt.Fprintln(w, "\nrecent points:")
		tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		from := max(0, len(c.Series)-10)
		for _, p := range c.Series[from:] {
			fmt.Fprintf(tw, "  %s\t$%.4f\n", p.T.Local().Format(cliTime), p.TotalUSD)
		}
		tw.Flush()
	}
}

func countsText(m map[string]int) string {
	if len(m) == 0 {
		return "-"
	}
	parts := make([]string, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%d %s", m[k], k))
	}
	return strings.Join(parts, ", ")
}

func shortID(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

func round2(x float64) float64 { return float64(int64(x*100+0.5)) / 100 }
