package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/sparkpack/sparkpack/leader"
	"github.com/sparkpack/sparkpack/learned"
	"github.com/sparkpack/sparkpack/scheduler"
)

// memHistory is a run history already read (the CPU part of a reload
// only: a PostgreSQL read of as many rows adds to it).
type memHistory []scheduler.RunRecord

func (h memHistory) RunHistory(ctx context.Context, limit int) ([]scheduler.RunRecord, error) {
	return h, nil
}

// BenchmarkLeaseToScheduler is the time from a term's start (its lease)
// to its scheduler's start with a learned.DefaultLoad-run history: what a
// failover waits for before the first pass, beyond starting the framework.
// Reported as ms/lease-to-scheduler.
func BenchmarkLeaseToScheduler(b *testing.B) {
	quiet := logrus.New()
	quiet.SetOutput(io.Discard)
	rng := rand.New(rand.NewPCG(1, 2))
	t0 := time.Date(2026, 11, 26, 8, 0, 0, 0, time.UTC)
	hist := make(memHistory, learned.DefaultLoad)
	for i := range hist {
		s, e := i%200, 2+rng.IntN(8)
		secs := (float64(100+s)/float64(e) + 20) * math.Exp(0.03*rng.NormFloat64())
		hist[i] = scheduler.RunRecord{ID: int64(i + 1), JobID: fmt.Sprint("job-", i), Attempt: 1, Signature: fmt.Sprint("sig-", s),
			Executors: e, StartedAt: t0, EndedAt: t0.Add(time.Duration(secs * float64(time.Second))), Seconds: secs, Outcome: scheduler.RunFinished}
	}
	var total time.Duration
	for b.Loop() {
		h := &leadership{log: quiet, model: learned.New(), history: hist}
		var start time.Time
		h.startTerm = func(context.Context, leader.Lease) (*live, error) {
			total += time.Since(start)
			return nil, errors.New("benchmark: the term ends")
		}
		start = time.Now()
		h.lead(context.Background(), leader.Lease{Token: 1})
	}
	b.ReportMetric(float64(total.Microseconds())/1000/float64(b.N), "ms/lease-to-scheduler")
}
