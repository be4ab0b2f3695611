package metrics

import (
	"context"
	"strings"
	"testing"
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
