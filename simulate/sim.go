package simulate

import (
	"container/heap"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"time"

	"github.com/sparkpack/sparkpack/placement"
	"github.com/sparkpack/sparkpack/power"
	"github.com/sparkpack/sparkpack/scheduler"
	"github.com/sparkpack/sparkpack/workload"
)

// Epoch is the virtual time of the trace's second 0.
var Epoch = time.Date(2009, 10, 1, 0, 0, 0, 0, time.UTC)

// checkInvariant, when set by a test, sees the cluster and the queues after
// every scheduling pass.
var checkInvariant func(now time.Time, s placement.Snapshot, q scheduler.QueuesView)

type jobInfo struct {
	profile  workload.Profile
	submit   time.Time
	deadline *time.Time
	start    time.Time
	end      time.Time
	done     bool
	run      int // runs started (an eviction ends one)
	noise    float64
}

type finish struct {
	at  time.Time
	seq int
	id  string
	run int
}

type finishHeap []finish

func (h finishHeap) Len() int { return len(h) }
func (h finishHeap) Less(i, j int) bool {
	if !h[i].at.Equal(h[j].at) {
		return h[i].at.Before(h[j].at)
	}
	return h[i].seq < h[j].seq
}
func (h finishHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *finishHeap) Push(x any)   { *h = append(*h, x.(finish)) }
func (h *finishHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// BuildJobs turns trace jobs into scheduler jobs with their profiles
// (BuildWorkload of m.FromTrace(trace)).
func BuildJobs(trace []workload.TraceJob, m workload.Model, fraction, slack float64, seed uint64) ([]scheduler.Job, map[string]workload.Profile) {
	return BuildWorkload(m.FromTrace(trace), m, fraction, slack, seed)
}

// BuildWorkload turns workload jobs into scheduler jobs with their
// profiles: the same for every policy of a run. A fraction of them, chosen
// by a generator seeded with seed, get deadline = submission + reference
// duration x slack; every job carries its reference duration as estimate
// and its application's Spark example class as main class (from which the
// scheduler infers the application type, as it does for live jobs).
func BuildWorkload(wl []workload.Job, m workload.Model, fraction, slack float64, seed uint64) ([]scheduler.Job, map[string]workload.Profile) {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	jobs := make([]scheduler.Job, 0, len(wl))
	profiles := make(map[string]workload.Profile, len(wl))
	for _, w := range wl {
		p := w.Profile
		ref := m.Reference(p)
		submit := Epoch.Add(w.Submit)
		j := scheduler.Job{
			Spec: scheduler.Spec{
				ID: p.JobID, Name: string(p.App) + "-" + p.JobID,
				App:       scheduler.App{AppResource: "local:///opt/spark/examples/jars/spark-examples.jar", MainClass: p.MainClass()},
				Executors: p.Executors, ExecutorCores: p.ExecutorCores, ExecutorMemoryMB: p.ExecutorMemoryMB,
				EstimatedDurationSeconds: ref.Seconds(),
			},
			SubmittedAt: submit,
			State:       scheduler.Submitted,
		}
		if rng.Float64() < fraction {
			s := ref.Seconds() * slack
			dl := submit.Add(time.Duration(s * float64(time.Second)))
			j.Deadline = &scheduler.Deadline{Seconds: &s}
			j.DeadlineAt = &dl
		}
		j.Fingerprint = j.Spec.Fingerprint()
		jobs = append(jobs, j)
		profiles[j.ID] = p
	}
	return jobs, profiles
}

// Run simulates one policy over the jobs of o, deterministically (except
// the measured scheduling delays, which are real time).
func Run(ctx context.Context, o Options) (Result, error) {
	r, _, err := run(ctx, o)
	return r, err
}

// run is Run, also returning the estimator that learned from the runs
// (the learning history of the window after, Options.LearnHistory).
func run(ctx context.Context, o Options) (Result, *estimator, error) {
	model := workload.DefaultModel
	if o.Model != nil {
		model = *o.Model
	}
	if o.Slack <= 0 {
		o.Slack = 1
	}
	start := Epoch.Add(o.From)
	clock := NewVirtualClock(start)
	store := NewMemStore(clock)
	cluster := NewCluster(o.Cluster, clock)
	delays := &delayObserver{}
	cfg := scheduler.Config{
		Policy:         o.Policy.Placement,
		PolicyOptions:  o.PolicyOptions,
		Ordering:       o.Policy.Ordering,
		PromoteAfter:   o.PromoteAfter,
		Admission:      scheduler.AdmitFlag,
		Preemption:     o.Policy.Preemption,
		PreemptProtect: o.PreemptProtect, PreemptMaxShare: o.PreemptMaxShare, MaxPreemptions: o.MaxPreemptions,
		Log:      scheduler.DiscardLogger(),
		Observer: delays,
		Teams:    teamsHolder(o.Teams),
	}
	var pm *power.Manager
	if o.PowerOffAfter > 0 {
		boot := o.BootTime
		if boot <= 0 {
			boot = 60 * time.Second
		}
		var err error
		if pm, err = newSimPower(cluster, clock, o.PowerOffAfter, boot, !o.NoBootAware); err != nil {
			return Result{}, nil, err
		}
		cluster.unavailable = pm.Unavailable
		cfg.Provisioner, cfg.Standby = pm, pm
	}
	var traits *traitsModel
	if o.Estimates == EstimatesLearned {
		traits = &traitsModel{} // dap takes the jobs' traits from the model (its estimator, below)
		cfg.Model = traits
	}
	core, err := scheduler.New(cfg, cluster, coreStore{store}, clock)
	if err != nil {
		return Result{}, nil, err
	}
	var wp *simWarmPool
	if o.WarmPool {
		if pm == nil {
			return Result{}, nil, fmt.Errorf("the warm pool needs power management (PowerOffAfter > 0)")
		}
		wp = newSimWarmPool(cluster, pm, o.BootTime, o.MissCostUSD, 0, start)
		if len(o.WarmHistory) > 0 {
			past, _ := BuildWorkload(o.WarmHistory, model, o.DeadlineFraction, o.Slack, o.Seed)
			for _, j := range past {
				if j.SubmittedAt.Before(start) {
					wp.remember(j)
				}
			}
		}
	}
	tickPower := func() {
		if pm == nil {
			return
		}
		// Deactivate, then power off: two steps at the same instant.
		for k := 0; k < 3; k++ {
			_ = pm.Tick(ctx, cluster.powerAgents(), func(a power.Agent) bool {
				return core.CouldUse(a.CPUs, a.MemMB) || (wp != nil && wp.wanted(a))
			})
		}
	}
	wl := o.Workload
	if wl == nil {
		wl = model.FromTrace(o.Jobs)
	}
	jobs, profiles := BuildWorkload(wl, model, o.DeadlineFraction, o.Slack, o.Seed)
	assignTeams(jobs, o.TeamMix, o.Seed)
	est, err := newEstimator(jobs, profiles, model, o.Estimates, o.EstimateError, o.HideAppType, o.Seed)
	if err != nil {
		return Result{}, nil, err
	}
	if o.NotBeforeLead > 0 {
		withNotBefore(jobs, o.NotBeforeLead, start)
	}
	if err := setupLearning(est, traits, o, model, profiles); err != nil {
		return Result{}, nil, err
	}
	if len(o.LearnHistory) > 0 && est.book != nil {
		h := o
		h.Workload, h.From = o.LearnHistory, o.LearnHistoryFrom
		h.LearnHistory, h.WarmHistory, h.JobLog, h.Progress = nil, nil, nil, nil
		_, past, err := run(ctx, h)
		if err != nil {
			return Result{}, nil, fmt.Errorf("learning history: %w", err)
		}
		est.inherit(past)
	}
	info := make(map[string]*jobInfo, len(jobs))
	if math.IsNaN(o.RunNoise) || o.RunNoise < 0 || o.RunNoise > 5 {
		return Result{}, nil, fmt.Errorf("run noise %v not in [0, 5]", o.RunNoise)
	}
	noise := rand.New(rand.NewPCG(o.Seed, 0x7a15e))
	for _, j := range jobs {
		info[j.ID] = &jobInfo{profile: profiles[j.ID], submit: j.SubmittedAt, deadline: j.DeadlineAt, noise: 1}
		if nb := j.NotBeforeAt(); nb != nil {
			info[j.ID].submit = *nb
		}
		if o.RunNoise > 0 {
			info[j.ID].noise = math.Exp(o.RunNoise * noise.NormFloat64())
		}
	}
	slices.SortStableFunc(jobs, func(a, b scheduler.Job) int { return a.SubmittedAt.Compare(b.SubmittedAt) })

	// The window starts now: power management sees the agents idle from
	// here (not only from the first arrival), so that agents idle before
	// it are powered off and the bill covers the window only.
	tickPower()

	var finishes finishHeap
	// For JobLog: the room each job found on arrival, and where it ran.
	var free map[string]arrivalFree
	var placed map[string]jobPlacement
	if o.JobLog != nil {
		free, placed = map[string]arrivalFree{}, map[string]jobPlacement{}
	}
	seq, next, done := 0, 0, 0
	preemptions, lostWork, lostCPU := 0, 0.0, 0.0
	lastProgress := -1
	reportedAt, reportedDone := time.Time{}, -1
	for {
		if err := ctx.Err(); err != nil {
			return Result{}, nil, err
		}
		// The next event: an arrival, a job end, or a timer of the core.
		var at time.Time
		have := false
		consider := func(t time.Time) {
			if !have || t.Before(at) {
				at, have = t, true
			}
		}
		if next < len(jobs) {
			consider(jobs[next].SubmittedAt)
		}
		if len(finishes) > 0 {
			consider(finishes[0].at)
		}
		busy := next < len(jobs) || len(finishes) > 0 || core.Waiting() > 0 || cluster.Pending()
		if t, ok := core.NextWake(); ok && busy {
			consider(t)
		}
		if pm != nil && busy {
			if t, ok := cluster.NextBoot(); ok {
				consider(t)
			}
			// (An expiry already past is an agent kept on: nothing to do
			// at it.)
			if t, ok := pm.NextIdleExpiry(); ok && t.After(clock.Now()) {
				consider(t)
			}
			if wp != nil {
				consider(wp.next)
			}
		}
		if !have {
			break
		}
		clock.Set(at)
		now := clock.Now()
		if pm != nil && cluster.FinishBoots(now) {
			tickPower() // reactivated
			core.ClusterChanged()
		}
		for len(finishes) > 0 && !finishes[0].at.After(now) {
			f := heap.Pop(&finishes).(finish)
			if f.run != info[f.id].run {
				continue // that run was evicted
			}
			if err := core.Report(ctx, f.id, scheduler.Finished, "finished"); err != nil {
				return Result{}, nil, fmt.Errorf("finish %s: %w", f.id, err)
			}
			ji := info[f.id]
			ji.end, ji.done = now, true
			est.finish(f.id, now.Sub(ji.start).Seconds())
			done++
			if wp != nil {
				wp.ended(f.id, nil, now)
			}
		}
		for next < len(jobs) && !jobs[next].SubmittedAt.After(now) {
			if free != nil {
				free[jobs[next].ID] = freeAtArrival(cluster)
			}
			est.submit(&jobs[next])
			info[jobs[next].ID].profile = profiles[jobs[next].ID] // --executors auto may resize it
			j, err := store.Create(jobs[next])
			if err != nil {
				return Result{}, nil, err
			}
			if _, err := core.Submit(ctx, j); err != nil {
				return Result{}, nil, fmt.Errorf("submit %s: %w", j.ID, err)
			}
			if wp != nil {
				wp.submitted(j)
			}
			next++
		}
		// Passes at this instant until no eviction is left to carry out:
		// an evicted job's room goes to the next pass.
		for {
			if _, err := core.Schedule(ctx); err != nil {
				return Result{}, nil, fmt.Errorf("schedule at %s: %w", now.Sub(start), err)
			}
			tickPower()
			if checkInvariant != nil {
				snap, _ := cluster.Snapshot(ctx)
				checkInvariant(now, snap, core.Queues())
			}
			for _, id := range cluster.TakeStarted() {
				ji := info[id]
				shares := cluster.Shares(id)
				d := model.Duration(ji.profile, shares).Total()
				if ji.noise != 1 {
					d = time.Duration(float64(d) * ji.noise).Round(time.Millisecond)
				}
				est.start(id, shares)
				if placed != nil {
					placed[id] = jobPlacement{shares: shares, agents: cluster.AgentIDs(id)}
				}
				end := now.Add(d)
				if err := core.Report(ctx, id, scheduler.Launching, "launched"); err != nil {
					return Result{}, nil, err
				}
				if err := core.Report(ctx, id, scheduler.Running, "running"); err != nil {
					return Result{}, nil, err
				}
				ji.start = now
				ji.run++
				heap.Push(&finishes, finish{at: end, seq: seq, id: id, run: ji.run})
				if wp != nil {
					if j, err := store.Get(id); err == nil {
						wp.started(j, now)
					}
				}
				seq++
			}
			evicted := cluster.TakePreempted()
			if len(evicted) == 0 {
				break
			}
			for _, id := range evicted {
				ji := info[id]
				ran := now.Sub(ji.start)
				preemptions++
				lostWork += ran.Seconds()
				lostCPU += ran.Seconds() * float64(ji.profile.Executors*ji.profile.ExecutorCores)
				ji.run++ // its pending end no longer counts
				if wp != nil {
					if j, err := store.Get(id); err == nil {
						wp.ended(id, &j, now)
					}
				}
				if err := core.Report(ctx, id, scheduler.Queued, "preempted"); err != nil {
					return Result{}, nil, fmt.Errorf("evict %s: %w", id, err)
				}
			}
		}
		if wp != nil {
			wp.dropRejected(store)
			if err := wp.decide(ctx, now); err != nil {
				return Result{}, nil, fmt.Errorf("warm pool at %s: %w", now.Sub(start), err)
			}
			tickPower() // keep, and power on what it asks for
		}
		if o.Progress != nil && done/50 != lastProgress {
			lastProgress = done / 50
			reportedAt, reportedDone = now, done
			o.Progress(now.Sub(Epoch), done, len(jobs))
		}
	}
	end := clock.Now()
	// The last report, unless the loop made this very one already (when
	// the last job ended on a multiple of 50 and nothing came after it).
	if o.Progress != nil && (reportedDone != done || !reportedAt.Equal(end)) {
		o.Progress(end.Sub(Epoch), done, len(jobs))
	}
	r := summarize(o.Policy.Name, store, info, core.Cost(), delays.delays, start, end)
	r.Teams = teamResults(store, info, r.TotalCostUSD)
	if o.JobLog != nil {
		o.JobLog(jobRecords(store, info, free, placed, start, model))
	}
	r.BillUSD, r.AlwaysOnUSD = cluster.Bill(start, end)
	r.Preemptions, r.LostWorkS, r.LostCPUS = preemptions, lostWork, lostCPU
	est.report(&r)
	r.Boots, r.MeanOnCPUs = cluster.Boots(), cluster.MeanOnCPUs(start, end)
	cpus := map[string]float64{}
	for _, a := range o.Cluster.Agents {
		cpus[a.ID] = a.CPUs
	}
	var paid, used, ref float64
	nRun := 0
	for _, a := range core.Cost().Agents {
		paid += a.ActiveSeconds * cpus[a.AgentID]
	}
	for _, j := range store.Jobs() { // a fixed order: float sums must not depend on map order
		if ji := info[j.ID]; ji.done {
			c := float64(ji.profile.Executors * ji.profile.ExecutorCores)
			r.MeanExecutors += float64(ji.profile.Executors)
			nRun++
			used += ji.end.Sub(ji.start).Seconds() * c
			ref += model.Reference(ji.profile).Seconds() * c
		}
	}
	if nRun > 0 {
		r.MeanExecutors /= float64(nRun)
	}
	if paid > 0 {
		r.UtilisationPct = 100 * used / paid
	}
	if ref > 0 {
		r.Stretch = used / ref
	}
	return r, est, nil
}

func summarize(policy string, store *MemStore, info map[string]*jobInfo, cost scheduler.CostReport, delays []time.Duration, start, end time.Time) Result {
	r := Result{Policy: policy, TotalCostUSD: cost.TotalUSD, AgentActiveS: cost.AgentActiveSeconds, MakespanS: end.Sub(start).Seconds()}
	var jct, wait []float64
	for _, j := range store.Jobs() {
		r.Jobs++
		ji := info[j.ID]
		switch {
		case j.State == scheduler.Rejected:
			r.Rejected++
		case ji.done:
			r.Completed++
			jct = append(jct, ji.end.Sub(ji.submit).Seconds())
			wait = append(wait, ji.start.Sub(ji.submit).Seconds())
		default:
			r.Unfinished++
		}
		if ji.deadline != nil {
			r.DeadlineJobs++
			if j.State == scheduler.Rejected {
				r.DeadlineRejected++
			}
			if !ji.done || ji.end.After(*ji.deadline) {
				r.DeadlineMissed++
			}
		}
	}
	if r.DeadlineJobs > 0 {
		r.DeadlineViolationPct = 100 * float64(r.DeadlineMissed) / float64(r.DeadlineJobs)
		r.DeadlineMetPct = 100 * float64(r.DeadlineJobs-r.DeadlineMissed) / float64(r.DeadlineJobs)
	}
	if admitted := r.DeadlineJobs - r.DeadlineRejected; admitted > 0 {
		r.AdmittedViolationPct = 100 * float64(r.DeadlineMissed-r.DeadlineRejected) / float64(admitted)
	}
	r.JCTMeanS, r.JCTP95S = meanP(jct, 95)
	r.WaitMeanS, r.WaitP95S = meanP(wait, 95)
	ms := make([]float64, len(delays))
	for i, d := range delays {
		ms[i] = float64(d) / float64(time.Millisecond)
	}
	r.Placements = len(delays)
	r.SchedDelayMeanMS, r.SchedDelayP99MS = meanP(ms, 99)
	for _, p := range cost.Series {
		r.Series = append(r.Series, SeriesPoint{S: p.T.Sub(start).Seconds(), USD: p.TotalUSD})
	}
	return r
}

// meanP returns the mean and the p-th percentile (nearest rank) of xs.
func meanP(xs []float64, p float64) (mean, pct float64) {
	if len(xs) == 0 {
		return 0, 0
	}
	s := slices.Clone(xs)
	sort.Float64s(s)
	var sum float64
	for _, x := range s {
		sum += x
	}
	rank := int(math.Ceil(p / 100 * float64(len(s))))
	rank = min(max(rank, 1), len(s))
	return sum / float64(len(s)), s[rank-1]
}

// withNotBefore gives every deadline job a notBefore at its arrival and
// submits it lead earlier (not before the window's start), its deadline
// unchanged (NotBeforeLead).
func withNotBefore(jobs []scheduler.Job, lead time.Duration, start time.Time) {
	for i := range jobs {
		j := &jobs[i]
		if j.DeadlineAt == nil {
			continue
		}
		arrival := j.SubmittedAt
		j.SubmittedAt = arrival.Add(-lead)
		if j.SubmittedAt.Before(start) {
			j.SubmittedAt = start
		}
		if !j.SubmittedAt.Before(arrival) {
			continue
		}
		j.NotBefore = &scheduler.NotBefore{Time: arrival.UTC()}
		s := j.DeadlineAt.Sub(j.SubmittedAt).Seconds()
		j.Deadline = &scheduler.Deadline{Seconds: &s}
		j.Fingerprint = j.Spec.Fingerprint()
	}
}
