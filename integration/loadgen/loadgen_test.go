package loadgen

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"
	"time"
)

func TestPercentile(t *testing.T) {
	ds := []time.Duration{5, 1, 4, 2, 3, 10, 9, 8, 7, 6}
	for _, c := range []struct {
		p    float64
		want time.Duration
	}{{50, 5}, {90, 9}, {99, 10}, {100, 10}, {0, 1}} {
		if got := Percentile(ds, c.p); got != c.want {
			t.Errorf("p%g = %d, want %d", c.p, got, c.want)
		}
	}
	if Percentile(nil, 50) != 0 {
		t.Error("empty")
	}
}

func TestMetricsParsing(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `# HELP x
process_resident_memory_bytes 1.048576e+08
sparkpack_scheduling_pass_seconds_bucket{kind="full",le="0.001"} 2
sparkpack_scheduling_pass_seconds_bucket{kind="full",le="0.01"} 90
sparkpack_scheduling_pass_seconds_bucket{kind="full",le="0.1"} 99
sparkpack_scheduling_pass_seconds_bucket{kind="full",le="+Inf"} 100
sparkpack_scheduling_pass_seconds_bucket{kind="incremental",le="0.001"} 7
sparkpack_scheduling_pass_seconds_bucket{kind="incremental",le="+Inf"} 7
`)
	}))
	defer srv.Close()
	c := NewClient(srv.URL, "", 1)
	ctx := context.Background()
	if v, ok, err := c.Metric(ctx, "process_resident_memory_bytes"); err != nil || !ok || v != 100<<20 {
		t.Fatalf("rss %v %v %v", v, ok, err)
	}
	if _, ok, _ := c.Metric(ctx, "process_resident"); ok {
		t.Fatal("a prefix matched another metric")
	}
	for _, c2 := range []struct {
		label string
		q     float64
		bound float64
		count float64
	}{{`kind="full"`, 0.5, 0.01, 100}, {`kind="full"`, 0.99, 0.1, 100}, {`kind="full"`, 1, math.Inf(1), 100}, {`kind="incremental"`, 0.99, 0.001, 7}} {
		b, n, err := c.HistogramQuantile(ctx, "sparkpack_scheduling_pass_seconds", c2.label, c2.q)
		if err != nil || b != c2.bound || n != c2.count {
			t.Errorf("%s q%g: %v %v %v, want %v %v", c2.label, c2.q, b, n, err, c2.bound, c2.count)
		}
	}
}

// JobBody encodes the same job as Job.
func TestJobBodyIsJob(t *testing.T) {
	for _, c := range []struct {
		id, name string
		est      float64
	}{{NewID(), "burst-1", 600}, {NewID(), `odd "name" \ é`, 0.5}} {
		var got, want map[string]any
		if err := json.Unmarshal(JobBody(c.id, c.name, 12, 2, 2048, c.est), &got); err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(Job(c.id, c.name, 12, 2, 2048, c.est))
		if err := json.Unmarshal(b, &want); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("JobBody gives %v, Job %v", got, want)
		}
	}
}
