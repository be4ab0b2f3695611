package scheduler

import (
	"fmt"
	"math"
	"math/rand"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/placement"
)

func TestShares(t *testing.T) {
	cases := []struct {
		name       string
		cpus, mem  float64
		holds      []placement.Holding
		want       []float64
		wantIdleOf float64
	}{
		{"one job, a quarter of the cpus", 8, 32768, []placement.Holding{{JobID: "a", CPUs: 2, MemMB: 4096}}, []float64{0.25}, 0.75},
		{"memory dominates", 8, 32768, []placement.Holding{{JobID: "a", CPUs: 1, MemMB: 16384}}, []float64{0.5}, 0.5},
		{"two jobs, whole agent", 8, 32768, []placement.Holding{{JobID: "a", CPUs: 4, MemMB: 1024}, {JobID: "b", CPUs: 4, MemMB: 1024}}, []float64{0.5, 0.5}, 0},
		{"dominant shares over 1 are scaled down", 8, 32768, []placement.Holding{{JobID: "a", CPUs: 6, MemMB: 1024}, {JobID: "b", CPUs: 1, MemMB: 24576}}, []float64{0.75 / 1.5, 0.75 / 1.5}, 0},
		{"more than the agent is capped", 4, 4096, []placement.Holding{{JobID: "a", CPUs: 8, MemMB: 1024}}, []float64{1}, 0},
		{"no capacity known", 0, 0, []placement.Holding{{JobID: "a", CPUs: 1, MemMB: 1}}, []float64{0}, 1},
	}
	for _, c := range cases {
		got := Shares(c.cpus, c.mem, c.holds)
		sum := 0.0
		for i := range got {
			sum += got[i]
			if !near(got[i], c.want[i]) {
				t.Errorf("%s: share %d = %v, want %v", c.name, i, got[i], c.want[i])
			}
		}
		if !near(1-sum, c.wantIdleOf) {
			t.Errorf("%s: idle part %v, want %v", c.name, 1-sum, c.wantIdleOf)
		}
	}
}

// TestAttributionHandComputed: agent a ($1/h, 8 cpus, 32 GiB) from 10:00
// to 11:00; job j1 holds 2 cpus/4 GiB (share 1/4) 10:00-11:00, job j2 holds
// 2 cpus/16 GiB (share 1/2) 10:30-11:00. j1 = $0.25, j2 = $0.25, idle =
// $0.50 (3/4 of the first half hour, 1/4 of the second).
func TestAttributionHandComputed(t *testing.T) {
	m := NewCostMeter(t0)
	agent := placement.Agent{ID: "a", CPUs: 8, MemMB: 32768, PriceMicroUSDPerHour: 1e6, Active: true}
	j1 := placement.Holding{JobID: "j1", CPUs: 2, MemMB: 4096}
	j2 := placement.Holding{JobID: "j2", CPUs: 2, MemMB: 16384}
	m.Observe(t0, placement.Snapshot{Agents: []placement.Agent{agent}, Holdings: map[string][]placement.Holding{"a": {j1}}})
	m.Observe(t0.Add(30*time.Minute), placement.Snapshot{Agents: []placement.Agent{agent}, Holdings: map[string][]placement.Holding{"a": {j1, j2}}})
	agent.Active = false
	m.Observe(t0.Add(time.Hour), placement.Snapshot{Agents: []placement.Agent{agent}})
	jobs, idle := m.Attributed(t0.Add(2 * time.Hour))
	if !near(jobs["j1"].CostUSD, 0.25) || !near(jobs["j2"].CostUSD, 0.25) || !near(idle, 0.5) {
		t.Fatalf("j1 %v, j2 %v, idle %v; want 0.25, 0.25, 0.5", jobs["j1"], jobs["j2"], idle)
	}
	if !near(jobs["j1"].CPUSeconds, 2*3600) || !near(jobs["j2"].MemMBSeconds, 16384*1800) {
		t.Fatalf("resource-seconds j1 %+v j2 %+v", jobs["j1"], jobs["j2"])
	}
	total, ledger := m.Checkpoint(t0.Add(2 * time.Hour))
	if !near(total, 1) {
		t.Fatalf("meter %v, want $1", total)
	}
	// 60 one-minute buckets with idle, 60 with j1, 30 with j2.
	count := map[string]int{}
	for _, e := range ledger {
		count[e.JobID]++
	}
	if count[""] != 60 || count["j1"] != 60 || count["j2"] != 30 {
		t.Fatalf("ledger entries per job %v", count)
	}
}

// TestAttributionAddsUpToTheMeter is the property: on random schedules
// (agents going active and idle, jobs coming and going, agents shared,
// over-committed or active with no job, agents leaving the cluster), at
// any instant the per-job costs plus idle equal the meter, the ledger
// entries add up to it too, and every job's cost is exactly what a
// separate integration of the rule gives.
func TestAttributionAddsUpToTheMeter(t *testing.T) {
	for seed := int64(1); seed <= 200; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { attributionProperty(t, seed) })
	}
}

