package main

import (
	"bytes"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/api"
	"github.com/sparkpack/sparkpack/clusterspec"
	"github.com/sparkpack/sparkpack/scheduler"
	"github.com/sparkpack/sparkpack/store"
)

// TestSampleWavesShowTheProduct checks the story of the demo's sample
// against the thesis cluster: a wave asks for more than the cluster holds
// (so jobs queue), has deadline jobs after regular ones (EDF lets them
// pass), a big job arriving when the cluster is full, admissible
// deadlines, and gaps a person can follow; later waves bring new jobs.
func TestSampleWavesShowTheProduct(t *testing.T) {
	capa := clusterCapacity(clusterspec.Thesis14())
	clusterCPU := capa.CPUs
	ids := map[string]bool{}
	for _, start := range []struct {
		hour int
		seed uint64
	}{{16, 1}, {0, 2}, {4, 3}, {23, 4}} {
		s, err := newSampler(start.hour, start.seed)
		if err != nil {
			t.Fatal(err)
		}
		testWaves(t, s, capa, clusterCPU, ids)
	}
}

func testWaves(t *testing.T, s *sampler, capa capacity, clusterCPU float64, ids map[string]bool) {
	for wave := 1; wave <= 4; wave++ {
		jobs := s.wave(wave, capa)
		if len(jobs) < minWave+2 || len(jobs) > maxWave+2 {
			t.Fatalf("wave %d has %d jobs", wave, len(jobs))
		}
		// Demand in flight when the big job arrives: jobs run far longer
		// than the wave takes to arrive up to there.
		var arrival, demand float64
		var bigIndex, lastDeadlineAfterBig, deadlines = -1, -1, 0
		for i, j := range jobs {
			if ids[j.spec["id"].(string)] {
				t.Fatalf("job id %v reused", j.spec["id"])
			}
			ids[j.spec["id"].(string)] = true
			if i > 0 && (j.gap < minGap || j.gap > maxGap) {
				t.Errorf("wave %d job %d: gap %s outside [%s, %s]", wave, i, j.gap, minGap, maxGap)
			}
			if i > 0 {
				arrival += j.gap.Seconds()
			}
			if (j.run < minRun && j.kind == "trace") || j.run > maxRun {
				t.Errorf("wave %d job %s runs %s", wave, j.name(), j.run)
			}
			if j.deadline > 0 {
				deadlines++
				if j.deadline <= j.run {
					t.Errorf("job %s: deadline %s cannot be met by a run of %s", j.name(), j.deadline, j.run)
				}
				if bigIndex >= 0 {
					lastDeadlineAfterBig = i
				}
			}
			cpus := j.cpus()
			if j.kind == "big" {
				bigIndex = i
				if demand+cpus <= clusterCPU {
					t.Errorf("wave %d: the big job (%g cpus) arrives when %g of %g cpus are asked for: it would not wait", wave, cpus, demand, clusterCPU)
				}
				if arrival > minRun.Seconds() {
					t.Errorf("wave %d: the big job arrives %gs into the wave, after the first jobs may have ended", wave, arrival)
				}
			}
			demand += cpus
			b := j.body(4)
			if d, ok := b["deadline"].(float64); j.deadline > 0 && (!ok || d != j.deadline.Seconds()/4) {
				t.Errorf("job %s: body deadline %v, want %g wall seconds at speed 4", j.name(), b["deadline"], j.deadline.Seconds()/4)
			}
		}
		if bigIndex < 0 || lastDeadlineAfterBig < 0 {
			t.Errorf("wave %d: big job at %d, deadline job after it at %d", wave, bigIndex, lastDeadlineAfterBig)
		}
		if deadlines < 3 || deadlines > len(jobs)*2/3 {
			t.Errorf("wave %d: %d deadline jobs", wave, deadlines)
		}
		if arrival > 2*waveSpan.Seconds() {
			t.Errorf("wave %d takes %gs to arrive", wave, arrival)
		}
		if demand <= 1.5*clusterCPU {
			t.Errorf("wave %d asks for %g cpus in all; the cluster has %g: it would not fill", wave, demand, clusterCPU)
		}
	}
}

