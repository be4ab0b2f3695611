package simulate

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"slices"
	"strconv"
	"time"

	"github.com/sparkpack/sparkpack/workload"
)

// JobRecord is one job of a run as `simulate --job-log` writes it: what
// it asked, what it found when it arrived, and how it ended. It is how
// docs/power.md's "Light hours at 50 jobs an hour" finds where the
// misses come from.
type JobRecord struct {
	ID string
	// SubmitS is the arrival (its notBefore, with --not-before-lead) in
	// seconds from the window's start; WaitS from it to the start, RunS
	// the run (0 when it never ran).
	SubmitS, WaitS, RunS float64
	// CPUs are its executors' cpus.
	CPUs int
	// Deadline tells whether it has one; SlackS is then its deadline
	// minus its arrival minus its profiled run time, and Missed whether
	// it did not end by it (rejected and unfinished jobs included).
	Deadline bool
	SlackS   float64
	Missed   bool
	Done     bool
	// FreeCPUs are the free cpus of the agents on (registered with the
	// cluster) at its arrival, before any pass at that instant, and
	// MaxAgentFreeCPUs the most free on one of them.
	FreeCPUs, MaxAgentFreeCPUs float64
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

// jobRecords are the records of a run's jobs, in the store's order.
func jobRecords(store *MemStore, info map[string]*jobInfo, free map[string]arrivalFree, start time.Time, model workload.Model) []JobRecord {
	var out []JobRecord
	for _, j := range store.Jobs() {
		ji := info[j.ID]
		r := JobRecord{ID: j.ID, SubmitS: ji.submit.Sub(start).Seconds(), CPUs: ji.profile.Executors * ji.profile.ExecutorCores,
			Done: ji.done, FreeCPUs: free[j.ID].total, MaxAgentFreeCPUs: free[j.ID].max}
		if !ji.start.IsZero() {
			r.WaitS = ji.start.Sub(ji.submit).Seconds()
		}
		if ji.done {
			r.RunS = ji.end.Sub(ji.start).Seconds()
		}
		if ji.deadline != nil {
			r.Deadline = true
			r.SlackS = ji.deadline.Sub(ji.submit).Seconds() - model.Reference(ji.profile).Seconds()
			r.Missed = !ji.done || ji.end.After(*ji.deadline)
		}
		out = append(out, r)
	}
	return out
}

// jobLogHeader is the CSV header of --job-log.
var jobLogHeader = []string{"window", "seed", "policy", "job", "submit_s", "wait_s", "run_s", "cpus", "deadline", "slack_s", "missed",
	"arrivals_in_boot_before", "free_cpus_at_arrival", "max_agent_free_cpus"}

// writeJobLog writes one run's records as CSV rows. arrivals_in_boot_before
// counts the other arrivals of the run in the boot time before the job's
// (strictly after arrival - boot, not after it).
func writeJobLog(w *csv.Writer, window string, seed uint64, policy string, boot time.Duration, recs []JobRecord) error {
	subs := make([]float64, len(recs))
	for i, r := range recs {
		subs[i] = r.SubmitS
	}
	slices.Sort(subs)
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }
	for _, r := range recs {
		// Arrivals in (submit - boot, submit], less the job itself.
		lo, _ := slices.BinarySearch(subs, r.SubmitS-boot.Seconds())
		for lo < len(subs) && subs[lo] <= r.SubmitS-boot.Seconds() {
			lo++
		}
		hi, _ := slices.BinarySearch(subs, r.SubmitS)
		for hi < len(subs) && subs[hi] <= r.SubmitS {
			hi++
		}
		slack := ""
		if r.Deadline {
			slack = f(r.SlackS)
		}
		if err := w.Write([]string{window, strconv.FormatUint(seed, 10), policy, r.ID, f(r.SubmitS), f(r.WaitS), f(r.RunS), strconv.Itoa(r.CPUs),
			strconv.FormatBool(r.Deadline), slack, strconv.FormatBool(r.Missed), strconv.Itoa(hi - lo - 1), f(r.FreeCPUs), f(r.MaxAgentFreeCPUs)}); err != nil {
			return fmt.Errorf("job log: %w", err)
		}
	}
	return nil
}

// openJobLog starts the --job-log CSV on out.
func openJobLog(out io.Writer) (*csv.Writer, error) {
	w := csv.NewWriter(out)
	if err := w.Write(jobLogHeader); err != nil {
		return nil, fmt.Errorf("job log: %w", err)
	}
	return w, nil
}
