package main

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/sparkpack/sparkpack/api"
	"github.com/sparkpack/sparkpack/scheduler"
)

// watcher prints one line per job outcome (from the server's own event
// stream, in process) and a status line now and then.
type watcher struct {
	out      *lineWriter
	base     string
	simSpeed float64
	rt       serveRuntime

	mu       sync.Mutex
	events   <-chan api.Event
	stop     func()
	ended    map[string]scheduler.State
	counts   map[scheduler.State]int
	met      int
	missed   int
	outcomes int
}

// attach is serve's started hook: it subscribes before the first job.
func (w *watcher) attach(rt serveRuntime) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.rt = rt
	w.events, w.stop = rt.Broker.Subscribe()
	w.ended = map[string]scheduler.State{}
	w.counts = map[scheduler.State]int{}
}

// allEnded reports whether every job of ids has ended.
func (w *watcher) allEnded(ids []string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, id := range ids {
		if _, ok := w.ended[id]; !ok {
			return false
		}
	}
	return true
}

func (w *watcher) run(ctx context.Context, statusEvery time.Duration) {
	w.mu.Lock()
	events, stop := w.events, w.stop
	w.mu.Unlock()
	if events == nil {
		return
	}
	defer stop()
	var tick <-chan time.Time
	if statusEvery > 0 {
		t := time.NewTicker(statusEvery)
		defer t.Stop()
		tick = t.C
	}
	lastStatus := -1
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick:
			w.mu.Lock()
			n := w.outcomes
			w.mu.Unlock()
			if n != lastStatus {
				lastStatus = n
				w.status(ctx)
			}
		case ev := <-events:
			if ev.Name != "job" {
				continue
			}
			var j struct {
				ID    string          `json:"id"`
				State scheduler.State `json:"state"`
			}
			if json.Unmarshal(ev.Data, &j) != nil || !j.State.Terminal() {
				continue
			}
			w.outcome(ctx, j.ID)
		}
	}
}

// outcome prints the line for a job that ended, once.
func (w *watcher) outcome(ctx context.Context, id string) {
	w.mu.Lock()
	_, done := w.ended[id]
	w.mu.Unlock()
	if done {
		return
	}
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	v, err := w.rt.API.JobView(rctx, id)
	if err != nil || !v.State.Terminal() {
		return
	}
	line, met, missed := outcomeLine(v)
	w.mu.Lock()
	if _, done := w.ended[id]; done {
		w.mu.Unlock()
		return
	}
	w.ended[id] = v.State
	w.counts[v.State]++
	w.outcomes++
	if met {
		w.met++
	}
	if missed {
		w.missed++
	}
	w.mu.Unlock()
	w.out.printf("%s\n", line)
}

// outcomeLine is "demo: job NAME STATE (...)" and whether the job met or
// missed its deadline (only a FINISHED or FAILED/KILLED deadline job can
// miss it; a CANCELLED or REJECTED one never ran).
func outcomeLine(v api.JobView) (string, bool, bool) {
	name := v.Name
	if name == "" {
		name = v.ID
	}
	var parts []string
	switch {
	case v.RunTimeUnknown:
		parts = append(parts, "run time unknown (never seen running)")
	case v.StartedAt != nil && v.FinishedAt != nil:
		parts = append(parts, "ran "+v.FinishedAt.Sub(*v.StartedAt).Round(time.Second).String())
	}
	met, missed := false, false
	if v.DeadlineAt != nil && v.FinishedAt != nil {
		switch v.State {
		case scheduler.Finished:
			if !v.FinishedAt.After(*v.DeadlineAt) {
				met = true
				parts = append(parts, "deadline met with "+marginDur(v.DeadlineAt.Sub(*v.FinishedAt))+" to spare")
			} else {
				missed = true
				parts = append(parts, "deadline MISSED by "+marginDur(v.FinishedAt.Sub(*v.DeadlineAt)))
			}
		case scheduler.Failed, scheduler.Killed:
			if v.FinishedAt.After(*v.DeadlineAt) {
				missed = true
				parts = append(parts, "deadline missed")
			}
		}
	}
	if v.CostUSD != nil && *v.CostUSD > 0 {
		parts = append(parts, fmt.Sprintf("$%.4f", *v.CostUSD))
	}
	if len(v.Placement) > 0 {
		hosts := make([]string, 0, len(v.Placement))
		for _, p := range v.Placement {
			h := p.Hostname
			if h == "" {
				h = p.AgentID
			}
			hosts = append(hosts, h)
		}
		sort.Strings(hosts)
		parts = append(parts, "on "+strings.Join(hosts, ","))
	}
	line := fmt.Sprintf("demo: job %s %s", name, v.State)
	if len(parts) > 0 {
		line += " (" + strings.Join(parts, ", ") + ")"
	}
	if v.State != scheduler.Finished {
		if r := lastReason(v); r != "" {
			line += ": " + r
		}
	}
	return line, met, missed
}

// lastReason is the reason of the job's last state change.
func lastReason(v api.JobView) string {
	if v.WaitingReason != "" {
		return v.WaitingReason
	}
	for i := len(v.Events) - 1; i >= 0; i-- {
		if v.Events[i].Reason != "" {
			return v.Events[i].Reason
		}
	}
	return ""
}

// status prints a one-line summary with the dashboard's address.
func (w *watcher) status(ctx context.Context) {
	w.mu.Lock()
	met, missed := w.met, w.missed
	fin := w.counts[scheduler.Finished]
	rt := w.rt
	w.mu.Unlock()
	line := fmt.Sprintf("demo: status: %d finished", fin)
	var lv *live
	if rt.Live != nil {
		lv = rt.Live()
	}
	if lv != nil {
		q := lv.core.Lengths()
		cost := lv.core.Cost()
		running := 0
		rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		if n, err := rt.Store.CountByState(rctx); err == nil {
			for _, st := range []scheduler.State{scheduler.Placing, scheduler.Reserving, scheduler.Launching, scheduler.Running} {
				running += n[string(st)]
			}
		}
		cancel()
		line += fmt.Sprintf(", %d placed or running, %d waiting (%d in the deadline queue); deadlines met %d, missed %d; cost $%.2f, now $%.2f/h on %d agents",
			running, q.Deadline+q.Regular+q.Intake, q.Deadline, met, missed, cost.TotalUSD, cost.BurnRateUSDPerHour, cost.ActiveAgents)
	}
	w.out.printf("%s; dashboard %s/\n", line, w.base)
}
