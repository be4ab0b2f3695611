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
	h := teamsBenchHarness(b, nil)
	ctx := context.Background()
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

// BenchmarkPreviewTeams is a preview (POST /api/v1/plan) of a deadline
// job with the teams file of BenchmarkPassFullTeams and 100,000 waiting
// deadline jobs spread over the ten teams: the cost of the pass's team
// holds in a preview (the room owed to the guaranteed team is read from
// the published deadline queue).
func BenchmarkPreviewTeams(b *testing.B) {
	h := teamsBenchHarness(b, func(i int) jobOpt { return withDeadline(time.Hour + time.Duration(i)*time.Second) })
	ctx := context.Background()
	j := mkJob("preview", 2, 2, withDeadline(30*time.Minute), inTeam("t3"))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := h.core.Preview(ctx, j, t0); err != nil {
			b.Fatal(err)
		}
	}
}

// teamsBenchHarness is a core on the thesis cluster with a teams file of
// ten teams (weights, maximums, t0 guaranteed 8 cpus), a job of each team
// holding each agent, and 100,000 waiting jobs spread over the teams
// (each with opt(i), if not nil), after a pass.
func teamsBenchHarness(b *testing.B, opt func(i int) jobOpt) *harness {
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
		opts := []jobOpt{submittedAt(time.Duration(i) * time.Millisecond), inTeam(fmt.Sprintf("t%d", i%10))}
		if opt != nil {
			opts = append(opts, opt(i))
		}
		h.core.JobSubmitted(h.store.add(mkJob(fmt.Sprintf("w-%07d", i), 12, 2, opts...)))
	}
	if _, err := h.core.Schedule(ctx); err != nil {
		b.Fatal(err)
	}
	return h
}

// BenchmarkPreviewTeamsRegular is a preview of a regular job against
// 100,000 waiting regular jobs of ten teams: its place in the pass's
// fair-share order between teams (regularAhead).
func BenchmarkPreviewTeamsRegular(b *testing.B) {
	h := teamsBenchHarness(b, nil)
	ctx := context.Background()
	j := mkJob("preview", 2, 2, inTeam("t3"))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := h.core.Preview(ctx, j, t0); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPublishTeams is the publish of the queues after a pass with the
// teams file of BenchmarkPassFullTeams and 100,000 waiting regular jobs
// over the ten teams: the regular queue is put in the pass's fair-share
// order (fairOrder over the queue on the teams' ranks). BenchmarkPublish
// is the same queue without a teams file (in the queue's own order).
func BenchmarkPublishTeams(b *testing.B) {
	benchPublish(b, teamsBenchHarness(b, nil))
}

func BenchmarkPublish(b *testing.B) {
	h := teamsBenchHarness(b, nil)
	h.core.cfg.Teams = nil
	benchPublish(b, h)
}

func benchPublish(b *testing.B, h *harness) {
	if n := h.core.jq.Len(); n < 100000 {
		b.Fatalf("%d regular jobs waiting", n)
	}
	c0 := processCPU(b)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		h.core.viewDirty = true
		h.core.publish(t0)
	}
	b.StopTimer()
	reportCPU(b, c0)
}