func attributionProperty(t *testing.T, seed int64) {
	rng := rand.New(rand.NewSource(seed))
	nAgents := 1 + rng.Intn(6)
	agents := make([]placement.Agent, nAgents)
	for i := range agents {
		agents[i] = placement.Agent{ID: fmt.Sprintf("agent-%d", i), CPUs: float64(2 + rng.Intn(30)),
			MemMB: float64(1024 * (2 + rng.Intn(60))), PriceMicroUSDPerHour: int64(rng.Intn(5_000_000))}
	}
	m := NewCostMeter(t0)
	want := map[string]float64{}
	wantIdle := 0.0
	now := t0
	var prev placement.Snapshot
	for step := 0; step < 60; step++ {
		// The reference: the previous snapshot held from the last instant
		// to now, attributed by the rule.
		dt := time.Duration(rng.Int63n(int64(10 * time.Minute)))
		if rng.Intn(5) == 0 {
			dt = time.Duration(rng.Intn(3)) * LedgerBucket // bucket edges, zero steps
		}
		next := now.Add(dt)
		for _, a := range prev.Agents {
			if !a.Active {
				continue
			}
			cost := float64(a.PriceMicroUSDPerHour) * dt.Hours() / 1e6
			holds := prev.Holdings[a.ID]
			given := 0.0
			for i, f := range Shares(a.CPUs, a.MemMB, holds) {
				want[holds[i].JobID] += cost * f
				given += cost * f
			}
			wantIdle += cost - given
		}
		now = next
		// A new random cluster state at now.
		var s placement.Snapshot
		s.Holdings = map[string][]placement.Holding{}
		for _, a := range agents {
			if rng.Intn(8) == 0 {
				continue // gone from the cluster for now
			}
			a.Active = rng.Intn(3) > 0
			if a.Active && rng.Intn(4) > 0 {
				for k := rng.Intn(4); k >= 0; k-- {
					s.Holdings[a.ID] = append(s.Holdings[a.ID], placement.Holding{
						JobID: fmt.Sprintf("job-%d", rng.Intn(8)),
						CPUs:  float64(rng.Intn(int(a.CPUs) + 1)), MemMB: float64(rng.Intn(int(a.MemMB) + 1))})
				}
			}
			s.Agents = append(s.Agents, a)
		}
		m.Observe(now, s)
		prev = s
		if rng.Intn(4) == 0 {
			total, ledger := m.Checkpoint(now)
			sum := 0.0
			for _, e := range ledger {
				sum += e.CostUSD
			}
			if !roughly(sum, total) {
				t.Fatalf("step %d: ledger adds up to %v, meter %v", step, sum, total)
			}
		}
	}
	at := now.Add(time.Duration(rng.Int63n(int64(time.Hour))))
	// Every agent is left as the last snapshot had it until at.
	for _, a := range prev.Agents {
		if !a.Active {
			continue
		}
		cost := float64(a.PriceMicroUSDPerHour) * at.Sub(now).Hours() / 1e6
		holds := prev.Holdings[a.ID]
		given := 0.0
		for i, f := range Shares(a.CPUs, a.MemMB, holds) {
			want[holds[i].JobID] += cost * f
			given += cost * f
		}
		wantIdle += cost - given
	}
	jobs, idle := m.Attributed(at)
	total := m.TotalUSD(at)
	sum := idle
	for id, u := range jobs {
		sum += u.CostUSD
		if !roughly(u.CostUSD, want[id]) {
			t.Errorf("job %s: attributed $%v, the rule gives $%v", id, u.CostUSD, want[id])
		}
	}
	for id, w := range want {
		if _, ok := jobs[id]; !ok && w > 1e-12 {
			t.Errorf("job %s: nothing attributed, the rule gives $%v", id, w)
		}
	}
	if !roughly(idle, wantIdle) {
		t.Errorf("idle $%v, the rule gives $%v", idle, wantIdle)
	}
	if !roughly(sum, total) {
		t.Fatalf("per-job + idle = $%v, meter $%v", sum, total)
	}
	_, ledger := m.Checkpoint(at)
	lsum := 0.0
	for _, e := range ledger {
		lsum += e.CostUSD
		if e.Bucket.Truncate(LedgerBucket) != e.Bucket {
			t.Fatalf("entry bucket %v not on a %v edge", e.Bucket, LedgerBucket)
		}
	}
	if !roughly(lsum, total) {
		t.Fatalf("ledger $%v, meter $%v", lsum, total)
	}
}

// roughly: equal within rounding (1e-9 relative, 1e-12 absolute).
func roughly(a, b float64) bool {
	return math.Abs(a-b) <= 1e-12+1e-9*math.Max(math.Abs(a), math.Abs(b))
}

// TestForgetBefore: saved buckets are dropped, the open one is kept, and a
// job that holds nothing any more is forgotten.
func TestForgetBefore(t *testing.T) {
	m := NewCostMeter(t0)
	agent := placement.Agent{ID: "a", CPUs: 4, MemMB: 4096, PriceMicroUSDPerHour: 1e6, Active: true}
	m.Observe(t0, placement.Snapshot{Agents: []placement.Agent{agent}, Holdings: map[string][]placement.Holding{"a": {{JobID: "j", CPUs: 4}}}})
	m.Observe(t0.Add(90*time.Second), placement.Snapshot{Agents: []placement.Agent{agent}, Holdings: map[string][]placement.Holding{"a": {{JobID: "k", CPUs: 2}}}})
	m.Checkpoint(t0.Add(150 * time.Second))
	m.ForgetBefore(t0.Add(150 * time.Second))
	_, kept := m.Checkpoint(t0.Add(150 * time.Second))
	for _, e := range kept {
		if e.Bucket.Before(t0.Add(2 * time.Minute)) {
			t.Errorf("entry of a saved bucket kept: %+v", e)
		}
	}
	if len(kept) == 0 {
		t.Fatal("the open bucket's entries were dropped")
	}
	jobs, _ := m.Attributed(t0.Add(150 * time.Second))
	if _, ok := jobs["j"]; ok {
		t.Error("job j holds nothing and was saved, yet it is kept")
	}
	if _, ok := jobs["k"]; !ok {
		t.Error("job k still holds its agent, yet it was forgotten")
	}
}
