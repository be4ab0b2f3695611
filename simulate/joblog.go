package simulate

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sparkpack/sparkpack/workload"
)

// JobRecord is one job of a run as `simulate --job-log` writes it: what
// it asked, what it found when it arrived, where it ran and how it ended.
// It is how docs/power.md's "Light hours at 50 jobs an hour" finds where
// the misses come from, and how `scripts/compare-learning.sh diagnose`
// traces dap against fifo-consolidate job by job (docs/simulation.md).
//
// Times ending in S are seconds; SubmitS, StartS, EndS and DeadlineS are
// from the window's start.
type JobRecord struct {
	ID string `json:"id"`
	// Kind is its mix kind, else its App (its application type);
	// Executors its executor count and CPUs their cpus.
	Kind      string `json:"kind"`
	App       string `json:"app"`
	Executors int    `json:"executors"`
	CPUs      int    `json:"cpus"`
	// SubmitS is the arrival (its notBefore, with --not-before-lead);
	// StartS its (last) start, 0 when it never started; WaitS from the
	// arrival to the start. EndS its end and RunS its run, both 0 when it
	// never finished.
	SubmitS float64 `json:"submit_s"`
	StartS  float64 `json:"start_s"`
	EndS    float64 `json:"end_s"`
	WaitS   float64 `json:"wait_s"`
	RunS    float64 `json:"run_s"`
	// Deadline tells whether it has one, DeadlineS when; SlackS is then
	// its deadline minus its arrival minus its profiled run time, and
	// Missed whether it did not end by it (rejected and unfinished jobs
	// included). Without a deadline DeadlineS and SlackS are nil: null
	// in JSON, empty in CSV (they were 0 in JSON until 2026-11-27, which
	// read as a deadline at the window's start).
	Deadline  bool     `json:"deadline"`
	DeadlineS *float64 `json:"deadline_s"`
	SlackS    *float64 `json:"slack_s"`
	Missed    bool     `json:"missed"`
	Done      bool     `json:"done"`
	// ProfiledS is the model's run time of its profile (the reference);
	// EstimateS the estimate the scheduler was given; Noise the factor
	// --run-noise drew for its runs (1 without).
	ProfiledS float64 `json:"profiled_s"`
	EstimateS float64 `json:"estimate_s"`
	Noise     float64 `json:"noise"`
	// FreeCPUs are the free cpus of the agents on (registered with the
	// cluster) at its arrival, before any pass at that instant, and
	// MaxAgentFreeCPUs the most free on one of them.
	FreeCPUs         float64 `json:"free_cpus_at_arrival"`
	MaxAgentFreeCPUs float64 `json:"max_agent_free_cpus"`
	// Shares are its executors on each agent of its (last) start, and
	// Agents those agents' ids, in the same order.
	Shares []JobShare `json:"shares,omitempty"`
	Agents []string   `json:"agents,omitempty"`
}

// JobShare is a job's share of one agent in the job log: its executors
// there, the agent's cpus and the cpus in use on it once the job is there
// (its own included). Its keys are snake_case as every other key of the
// log (they were workload.AgentShare's Go names, Executors, CPUs and
// UsedCPUs, until 2026-11-27; docs/simulation.md).
type JobShare struct {
	Executors     int     `json:"executors"`
	AgentCPUs     float64 `json:"agent_cpus"`
	AgentUsedCPUs float64 `json:"agent_used_cpus"`
}

// jobShares are the log's shares of a placement's.
func jobShares(shares []workload.AgentShare) []JobShare {
	var out []JobShare
	for _, s := range shares {
		out = append(out, JobShare{Executors: s.Executors, AgentCPUs: s.CPUs, AgentUsedCPUs: s.UsedCPUs})
	}
	return out
}

// arrivalFree is the free room of the agents on at an arrival.
type arrivalFree struct{ total, max float64 }

// freeAtArrival sums the free cpus of the agents on (those in the
// cluster's snapshot, standby agents excluded).
func freeAtArrival(c *Cluster) arrivalFree {
	snap, err := c.Snapshot(context.Background())
	if err != nil {
		return arrivalFree{}
	}
	var f arrivalFree
	for _, a := range snap.Agents {
		f.total += a.FreeCPUs
		f.max = max(f.max, a.FreeCPUs)
	}
	return f
}

// jobPlacement is where a job ran: its shares and their agents.
type jobPlacement struct {
	shares []workload.AgentShare
	agents []string
}

// jobKind is a job's kind in the log: its mix kind, or for jobs of no
// kind (the thesis mix, the trace) its application type, the signature
// they share (as Habit and the estimator read it).
func jobKind(p workload.Profile) string {
	if p.Kind != "" {
		return p.Kind
	}
	return string(p.App)
}

// jobRecords are the records of a run's jobs, in the store's order.
func jobRecords(store *MemStore, info map[string]*jobInfo, free map[string]arrivalFree, placed map[string]jobPlacement, start time.Time, model workload.Model) []JobRecord {
	var out []JobRecord
	for _, j := range store.Jobs() {
		ji := info[j.ID]
		r := JobRecord{ID: j.ID, Kind: jobKind(ji.profile), App: string(ji.profile.App), Executors: ji.profile.Executors,
			CPUs: ji.profile.Executors * ji.profile.ExecutorCores, SubmitS: ji.submit.Sub(start).Seconds(), Done: ji.done,
			ProfiledS: model.Reference(ji.profile).Seconds(), EstimateS: j.EstimatedDurationSeconds, Noise: ji.noise,
			FreeCPUs: free[j.ID].total, MaxAgentFreeCPUs: free[j.ID].max, Shares: jobShares(placed[j.ID].shares), Agents: placed[j.ID].agents}
		if !ji.start.IsZero() {
			r.StartS, r.WaitS = ji.start.Sub(start).Seconds(), ji.start.Sub(ji.submit).Seconds()
		}
		if ji.done {
			r.EndS, r.RunS = ji.end.Sub(start).Seconds(), ji.end.Sub(ji.start).Seconds()
		}
		if ji.deadline != nil {
			r.Deadline = true
			deadline, slack := ji.deadline.Sub(start).Seconds(), ji.deadline.Sub(ji.submit).Seconds()-r.ProfiledS
			r.DeadlineS, r.SlackS = &deadline, &slack
			r.Missed = !ji.done || ji.end.After(*ji.deadline)
		}
		out = append(out, r)
	}
	return out
}

