package simulate

import (
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/sparkpack/sparkpack/scheduler"
	"github.com/sparkpack/sparkpack/teams"
)

// Teams in the simulator: every job gets a team from a mix (team=share,
// drawn with the seed, the same for every policy of a run), the core runs
// with the teams file (package teams: maximums, fair shares, guarantees),
// and the result reports each team's jobs, waiting, deadlines and cost.

// TeamShare is one team of a mix and its share of the jobs.
type TeamShare struct {
	Team  string
	Share float64
}

// ParseTeamMix reads "analytics=0.5,ml=0.3,etl=0.2": teams and their
// shares of the jobs (positive; they need not add up to 1, they are
// normalised). "-" names the default team (jobs without a team).
func ParseTeamMix(s string) ([]TeamShare, error) {
	var out []TeamShare
	seen := map[string]bool{}
	for _, part := range strings.Split(s, ",") {
		name, share, ok := strings.Cut(strings.TrimSpace(part), "=")
		f, err := strconv.ParseFloat(share, 64)
		if !ok || err != nil || !(f > 0) || math.IsInf(f, 0) {
			return nil, fmt.Errorf("%q: want team=share with a share > 0, e.g. analytics=0.5,ml=0.3,etl=0.2", part)
		}
		if name == "-" {
			name = ""
		} else if !teams.NameRE.MatchString(name) {
			return nil, fmt.Errorf("%q: a team name is letters, digits, '.', '_' and '-' (or - for jobs without a team)", name)
		}
		if seen[name] {
			return nil, fmt.Errorf("team %q is listed twice", name)
		}
		seen[name] = true
		out = append(out, TeamShare{Team: name, Share: f})
	}
	return out, nil
}

// assignTeams gives each job a team drawn from mix with a generator seeded
// with seed, in the jobs' order (their ids, as BuildWorkload made them).
func assignTeams(jobs []scheduler.Job, mix []TeamShare, seed uint64) {
	if len(mix) == 0 {
		return
	}
	total := 0.0
	for _, m := range mix {
		total += m.Share
	}
	rng := rand.New(rand.NewPCG(seed, 0x7ea35))
	for i := range jobs {
		x, t := rng.Float64()*total, mix[len(mix)-1].Team
		for _, m := range mix {
			if x < m.Share {
				t = m.Team
				break
			}
			x -= m.Share
		}
		jobs[i].Team = t
	}
}

// teamsHolder puts a teams configuration in force for a simulated core
// (nil: none).
func teamsHolder(c *teams.Config) *teams.Holder {
	if c == nil {
		return nil
	}
	h := &teams.Holder{}
	h.Set(c)
	return h
}

// TeamResult is one team's outcome in a run.
type TeamResult struct {
	Team           string  `json:"team"`
	Jobs           int     `json:"jobs"`
	Completed      int     `json:"completed"`
	Rejected       int     `json:"rejected"`
	DeadlineJobs   int     `json:"deadline_jobs"`
	DeadlineMissed int     `json:"deadline_missed"`
	DeadlineMetPct float64 `json:"deadline_met_pct"`
	WaitMeanS      float64 `json:"wait_mean_s"`
	WaitP95S       float64 `json:"wait_p95_s"`
	// CPUHours are its completed runs' executor cpu-hours; CostUSD the
	// run's agent cost (TotalCostUSD) split between teams by them.
	CPUHours float64 `json:"cpu_hours"`
	CostUSD  float64 `json:"cost_usd"`
}

// teamResults sums the run by team, in team order ("" first).
func teamResults(store *MemStore, info map[string]*jobInfo, totalUSD float64) []TeamResult {
	by := map[string]*TeamResult{}
	waits := map[string][]float64{}
	var names []string
	var cpuS float64
	for _, j := range store.Jobs() {
		tr := by[j.Team]
		if tr == nil {
			tr = &TeamResult{Team: j.Team}
			by[j.Team] = tr
			names = append(names, j.Team)
		}
		ji := info[j.ID]
		tr.Jobs++
		switch {
		case j.State == scheduler.Rejected:
			tr.Rejected++
		case ji.done:
			tr.Completed++
			waits[j.Team] = append(waits[j.Team], ji.start.Sub(ji.submit).Seconds())
			c := ji.end.Sub(ji.start).Seconds() * float64(ji.profile.Executors*ji.profile.ExecutorCores)
			tr.CPUHours += c / 3600
			cpuS += c
		}
		if ji.deadline != nil {
			tr.DeadlineJobs++
			if !ji.done || ji.end.After(*ji.deadline) {
				tr.DeadlineMissed++
			}
		}
	}
	if len(names) == 1 && names[0] == "" {
		return nil // no teams
	}
	sort.Strings(names)
	out := make([]TeamResult, 0, len(names))
	for _, n := range names {
		tr := by[n]
		if tr.DeadlineJobs > 0 {
			tr.DeadlineMetPct = 100 * float64(tr.DeadlineJobs-tr.DeadlineMissed) / float64(tr.DeadlineJobs)
		}
		tr.WaitMeanS, tr.WaitP95S = meanP(waits[n], 95)
		if cpuS > 0 {
			tr.CostUSD = totalUSD * tr.CPUHours * 3600 / cpuS
		}
		out = append(out, *tr)
	}
	return out
}

// writeTeams prints each policy's per-team outcome of one run; label
// names the run (", hour 0, seed 2") when there are several, and under
// power management (powerOff) the header says the costs are the meter's.
func writeTeams(w io.Writer, rs []Result, label string, powerOff bool) error {
	any := false
	for _, r := range rs {
		any = any || len(r.Teams) > 0
	}
	if !any {
		return nil
	}
	meter := ""
	if powerOff {
		meter = "; the core's meter, not the bill"
	}
	fmt.Fprintf(w, "\nBy team%s (cost: the run's agent cost split by the teams' executor cpu-hours%s):\n", label, meter)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "policy\tteam\tjobs\tdone\trejected\tdeadlines met\twait mean s\twait p95 s\tcpu-h\tcost $")
	for _, r := range rs {
		for _, t := range r.Teams {
			met := "-"
			if t.DeadlineJobs > 0 {
				met = fmt.Sprintf("%d/%d (%.0f%%)", t.DeadlineJobs-t.DeadlineMissed, t.DeadlineJobs, t.DeadlineMetPct)
			}
			fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%s\t%.1f\t%.1f\t%.2f\t%.2f\n", displayName(r), teams.Label(t.Team),
				t.Jobs, t.Completed, t.Rejected, met, t.WaitMeanS, t.WaitP95S, t.CPUHours, t.CostUSD)
		}
	}
	return tw.Flush()
}
