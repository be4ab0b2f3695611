package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/api"
	"github.com/sparkpack/sparkpack/store"
)

// TestUsageTableIsByCost: sparkpack usage lists each period's groups by
// cost, highest first (ties by group, the idle remainder last), for
// --by job as for --by team; the server sends them by group, which for
// jobs is the order of their ids.
func TestUsageTableIsByCost(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	t1 := t0.Add(time.Hour)
	row := func(from time.Time, group string, cost float64) store.UsageRow {
		return store.UsageRow{From: from, To: from.Add(time.Hour), Group: group, CostUSD: cost, Jobs: map[string]int{}, Idle: group == store.UsageIdleGroup}
	}
	var rows []store.UsageRow
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(api.UsageView{By: r.URL.Query().Get("by"), From: t0, To: t0.Add(2 * time.Hour), StepSeconds: 3600, Rows: rows})
	}))
	defer srv.Close()
	for _, c := range []struct {
		by   string
		rows []store.UsageRow
		want []string // the groups in the order printed
	}{
		{"job", []store.UsageRow{row(t0, "1aaa", 0.5), row(t0, "2bbb", 3), row(t0, "3ccc", 0.5), row(t0, "4ddd", 1), row(t0, store.UsageIdleGroup, 9)},
			[]string{"2bbb", "4ddd", "1aaa", "3ccc", store.UsageIdleGroup}},
		{"team", []store.UsageRow{row(t0, "analytics", 1), row(t0, "search", 2), row(t1, "analytics", 4), row(t1, "search", 3), row(t1, store.UsageIdleGroup, 0.1)},
			[]string{"search", "analytics", "analytics", "search", store.UsageIdleGroup}},
	} {
		rows = c.rows
		code, out, errOut := runCmd(t, "usage", "--server", srv.URL, "--by", c.by)
		if code != 0 {
			t.Fatalf("usage --by %s: %d %q %q", c.by, code, out, errOut)
		}
		// Each group's line, in the order printed.
		var got []string
		for _, l := range strings.Split(out, "\n") {
			for _, f := range strings.Fields(l) {
				if slices.Contains(c.want, f) {
					got = append(got, f)
					break
				}
			}
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("usage --by %s lists %v, want %v:\n%s", c.by, got, c.want, out)
		}
	}
	rows = []store.UsageRow{row(t0, "1aaa", 0.5), row(t0, "2bbb", 3)}
	if code, out, _ := runCmd(t, "usage", "--server", srv.URL, "--by", "job", "-o", "name"); code != 0 || strings.Join(strings.Fields(out), " ") != "2bbb 1aaa" {
		t.Errorf("usage --by job -o name: %d %q, want 2bbb then 1aaa", code, out)
	}
	// The jobs without a team (or the label) are a group without a name:
	// -o name lists names, one a line, as the other -o name list ids, so
	// it is not an empty line; standard error says it is left out.
	rows = []store.UsageRow{row(t0, "analytics", 1), row(t0, "", 2), row(t1, "", 1), row(t0, store.UsageIdleGroup, 3)}
	for _, c := range []struct{ by, note string }{
		{"team", "the jobs without a team are not listed"},
		{"label:env", "the jobs without the label env are not listed"},
	} {
		code, out, errOut := runCmd(t, "usage", "--server", srv.URL, "--by", c.by, "-o", "name")
		if code != 0 || out != "analytics\n" || !strings.Contains(errOut, c.note) {
			t.Errorf("usage --by %s -o name with team-less usage: %d %q, stderr %q; want analytics alone, and a note", c.by, code, out, errOut)
		}
	}
	rows = []store.UsageRow{row(t0, "analytics", 1)}
	if code, out, errOut := runCmd(t, "usage", "--server", srv.URL, "-o", "name"); code != 0 || out != "analytics\n" || errOut != "" {
		t.Errorf("usage -o name, every job with a team: %d %q, stderr %q; want analytics and no note", code, out, errOut)
	}
}