func TestListenDemoFallsBackToAFreePort(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	var out bytes.Buffer
	ln, err := listenDemo(busy.Addr().String(), "listen", false, &out)
	if err != nil {
		t.Fatalf("default address busy: %v", err)
	}
	ln.Close()
	if ln.Addr().String() == busy.Addr().String() || !strings.Contains(out.String(), "in use; using "+ln.Addr().String()) {
		t.Fatalf("fell back to %s, said %q", ln.Addr(), out.String())
	}
	// Given on the command line, a busy address is an error that says
	// how to choose another, with make too.
	_, err = listenDemo(busy.Addr().String(), "listen", true, &out)
	if err == nil || !strings.Contains(err.Error(), `make demo ARGS="--listen 127.0.0.1:PORT"`) {
		t.Fatalf("explicit busy address: %v", err)
	}
}

func TestOutcomeLine(t *testing.T) {
	at := func(s int) *time.Time { x := time.Date(2026, 1, 1, 0, 0, s, 0, time.UTC); return &x }
	cost := 0.0123
	base := scheduler.Job{Spec: scheduler.Spec{ID: "6f1d2c1e-8a7b-4c1d-9e2f-3a4b5c6d7e8f", Name: "wc"}}
	cases := []struct {
		name        string
		mod         func(*api.JobView)
		want        []string
		not         []string
		met, missed bool
	}{
		{"met", func(v *api.JobView) {
			v.State, v.StartedAt, v.FinishedAt, v.DeadlineAt, v.CostUSD = scheduler.Finished, at(0), at(40), at(50), &cost
			v.Placement = []store.PlacementRow{{AgentID: "S1", Hostname: "agent-02", Executors: 1}}
		}, []string{"demo: job wc FINISHED", "ran 40s", "deadline met with 10s to spare", "$0.0123", "on agent-02"}, nil, true, false},
		{"missed", func(v *api.JobView) {
			v.State, v.StartedAt, v.FinishedAt, v.DeadlineAt = scheduler.Finished, at(0), at(40), at(30)
		}, []string{"deadline MISSED by 10s"}, nil, false, true},
		{"missed by a fraction of a second", func(v *api.JobView) {
			late := at(30).Add(400 * time.Millisecond)
			v.State, v.StartedAt, v.FinishedAt, v.DeadlineAt = scheduler.Finished, at(0), &late, at(30)
		}, []string{"deadline MISSED by 400ms"}, []string{"by 0s"}, false, true},
		{"cancelled deadline job is not missed", func(v *api.JobView) {
			v.State, v.FinishedAt, v.DeadlineAt = scheduler.Cancelled, at(40), at(30)
			v.Events = []store.Event{{To: scheduler.Cancelled, Reason: "cancelled through the API"}}
		}, []string{"CANCELLED: cancelled through the API"}, []string{"missed", "MISSED"}, false, false},
		{"rejected", func(v *api.JobView) {
			v.State, v.FinishedAt, v.DeadlineAt, v.WaitingReason = scheduler.Rejected, at(1), at(0), "deadline is already past"
		}, []string{"REJECTED: deadline is already past"}, []string{"missed"}, false, false},
	}
	for _, tc := range cases {
		v := api.JobView{Job: base}
		tc.mod(&v)
		line, met, missed := outcomeLine(v)
		for _, w := range tc.want {
			if !strings.Contains(line, w) {
				t.Errorf("%s: %q lacks %q", tc.name, line, w)
			}
		}
		for _, w := range tc.not {
			if strings.Contains(line, w) {
				t.Errorf("%s: %q has %q", tc.name, line, w)
			}
		}
		if met != tc.met || missed != tc.missed {
			t.Errorf("%s: met %v missed %v", tc.name, met, missed)
		}
	}
}