// arrivalsInBootBefore counts, for each record, the other arrivals of the
// run in the boot time before its own (strictly after arrival - boot, not
// after it).
func arrivalsInBootBefore(recs []JobRecord, boot time.Duration) []int {
	subs := make([]float64, len(recs))
	for i, r := range recs {
		subs[i] = r.SubmitS
	}
	slices.Sort(subs)
	out := make([]int, len(recs))
	for i, r := range recs {
		// Arrivals in (submit - boot, submit], less the job itself.
		lo, _ := slices.BinarySearch(subs, r.SubmitS-boot.Seconds())
		for lo < len(subs) && subs[lo] <= r.SubmitS-boot.Seconds() {
			lo++
		}
		hi, _ := slices.BinarySearch(subs, r.SubmitS)
		for hi < len(subs) && subs[hi] <= r.SubmitS {
			hi++
		}
		// A zero boot's window is empty and does not hold the job itself.
		out[i] = max(0, hi-lo-1)
	}
	return out
}

// JobLogFormat is how --job-log writes: CSV, or JSON lines when the file
// ends in .jsonl.
type JobLogFormat string

const (
	JobLogCSV   JobLogFormat = "csv"
	JobLogJSONL JobLogFormat = "jsonl"
)

// jobLogFormatOf is the format of a --job-log file, by its extension.
func jobLogFormatOf(name string) JobLogFormat {
	if strings.HasSuffix(strings.ToLower(name), ".jsonl") {
		return JobLogJSONL
	}
	return JobLogCSV
}

// jobLogHeader is the CSV header of --job-log. Shares are in the JSON
// lines only; agents is the agents' ids separated by spaces.
var jobLogHeader = []string{"window", "seed", "policy", "job", "submit_s", "wait_s", "run_s", "cpus", "deadline", "slack_s", "missed",
	"arrivals_in_boot_before", "free_cpus_at_arrival", "max_agent_free_cpus",
	"kind", "app", "executors", "start_s", "end_s", "deadline_s", "done", "profiled_s", "estimate_s", "noise", "agents"}

// jobLogLine is one JSON line of --job-log: the run it belongs to, the
// record, and the arrivals in the boot time before it.
type jobLogLine struct {
	Window string `json:"window"`
	Seed   uint64 `json:"seed"`
	Policy string `json:"policy"`
	JobRecord
	ArrivalsInBootBefore int `json:"arrivals_in_boot_before"`
}

// jobLog writes --job-log: a CSV row or a JSON line per job and run.
type jobLog struct {
	csv  *csv.Writer   // CSV, or
	json *json.Encoder // JSON lines
}

// openJobLog starts a --job-log of the given format on out (the CSV's
// header).
func openJobLog(out io.Writer, format JobLogFormat) (*jobLog, error) {
	if format == JobLogJSONL {
		return &jobLog{json: json.NewEncoder(out)}, nil
	}
	w := csv.NewWriter(out)
	if err := w.Write(jobLogHeader); err != nil {
		return nil, fmt.Errorf("job log: %w", err)
	}
	return &jobLog{csv: w}, nil
}

// write writes one run's records.
func (l *jobLog) write(window string, seed uint64, policy string, boot time.Duration, recs []JobRecord) error {
	before := arrivalsInBootBefore(recs, boot)
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }
	for i, r := range recs {
		if l.json != nil {
			if err := l.json.Encode(jobLogLine{Window: window, Seed: seed, Policy: policy, JobRecord: roundedRecord(r), ArrivalsInBootBefore: before[i]}); err != nil {
				return fmt.Errorf("job log: %w", err)
			}
			continue
		}
		slack, deadline := "", ""
		if r.SlackS != nil {
			slack = f(*r.SlackS)
		}
		if r.DeadlineS != nil {
			deadline = f(*r.DeadlineS)
		}
		if err := l.csv.Write([]string{window, strconv.FormatUint(seed, 10), policy, r.ID, f(r.SubmitS), f(r.WaitS), f(r.RunS), strconv.Itoa(r.CPUs),
			strconv.FormatBool(r.Deadline), slack, strconv.FormatBool(r.Missed), strconv.Itoa(before[i]), f(r.FreeCPUs), f(r.MaxAgentFreeCPUs),
			r.Kind, r.App, strconv.Itoa(r.Executors), f(r.StartS), f(r.EndS), deadline, strconv.FormatBool(r.Done),
			f(r.ProfiledS), f(r.EstimateS), strconv.FormatFloat(r.Noise, 'g', -1, 64), strings.Join(r.Agents, " ")}); err != nil {
			return fmt.Errorf("job log: %w", err)
		}
	}
	return nil
}

// flush ends the log, returning the first write error.
func (l *jobLog) flush() error {
	if l.csv != nil {
		l.csv.Flush()
		return l.csv.Error()
	}
	return nil
}
