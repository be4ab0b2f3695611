package store

import (
	"context"
	"testing"

	"github.com/sparkpack/sparkpack/scheduler"
)

// TestListJobsSearch: q finds jobs by a piece of their name (any case), the
// start of their id, or a label key=value; LIKE's wildcards are taken
// literally.
func TestListJobsSearch(t *testing.T) {
	s, _ := openStore(t)
	ctx := context.Background()
	mk := func(name string, labels map[string]string) string {
		t.Helper()
		j, _, err := s.CreateJob(ctx, newJob(t, func(sp *scheduler.Spec) { sp.Name, sp.Labels = name, labels }), "")
		if err != nil {
			t.Fatal(err)
		}
		return j.ID
	}
	wc := mk("WordCount-20g", map[string]string{"team": "analytics"})
	srt := mk("sort_100%", map[string]string{"team": "ml"})
	mk("pagerank", nil)
	cases := []struct {
		q    string
		want []string
	}{
		{"wordcount", []string{wc}},
		{"COUNT-2", []string{wc}},
		{wc[:8], []string{wc}},
		{"team=ml", []string{srt}},
		{"100%", []string{srt}},
		{"sort_", []string{srt}},
		{"%", []string{srt}},     // only the name that holds a %
		{"_", []string{srt}},     // only the name that holds a _
		{"nothing-like-it", nil}, // no match
		{"team=nobody", nil},     // no such label
	}
	for _, tc := range cases {
		jobs, _, err := s.ListJobs(ctx, ListOptions{Search: tc.q})
		if err != nil {
			t.Fatalf("%q: %v", tc.q, err)
		}
		var got []string
		for _, j := range jobs {
			got = append(got, j.ID)
		}
		if len(got) != len(tc.want) || (len(got) > 0 && got[0] != tc.want[0]) {
			t.Errorf("search %q: got %v, want %v", tc.q, got, tc.want)
		}
	}
}
