package main

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"text/tabwriter"
	"time"

	"github.com/sparkpack/sparkpack/api"
	"github.com/sparkpack/sparkpack/warmlive"
)

// `sparkpack forecast`: GET /api/v1/forecast as a table (the forecast of
// arrivals per step with the actual arrivals behind now, and the warm
// pool's last decision).

func runForecast(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	v, fs := newViewFlags("forecast", "wide adds the cpus, memory and deadline bands and every agent's reason", stderr)
	horizon := newSpanFlag(api.DefaultForecastHorizon)
	fs.Var(horizon, "horizon", "how far ahead to forecast: a `duration` up to 7d (the same span behind is shown with the actual arrivals)")
	step := newSpanFlag(api.DefaultForecastStep)
	fs.Var(step, "step", "the width of a row: a `duration` such as 15m or 1h")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: sparkpack forecast [--horizon 6h] [--step 15m] [flags]   (arrivals forecast from the job history, and which agents the warm pool keeps on)")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	q := url.Values{"horizon": {horizon.String()}, "step": {step.String()}}
	return v.run(ctx, stderr, "/api/v1/forecast?"+q.Encode(), "forecast", func(x any) error {
		f := x.(*warmlive.View)
		switch *v.out {
		case outJSON, outYAML:
			return writeStructured(stdout, *v.out, f)
		case outName:
			return fmt.Errorf("-o name lists ids; the forecast has none (use table, wide, json or yaml)")
		}
		printForecast(stdout, f, *v.out == outWide)
		return nil
	}, func() any { return new(warmlive.View) })
}

func printForecast(w io.Writer, f *warmlive.View, wide bool) {
	m := f.Model
	if m.OK {
		fmt.Fprintf(w, "forecast: %d jobs in the history (profile by %s), %.1f/h on average, %.1f/h lately, %.0f%% with a deadline\n",
			m.Jobs, m.Level, m.MeanPerHour, m.RecentPerHour, 100*m.DeadlineShare)
	} else {
		// Without a model the bands are zeros that forecast nothing:
		// shown as "-", next to the actual arrivals.
		fmt.Fprintf(w, "no forecast: %s (it is learned from the submitted jobs' history; only the actual arrivals are shown)\n", m.Reason)
	}
	band := func(v float64) string {
		if !m.OK {
			return "-"
		}
		return fmt.Sprintf("%g", v)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	if wide {
		fmt.Fprintln(tw, "FROM\tJOBS P10\tP50\tP90\tCPUS P50\tP90\tMEM GB P50\tDEADLINE P50\tACTUAL\tACTUAL CPUS")
	} else {
		fmt.Fprintln(tw, "FROM\tJOBS P10\tP50\tP90\tACTUAL")
	}
	for _, s := range f.Steps {
		actual, actualCPUs := "", ""
		if s.Actual != nil {
			actual, actualCPUs = fmt.Sprint(s.Actual.Jobs), fmt.Sprintf("%g", round2(s.Actual.CPUs))
			if s.To.After(f.At) {
				// the current step: not comparable with its forecast yet
				actual += " so far"
			}
		}
		from := s.From.Local().Format(cliTime)
		if wide {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", from, band(s.Jobs.P10), band(s.Jobs.P50), band(s.Jobs.P90), band(round2(s.CPUs.P50)), band(round2(s.CPUs.P90)),
				band(round2(s.MemMB.P50/1024)), band(round2(s.DeadlineJobs.P50)), actual, actualCPUs)
		} else {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", from, band(s.Jobs.P10), band(s.Jobs.P50), band(s.Jobs.P90), actual)
		}
	}
	tw.Flush()
	p := f.WarmPool
	if p == nil {
		fmt.Fprintln(w, "\nwarm pool: power management is off (serve --power-off-after)")
		return
	}
	fmt.Fprintf(w, "\nwarm pool (decided %s, boot time %s, a miss at $%g, floor %g cpus): ", p.At.Local().Format(cliTime),
		shortDur(time.Duration(p.Config.BootSeconds*float64(time.Second))), p.Config.MissCostUSD, p.Config.MinWarmCPUs)
	switch {
	case p.Fallback != "":
		fmt.Fprintf(w, "%s; idle agents power off after their idle timeout\n", p.Fallback)
	default:
		fmt.Fprintln(w, p.Reason)
	}
	if p.Error != "" {
		fmt.Fprintf(w, "last error: %s\n", p.Error)
	}
	fmt.Fprintf(w, "%g warm cpus, %d agents powered on ahead this term\n", round2(p.WarmCPUs), p.PoweredOnAhead)
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "AGENT\tDECISION\tWHY")
	show := func(what string, ds []warmlive.DecisionView) {
		for _, d := range ds {
			name := d.AgentID
			if d.Name != "" && d.Name != d.AgentID {
				name = d.Name + " (" + d.AgentID + ")"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\n", name, what, d.Reason)
		}
	}
	show("keep on", p.KeepOn)
	show("power on now", p.PowerOnNow)
	if wide {
		show("may power off", p.MayPowerOff)
	}
	tw.Flush()
}
