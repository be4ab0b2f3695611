package scheduler

import (
	"fmt"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/placement"
)

// BenchmarkObserveWithHoldings: one Observe of a steady 30,000-agent
// snapshot, half of the agents active with two jobs each (a pass's cost
// meter step), with and without holdings.
func BenchmarkObserveWithHoldings(b *testing.B) {
	for _, withHoldings := range []bool{false, true} {
		b.Run(fmt.Sprintf("holdings=%v", withHoldings), func(b *testing.B) {
			s := placement.Snapshot{Holdings: map[string][]placement.Holding{}}
			for i := 0; i < 30000; i++ {
				a := placement.Agent{ID: fmt.Sprintf("agent-%05d", i), CPUs: 16, MemMB: 65536, PriceMicroUSDPerHour: 500000, Active: i%2 == 0}
				s.Agents = append(s.Agents, a)
				if a.Active && withHoldings {
					s.Holdings[a.ID] = []placement.Holding{{JobID: fmt.Sprintf("job-%d", i), CPUs: 4, MemMB: 8192}, {JobID: fmt.Sprintf("job-%d", i+1), CPUs: 8, MemMB: 8192}}
				}
			}
			m := NewCostMeter(t0)
			m.Observe(t0, s)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				m.Observe(t0.Add(time.Duration(i+1)*time.Second), s)
			}
		})
	}
}
