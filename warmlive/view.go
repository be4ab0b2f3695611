package warmlive

import (
	"time"

	"github.com/sparkpack/sparkpack/forecast"
	"github.com/sparkpack/sparkpack/warmpool"
)

// View is GET /api/v1/forecast: the forecast per step over the horizon
// ahead and the horizon behind (with the actual arrivals of the steps
// behind, for comparison), and the warm pool's last decision.
type View struct {
	At          time.Time `json:"at"`
	StepSeconds float64   `json:"stepSeconds"`
	// HorizonSeconds ahead; the same span behind is shown with actuals.
	HorizonSeconds float64   `json:"horizonSeconds"`
	Model          ModelView `json:"model"`
	Steps          []Step    `json:"steps"`
	// WarmPool is nil when power management is off.
	WarmPool *WarmPoolView `json:"warmPool"`
}

// ModelView sums the fitted model up.
type ModelView struct {
	OK bool `json:"ok"`
	// Reason: why there is no forecast (or which jobs were dropped).
	Reason            string  `json:"reason,omitempty"`
	Level             string  `json:"level"`
	Jobs              int     `json:"jobs"`
	Dropped           int     `json:"dropped"`
	MeanPerHour       float64 `json:"meanPerHour"`
	RecentPerHour     float64 `json:"recentPerHour"`
	DeadlineShare     float64 `json:"deadlineShare"`
	CPUsPerJob        float64 `json:"cpusPerJob"`
	MemMBPerJob       float64 `json:"memMBPerJob"`
	Dispersion        float64 `json:"dispersion"`
	HistoryFrom       string  `json:"historyFrom,omitempty"`
	HistorySubmission int     `json:"historySubmissions"`
}

// Band is a forecast quantity's p10, p50 and p90 and mean.
type Band struct {
	P10  float64 `json:"p10"`
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	Mean float64 `json:"mean"`
}

// Actual is what arrived in a past step.
type Actual struct {
	Jobs         int     `json:"jobs"`
	CPUs         float64 `json:"cpus"`
	MemMB        float64 `json:"memMB"`
	DeadlineJobs int     `json:"deadlineJobs"`
}

// Step is one interval. The bands of cpus, memory and deadline jobs are
// the job count's band times the mean size (and the deadline share).
type Step struct {
	From         time.Time `json:"from"`
	To           time.Time `json:"to"`
	Jobs         Band      `json:"jobs"`
	CPUs         Band      `json:"cpus"`
	MemMB        Band      `json:"memMB"`
	DeadlineJobs Band      `json:"deadlineJobs"`
	// Actual is set for steps that started before now (the current one
	// is partial).
	Actual *Actual `json:"actual,omitempty"`
}

// WarmPoolView is the last decision.
type WarmPoolView struct {
	At             time.Time      `json:"at"`
	Reason         string         `json:"reason"`
	Fallback       string         `json:"fallback,omitempty"`
	Error          string         `json:"error,omitempty"`
	WarmCPUs       float64        `json:"warmCPUs"`
	ExpectedMisses float64        `json:"expectedMisses"`
	IdleBillUSD    float64        `json:"idleBillUSD"`
	PoweredOnAhead int            `json:"poweredOnAhead"`
	KeepOn         []DecisionView `json:"keepOn"`
	PowerOnNow     []DecisionView `json:"powerOnNow"`
	MayPowerOff    []DecisionView `json:"mayPowerOff"`
	Config         WarmConfigView `json:"config"`
}

// DecisionView is one agent's part of the plan.
type DecisionView struct {
	AgentID string `json:"agentId"`
	// Name is the agent's hostname when the caller knows it (Names).
	Name   string `json:"name,omitempty"`
	Reason string `json:"reason"`
}

// Names sets each decision's Name with name(agentID).
func (w *WarmPoolView) Names(name func(agentID string) string) {
	for _, ds := range [][]DecisionView{w.KeepOn, w.PowerOnNow, w.MayPowerOff} {
		for i := range ds {
			ds[i].Name = name(ds[i].AgentID)
		}
	}
}

// WarmConfigView is the settings the decision used.
type WarmConfigView struct {
	BootSeconds  float64 `json:"bootSeconds"`
	EverySeconds float64 `json:"everySeconds"`
	MissCostUSD  float64 `json:"missCostUSD"`
	MinWarmCPUs  float64 `json:"minWarmCPUs"`
}

// MaxSteps bounds a View's steps on each side of now.
const MaxSteps = 500

