package chaos

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/google/uuid"
)

// Run starts a stack of n instances and runs every scenario of c against
// it in turn, then stops it. The results come in the scenarios' order.
func Run(ctx context.Context, bin, root, dir string, n int, timeScale float64, c Config, progress io.Writer) ([]Result, error) {
	logf := func(format string, args ...any) {
		if progress != nil {
			fmt.Fprintf(progress, "%s "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
		}
	}
	logf("starting PostgreSQL, the emulator and %d instances in %s", n, dir)
	s, err := StartStack(ctx, bin, root, dir, n, timeScale, Options{Power: c.Power, Preemption: c.Preemption, ReserveMode: c.ReserveMode}, logf)
	if s != nil {
		defer s.Stop()
	}
	if err != nil {
		return nil, err
	}
	if _, _, err := s.WaitLeader(ctx, nil, 60*time.Second); err != nil {
		return nil, err
	}
	if err := s.selfCheck(ctx); err != nil {
		return nil, err
	}
	c.TimeScale = timeScale
	var out []Result
	for _, sc := range Scenarios(c) {
		logf("scenario: %s", sc.Name)
		r := Result{Scenario: sc.Name}
		sc.Run(ctx, s, c, &r)
		logf("  %s", r.Summary())
		for _, n := range r.Notes {
			logf("    %s", n)
		}
		logf("    goroutines (go_goroutines of each instance: growth in one that was not restarted is a leak): %s", s.goroutines())
		out = append(out, r)
		if ctx.Err() != nil {
			return out, ctx.Err()
		}
	}
	return out, nil
}

// Summary is the result on one line.
func (r Result) Summary() string {
	return fmt.Sprintf("jobs %d (503s met %d, hostile requests %d), lost %d, not finished %d, doubled %d, leaked %d, 5xx for client errors %d, 503 without Retry-After %d, unauthorised %d, unwanted failovers %d, failovers %s (over target %d), power left inconsistent %d",
		r.Jobs, r.Unavailable, r.Hostile, r.Lost, r.NotFinished, r.Doubled, r.Leaked, r.ClientError5xx, r.NoRetryAfter, r.Unauthorised, r.UnwantedFailovers, FailoverRange(r.Failovers), r.SlowFailovers, r.PowerLeft)
}

// FailoverRange is "n: min-max (median m)" of the failover times.
func FailoverRange(d []time.Duration) string {
	if len(d) == 0 {
		return "-"
	}
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	f := func(x time.Duration) string { return fmt.Sprintf("%.1f", x.Seconds()) }
	return fmt.Sprintf("%d: %s-%s s (median %s)", len(s), f(s[0]), f(s[len(s)-1]), f(s[len(s)/2]))
}

// Table writes the results as a Markdown table.
func Table(w io.Writer, results []Result) {
	tw := tabwriter.NewWriter(w, 0, 0, 1, ' ', 0)
	fmt.Fprintln(tw, "| scenario\t| jobs\t| 503s met\t| hostile requests\t| lost\t| not finished\t| doubled\t| leaked\t| 5xx for client errors\t| 503 without Retry-After\t| unauthorised\t| unwanted failovers\t| failovers\t| power left\t| breaches\t|")
	fmt.Fprintln(tw, "| ---\t| ---\t| ---\t| ---\t| ---\t| ---\t| ---\t| ---\t| ---\t| ---\t| ---\t| ---\t| ---\t| ---\t| ---\t|")
	for _, r := range results {
		fmt.Fprintf(tw, "| %s\t| %d\t| %d\t| %d\t| %d\t| %d\t| %d\t| %d\t| %d\t| %d\t| %d\t| %d\t| %s\t| %d\t| %d\t|\n", r.Scenario, r.Jobs, r.Unavailable, r.Hostile, r.Lost, r.NotFinished, r.Doubled, r.Leaked,
			r.ClientError5xx, r.NoRetryAfter, r.Unauthorised, r.UnwantedFailovers, strings.ReplaceAll(FailoverRange(r.Failovers), "|", "/"), r.PowerLeft, r.Breaches())
	}
	tw.Flush()
}

// Breaches adds up the breaches of all results.
func Breaches(results []Result) int {
	n := 0
	for _, r := range results {
		n += r.Breaches()
	}
	return n
}

// selfCheck shows that the checks see what they look for: a running job's
// reservations, quota and tasks are leftovers while it runs, and its
// launches are counted. A check that sees nothing could never fail.
func (s *Stack) selfCheck(ctx context.Context) error {
	id := uuid.NewString()
	req, _ := http.NewRequest(http.MethodPost, s.Live(0).API+"/api/v1/jobs", bytes.NewReader(jobBody(id, 600)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+TokenChaos)
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("self-check: submit: %w", err)
	}
	resp.Body.Close()
	deadline := time.Now().Add(60 * time.Second)
	var seen []string
	for time.Now().Before(deadline) && ctx.Err() == nil {
		seen = s.leftovers()
		var launches map[string]int
		_ = getJSON(s.EmuURL+"/sim/launches", "", &launches)
		if len(launches) > 0 && strings.Contains(strings.Join(seen, " "), "reservation") && strings.Contains(strings.Join(seen, " "), "task") {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	del, _ := http.NewRequest(http.MethodDelete, s.Live(0).API+"/api/v1/jobs/"+id, nil)
	del.Header.Set("Authorization", "Bearer "+TokenChaos)
	if resp, err := client.Do(del); err == nil {
		resp.Body.Close()
	}
	if !strings.Contains(strings.Join(seen, " "), "reservation") || !strings.Contains(strings.Join(seen, " "), "task") {
		return fmt.Errorf("self-check: the leak check never saw the reservations and tasks of a running job (saw %q): it could not find a leak", seen)
	}
	var r Result
	s.Check(ctx, &r, []string{id}, nil, time.Minute, s.seen)
	if r.Lost == 0 && r.NotFinished != 1 {
		return fmt.Errorf("self-check: the job cancelled while running was not counted as not finished: %s %v", r.Summary(), r.Notes)
	}
	r.NotFinished = 0 // it was cancelled
	if r.Breaches() > 0 {
		return fmt.Errorf("self-check: a job cancelled while running: %s %v", r.Summary(), r.Notes)
	}
	return nil
}

// goroutines is each running instance's go_goroutines (its /metrics), with
// its process id (a new one: it was restarted).
func (s *Stack) goroutines() string {
	var out []string
	for _, in := range s.Instances {
		in.mu.Lock()
		cmd := in.cmd
		in.mu.Unlock()
		if cmd == nil || !in.Running() {
			out = append(out, in.ID+" down")
			continue
		}
		n := "?"
		req, _ := http.NewRequest(http.MethodGet, in.API+"/metrics", nil)
		req.Header.Set("Authorization", "Bearer "+TokenChaos)
		if resp, err := quick.Do(req); err == nil {
			b, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
			resp.Body.Close()
			for _, line := range strings.Split(string(b), "\n") {
				if v, ok := strings.CutPrefix(line, "go_goroutines "); ok {
					n = v
				}
			}
		}
		out = append(out, fmt.Sprintf("%s (pid %d) %s", in.ID, cmd.Process.Pid, n))
	}
	return strings.Join(out, ", ")
}
