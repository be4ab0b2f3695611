package metrics

import (
	"context"
	"strings"
	"testing"
	"time"
)

type outcomes struct{ met, missed int }

func (outcomes) CountByState(context.Context) (map[string]int, error) { return map[string]int{}, nil }
func (o outcomes) DeadlineOutcomes(context.Context) (int, int, error) {
	return o.met, o.missed, nil
}

func TestDeadlineOutcomesMetric(t *testing.T) {
	_, body := scrape(t, New(outcomes{met: 7, missed: 2}))
	for _, want := range []string{
		`sparkpack_deadline_jobs_ended_total{outcome="met"} 7`,
		`sparkpack_deadline_jobs_ended_total{outcome="missed"} 2`,
		"# TYPE sparkpack_deadline_jobs_ended_total counter",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("scrape lacks %q", want)
		}
	}
}

func TestWaitAndSavingsMetrics(t *testing.T) {
	m := New(outcomes{})
	_, body := scrape(t, m)
	if strings.Contains(body, "sparkpack_power_savings_usd") {
		t.Fatal("savings shown before any bill is known")
	}
	m.ObserveWait(90 * time.Second)
	m.ObserveWait(-time.Second) // ignored
	m.SetPowerSavings(1.5)
	m.SetPowerSavings(2.25)
	_, body = scrape(t, m)
	for _, want := range []string{"sparkpack_job_wait_seconds_count 1", `sparkpack_job_wait_seconds_bucket{le="120"} 1`,
		`sparkpack_job_wait_seconds_bucket{le="60"} 0`, "sparkpack_power_savings_usd 2.25"} {
		if !strings.Contains(body, want) {
			t.Errorf("scrape lacks %q", want)
		}
	}
}