// BuildView is the view at now of a Status (the model and history of its
// decision) over horizon in steps of step (both > 0; the steps are cut
// to MaxSteps a side). Steps are aligned to step from the Unix epoch.
func BuildView(st Status, cfg Config, now time.Time, horizon, step time.Duration, powerOn bool) View {
	m := st.model
	v := View{At: now, StepSeconds: step.Seconds(), HorizonSeconds: horizon.Seconds(), Steps: []Step{}}
	v.Model = ModelView{OK: m.OK, Reason: m.Reason, Level: string(m.Level), Jobs: m.Jobs, Dropped: m.Dropped,
		MeanPerHour: m.MeanRate * 3600, RecentPerHour: m.RecentRate * 3600, DeadlineShare: m.DeadlineShare,
		CPUsPerJob: m.CPUsPerJob, MemMBPerJob: m.MemMBPerJob, Dispersion: m.Dispersion, HistorySubmission: len(st.history)}
	if v.Model.Level == "" {
		v.Model.Level = string(forecast.LevelNone)
	}
	if st.At.IsZero() && v.Model.Reason == "" {
		v.Model.Reason = "no decision yet"
	}
	if len(st.history) > 0 {
		v.Model.HistoryFrom = st.history[0].SubmittedAt.UTC().Format(time.RFC3339)
	}
	if step <= 0 || horizon <= 0 {
		return v
	}
	n := min(int((horizon+step-1)/step), MaxSteps)
	cur := now.Truncate(step)
	start, end := cur.Add(-time.Duration(n)*step), cur.Add(time.Duration(n)*step)
	if len(st.history) > 0 {
		// Nothing to compare before the history starts.
		if first := st.history[0].SubmittedAt.Truncate(step); first.After(start) && !first.After(cur) {
			start = first
		}
	}
	for t := start; t.Before(end); t = t.Add(step) {
		s := Step{From: t, To: t.Add(step)}
		if m.OK {
			d := m.Expect(t, t.Add(step))
			s.Jobs = Band{d.JobsP10, d.JobsP50, d.JobsP90, d.Jobs}
			s.CPUs = scale(s.Jobs, m.CPUsPerJob)
			s.MemMB = scale(s.Jobs, m.MemMBPerJob)
			s.DeadlineJobs = scale(s.Jobs, m.DeadlineShare)
		}
		if t.Before(now) {
			s.Actual = &Actual{}
		}
		v.Steps = append(v.Steps, s)
	}
	// The actual arrivals (the history is oldest first).
	for _, j := range st.history {
		if j.SubmittedAt.Before(start) || !j.SubmittedAt.Before(now) {
			continue
		}
		k := int(j.SubmittedAt.Sub(start) / step)
		if k < 0 || k >= len(v.Steps) || v.Steps[k].Actual == nil {
			continue
		}
		a := v.Steps[k].Actual
		a.Jobs++
		if finite(j.CPUs) {
			a.CPUs += j.CPUs
		}
		if finite(j.MemMB) {
			a.MemMB += j.MemMB
		}
		if j.Deadline {
			a.DeadlineJobs++
		}
	}
	if powerOn {
		w := &WarmPoolView{At: st.At, Fallback: st.Fallback, Error: st.Error, PoweredOnAhead: st.PoweredOnAhead,
			KeepOn: []DecisionView{}, PowerOnNow: []DecisionView{}, MayPowerOff: []DecisionView{},
			Config: WarmConfigView{BootSeconds: cfg.BootTime.Seconds(), EverySeconds: cfg.Every.Seconds(), MissCostUSD: cfg.MissCostUSD, MinWarmCPUs: cfg.MinWarmCPUs}}
		if p := st.Plan; p != nil {
			w.Reason, w.WarmCPUs, w.ExpectedMisses, w.IdleBillUSD = p.Reason, p.WarmCPUs, p.ExpectedMisses, p.IdleBillUSD
			w.KeepOn, w.PowerOnNow, w.MayPowerOff = decisions(p.KeepOn), decisions(p.PowerOnNow), decisions(p.MayPowerOff)
		}
		v.WarmPool = w
	}
	return v
}

func scale(b Band, k float64) Band {
	return Band{b.P10 * k, b.P50 * k, b.P90 * k, b.Mean * k}
}

func finite(x float64) bool { return x == x && x-x == 0 }

func decisions(ds []warmpool.Decision) []DecisionView {
	out := make([]DecisionView, len(ds))
	for i, d := range ds {
		out[i] = DecisionView{AgentID: d.AgentID, Reason: d.Reason}
	}
	return out
}

// View is the Runner's current view (see BuildView).
func (r *Runner) View(horizon, step time.Duration) View {
	return BuildView(r.Status(), r.cfg, r.cfg.Now(), horizon, step, r.src.Agents != nil)
}
