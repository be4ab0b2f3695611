package scheduler

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/teams"
)

// BenchmarkPassFullTeams is BenchmarkPassFull with a teams file of ten
// teams (weights, a guarantee, maximums) and the 100,000 waiting jobs
// spread over them: the cost of the team policy in a full pass.
func BenchmarkPassFullTeams(b *testing.B) {
	var lines []string
	for i := 0; i < 10; i++ {
		lines = append(lines, fmt.Sprintf("t%d weight=%d max-cpus=%d", i, 1+i%3, 40+i))
	}
	lines[0] += " guaranteed-cpus=8"
	cfg, err := teams.Parse(strings.NewReader(strings.Join(lines, "\n")))
	if err != nil {
		b.Fatal(err)
	}
	holder := &teams.Holder{}
	holder.Set(cfg)
	h, _ := newBatchHarness(b, Config{Teams: holder}, thesisAgents()...)
	ctx := context.Background()
	if _, err := h.core.Schedule(ctx); err != nil {
		b.Fatal(err)
	}
	for i, a := range thesisAgents() {
		h.core.JobSubmitted(h.store.add(mkJob(fmt.Sprintf("hold-%02d", i), 1, int(a.CPUs), inTeam(fmt.Sprintf("t%d", i%10)))))
	}
	for i := 0; i < 100_000; i++ {
		h.core.JobSubmitted(h.store.add(mkJob(fmt.Sprintf("w-%07d", i), 12, 2, submittedAt(time.Duration(i)*time.Millisecond), inTeam(fmt.Sprintf("t%d", i%10)))))
	}
	if _, err := h.core.Schedule(ctx); err != nil {
		b.Fatal(err)
	}
	c0 := processCPU(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		h.core.ClusterChanged()
		if _, err := h.core.Schedule(ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	reportCPU(b, c0)
}
