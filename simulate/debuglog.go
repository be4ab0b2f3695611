package simulate

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/sparkpack/sparkpack/workload"
)

// JobLogEnv names a directory: when set, every run writes one JSON line
// per job there (a debugging aid for tracing a run job by job; one file
// per policy, window start and seed).
const JobLogEnv = "SPARKPACK_SIM_JOBLOG"

// jobLogLine is one job of a run as the debug log shows it.
type jobLogLine struct {
	ID        string                `json:"id"`
	Kind      string                `json:"kind"`
	App       string                `json:"app"`
	Executors int                   `json:"executors"`
	SubmitS   float64               `json:"submit_s"`
	StartS    float64               `json:"start_s"`
	EndS      float64               `json:"end_s"`
	DeadlineS float64               `json:"deadline_s,omitempty"`
	Done      bool                  `json:"done"`
	Missed    bool                  `json:"missed"`
	ProfiledS float64               `json:"profiled_s"`
	EstimateS float64               `json:"estimate_s"`
	RanS      float64               `json:"ran_s"`
	Noise     float64               `json:"noise"`
	Shares    []workload.AgentShare `json:"shares,omitempty"`
	Agents    []string              `json:"agents,omitempty"`
}

// writeDebugLog writes the run's jobs to JobLogEnv's directory, if set.
func writeDebugLog(policy string, seed uint64, start time.Time, model workload.Model, store *MemStore, info map[string]*jobInfo, shares map[string][]workload.AgentShare, agents map[string][]string) {
	dir := os.Getenv(JobLogEnv)
	if dir == "" {
		return
	}
	name := filepath.Join(dir, fmt.Sprintf("%s.%d.%d.jsonl", policy, int(start.Sub(Epoch).Hours()), seed))
	f, err := os.Create(name)
	if err != nil {
		return
	}
	defer f.Close()
	enc := json.NewEncoder(f)
	for _, j := range store.Jobs() {
		ji := info[j.ID]
		l := jobLogLine{ID: j.ID, Kind: ji.profile.Kind, App: string(ji.profile.App), Executors: ji.profile.Executors,
			SubmitS: ji.submit.Sub(start).Seconds(), Done: ji.done, Noise: ji.noise,
			ProfiledS: model.Reference(ji.profile).Seconds(), EstimateS: j.EstimatedDurationSeconds, Shares: shares[j.ID], Agents: agents[j.ID]}
		if ji.done {
			l.StartS, l.EndS, l.RanS = ji.start.Sub(start).Seconds(), ji.end.Sub(start).Seconds(), ji.end.Sub(ji.start).Seconds()
		}
		if ji.deadline != nil {
			l.DeadlineS = ji.deadline.Sub(start).Seconds()
			l.Missed = !ji.done || ji.end.After(*ji.deadline)
		}
		_ = enc.Encode(l)
	}
}
