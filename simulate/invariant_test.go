package simulate

import (
	"context"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/clusterspec"
	"github.com/sparkpack/sparkpack/placement"
	"github.com/sparkpack/sparkpack/scheduler"
	"github.com/sparkpack/sparkpack/workload"
)

// TestAlgorithm3Invariants checks, after every scheduling pass of a loaded
// hour, the rules of Algorithm 3 on the real queues and cluster: when no
// deadline job waits, no waiting regular job fits the cluster as it is
// (it would have been started: skip-and-try-next); when deadline jobs
// wait, every regular job's reason says so; the deadline queue is in EDF
// order.
func TestAlgorithm3Invariants(t *testing.T) {
	jobs := Scale(workload.Hour(loadTrace(t), 7), 3)
	for _, pol := range []string{"bfd", "fifo-spread"} {
		t.Run(pol, func(t *testing.T) {
			passes, bad := 0, 0
			checkInvariant = func(now time.Time, s placement.Snapshot, q scheduler.QueuesView) {
				passes++
				for i := 1; i < len(q.Deadline); i++ {
					a, b := q.Deadline[i-1], q.Deadline[i]
					if a.DeadlineAt != nil && b.DeadlineAt != nil && a.DeadlineAt.After(*b.DeadlineAt) {
						t.Errorf("%s: deadline queue not EDF: %s before %s", now, a.ID, b.ID)
					}
				}
				for _, j := range q.Regular {
					if len(q.Deadline) > 0 {
						if j.WaitingReason != scheduler.ReasonDeadlineFirst {
							t.Errorf("%s: %s waits behind deadline jobs with reason %q", now, j.ID, j.WaitingReason)
						}
						continue
					}
					d := j.Demand()
					n := 0
					for _, a := range s.Agents {
						n += placement.FitsOn(a, d)
					}
					if n >= d.Executors {
						bad++
						t.Errorf("%s: %s fits but waits (%q)", now, j.ID, j.WaitingReason)
					}
				}
			}
			defer func() { checkInvariant = nil }()
			p, _ := LookupPolicy(pol)
			r, err := Run(context.Background(), Options{Jobs: jobs, From: 7 * time.Hour, Cluster: clusterspec.Thesis14(), Policy: p, DeadlineFraction: 0.5, Slack: 2, Seed: 3})
			if err != nil || r.Completed != len(jobs) || passes < len(jobs) || bad > 0 {
				t.Fatalf("%v: %d passes, %d violations, %+v", err, passes, bad, r)
			}
		})
	}
}
