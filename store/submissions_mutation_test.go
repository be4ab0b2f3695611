package store

import (
	"context"
	"testing"
	"time"
)

// Tests written for the mutants of submissions.go that mutation testing
// found alive (scripts/mutation.sh store; docs/testing.md). Expected
// values are worked out by hand: Spark's overhead is 10% of the executor
// memory, at least 384 MB.

// TestSubmissionHistoryOddSizes: the overhead is added to an executor
// memory from 0 MB (0 + 384) up to just under 2^31 MB, not to a negative
// one or one of 2^31 - 1 MB or more (it would overflow Spark's int); a
// driver of 0 cpus or 0 MB gets the defaults (1 cpu, 1024 MB).
func TestSubmissionHistoryOddSizes(t *testing.T) {
	s, _ := openStore(t)
	ctx := context.Background()
	start := time.Now().UTC().Truncate(time.Second).Add(-time.Hour)
	cases := []struct {
		mem  string // the stored executorMemoryMB
		want float64
	}{
		{"0", 384},
		{"-5", -5},
		{"2147483646", 2147483646 + 214748364},
		{"2147483647", 2147483647},
	}
	for i, c := range cases {
		j := newJob(t, nil)
		j.SubmittedAt = start.Add(time.Duration(i) * time.Minute)
		if _, _, err := s.CreateJob(ctx, j, ""); err != nil {
			t.Fatal(err)
		}
		if _, err := s.db.ExecContext(ctx, `UPDATE jobs SET spec = jsonb_set(jsonb_set(spec, '{executorMemoryMB}', $2::jsonb),
				'{driver}', '{"cores": 0, "memoryMB": 0}'::jsonb) WHERE id = $1`, j.ID, c.mem); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.SubmissionHistory(ctx, start, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(cases) {
		t.Fatalf("%d rows, want %d", len(got), len(cases))
	}
	for i, c := range cases {
		h := got[i]
		if h.ExecutorMemMB != c.want || h.DriverCores != 1 || h.DriverMemMB != 1024 {
			t.Errorf("executor memory %s MB, driver 0 cpus 0 MB: %v MB, driver %v cpus %v MB; want %v MB, driver 1 cpu 1024 MB",
				c.mem, h.ExecutorMemMB, h.DriverCores, h.DriverMemMB, c.want)
		}
	}
}
