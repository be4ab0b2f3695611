package mesossim

import (
	"io"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
)

// TestSubscribeRefusesFailoverTimeoutOutOfRange: as Mesos'
// validateFailoverTimeout, a failover_timeout a Duration cannot hold is an
// ERROR event (1e300 s was a negative Duration: the framework was removed
// the moment it disconnected); a week is accepted.
func TestSubscribeRefusesFailoverTimeoutOutOfRange(t *testing.T) {
	_, base := testMaster(t, Config{})
	for _, c := range []struct {
		timeout string
		refused bool
	}{{"1e300", true}, {"-1e300", true}, {"9300000000", true}, {"604800", false}} {
		body := strings.Replace(fw1Subscribe, `"failover_timeout":604800`, `"failover_timeout":`+c.timeout, 1)
		req, err := http.NewRequest(http.MethodPost, base+"/api/v1/scheduler", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json")
		client := &http.Client{Timeout: 30 * time.Second}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		// A refused subscription is one ERROR event, then the end; an
		// accepted one streams on: read its first record only.
		buf := make([]byte, 4096)
		n, _ := io.ReadAtLeast(resp.Body, buf, 1)
		resp.Body.Close()
		got := string(buf[:n])
		refused := strings.Contains(got, `"ERROR"`) && strings.Contains(got, "failover_timeout")
		if refused != c.refused {
			t.Errorf("failover_timeout %s: refused %v, want %v: %s", c.timeout, refused, c.refused, got)
		}
	}
}

// TestTruthWallSaturates: a run longer than a Duration holds waits the
// longest Duration, not a negative one (finished at once).
func TestTruthWallSaturates(t *testing.T) {
	for _, c := range []struct {
		secs, scale float64
		want        time.Duration
	}{
		{1.5, 1, 1500 * time.Millisecond},
		{10, 0.1, time.Second},
		{1e17, 1, math.MaxInt64},
		{math.Inf(1), 1, math.MaxInt64},
		{math.NaN(), 1, 0},
		{-5, 1, 0},
	} {
		if got := truthWall(c.secs, c.scale); got != c.want {
			t.Errorf("truthWall(%g, %g) = %v, want %v", c.secs, c.scale, got, c.want)
		}
	}
}

// TestConfigRefusesNaN: a NaN or infinite time scale, and NaN fault
// rates, are errors (NaN passed "<= 0" and "< 0": every task's wall time
// was NaN, and the rates were taken as 0).
func TestConfigRefusesNaN(t *testing.T) {
	for _, c := range []Config{
		{TimeScale: math.NaN()},
		{TimeScale: math.Inf(1)},
		{TaskFailureRate: math.NaN()},
		{TaskLostRate: math.NaN()},
	} {
		c.Logger = discardLogger()
		if m, err := New(c); err == nil {
			m.Close()
			t.Errorf("New(%+v) accepted", c)
		}
	}
	m, err := New(Config{TimeScale: 0.5, TaskFailureRate: 0.1, Logger: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	m.Close()
}

// TestRefuseSecondsAsMesos: as Mesos' allocator, a negative
// refuse_seconds takes the default (5 s) instead of making no filter;
// more than 365 days is 365 days; NaN makes none (Mesos' filter of NaN
// has already expired).
func TestRefuseSecondsAsMesos(t *testing.T) {
	m, err := New(Config{Logger: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	for _, c := range []struct {
		secs float64
		want time.Duration
	}{
		{-1, 5 * time.Second},
		{1e300, 365 * 24 * time.Hour},
		{10, 10 * time.Second},
	} {
		fw := &framework{}
		secs := c.secs
		before := time.Now()
		m.addFilterLocked(fw, "r", "a", Res{{v: 1000}}, &mesos.Filters{RefuseSeconds: &secs})
		after := time.Now()
		fs := fw.filters[filterKey{"r", "a"}]
		if len(fs) != 1 || fs[0].until.Before(before.Add(c.want)) || fs[0].until.After(after.Add(c.want)) {
			t.Errorf("refuse_seconds %v: filters %+v, want one until now + %s", c.secs, fs, c.want)
		}
	}
	fw, nan := &framework{}, math.NaN()
	m.addFilterLocked(fw, "r", "a", Res{{v: 1000}}, &mesos.Filters{RefuseSeconds: &nan})
	if len(fw.filters) != 0 {
		t.Errorf("refuse_seconds NaN: filters %+v, want none", fw.filters)
	}
}
