package metrics

import (
	"context"
	"errors"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
)

type counts map[string]int

func (c counts) CountByState(context.Context) (map[string]int, error) {
	if c == nil {
		return nil, errors.New("database down")
	}
	return c, nil
}

func (c counts) DeadlineOutcomes(context.Context) (int, int, error) {
	if c == nil {
		return 0, 0, errors.New("database down")
	}
	return c["met"], c["missed"], nil
}

func scrape(t *testing.T, m *Metrics) (int, string) {
	t.Helper()
	srv := httptest.NewServer(m.Handler())
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestScrape(t *testing.T) {
	m := New(counts{"RUNNING": 2, "QUEUED": 5})
	m.OffersReceived.Add(3)
	m.Reservations.WithLabelValues("reserve", "ok").Inc()
	m.QueueLength.WithLabelValues("deadline").Set(4)
	m.ObservePlacement(3 * time.Millisecond)
	m.Refused("spark-rest", "no_credentials")
	m.Refused("spark-rest", "no_credentials")
	m.Refused("api", "rate_limited")
	m.ObserveOffers(5)
	m.ObserveDeclines(2)
	m.ObserveAccept(40 * time.Microsecond)
	m.ObserveDriverLaunch()
	m.ObserveReservation("unreserve", "ok")
	m.ObservePass(true, 70*time.Millisecond)
	m.ObservePass(true, 20*time.Millisecond)
	m.ObservePass(false, 3*time.Millisecond)
	// Gauges owned elsewhere are read at scrape time.
	scrapes := 0
	m.OnScrape(func() { scrapes++; m.SetCost(1.25, 0.96, 3) })
	code, body := scrape(t, m)
	for _, want := range []string{
		"sparkpack_offers_received_total 8",
		`sparkpack_scheduling_pass_max_seconds{kind="full"} 0.07`,
		`sparkpack_scheduling_pass_max_seconds{kind="incremental"} 0.003`,
		`sparkpack_scheduling_pass_seconds_count{kind="full"} 2`,
		"sparkpack_offers_declined_total 2",
		"sparkpack_offer_to_accept_seconds_count 1",
		"sparkpack_driver_launches_total 1",
		`sparkpack_reservation_operations_total{op="unreserve",result="ok"} 1`,
		"sparkpack_cluster_cost_usd 1.25",
		"sparkpack_burn_rate_usd_per_hour 0.96",
		"sparkpack_active_agents 3",
		`sparkpack_reservation_operations_total{op="reserve",result="ok"} 1`,
		`sparkpack_queue_length{queue="deadline"} 4`,
		`sparkpack_jobs{state="QUEUED"} 5`,
		`sparkpack_jobs{state="RUNNING"} 2`,
		"sparkpack_placement_seconds_count 1",
		"go_goroutines",
		`sparkpack_requests_refused_total{listener="spark-rest",reason="no_credentials"} 2`,
		`sparkpack_requests_refused_total{listener="api",reason="rate_limited"} 1`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("scrape lacks %q", want)
		}
	}
	if code != 200 || scrapes != 1 {
		t.Errorf("status %d, %d scrape hooks run", code, scrapes)
	}
	// A failing job count leaves that metric out; the rest is still served.
	code, body = scrape(t, New(counts(nil)))
	if code != 200 || strings.Contains(body, "sparkpack_jobs{") || !strings.Contains(body, "sparkpack_offers_received_total 0") {
		t.Errorf("failing collector: %d %q", code, body)
	}
}

// TestClusterCostNeverGoesBack: sparkpack_cluster_cost_usd is cumulative:
// a lower total than one already set while leading is not exported; only
// losing the leadership zeroes it.
func TestClusterCostNeverGoesBack(t *testing.T) {
	m := New(counts{})
	read := func() float64 {
		var out dto.Metric
		if err := m.ClusterCostUSD.Write(&out); err != nil {
			t.Fatal(err)
		}
		return out.GetGauge().GetValue()
	}
	m.SetCost(0.17275, 1, 1)
	m.SetCost(0.17195, 1, 1)
	if got := read(); got != 0.17275 {
		t.Fatalf("after a lower total: %v, want 0.17275", got)
	}
	m.SetCost(0.2, 1, 1)
	if got := read(); got != 0.2 {
		t.Fatalf("after a higher total: %v, want 0.2", got)
	}
	m.NotLeading()
	if got := read(); got != 0 {
		t.Fatalf("not leading: %v, want 0", got)
	}
	m.SetCost(0.1, 1, 1)
	if got := read(); got != 0.1 {
		t.Fatalf("leading again: %v, want 0.1", got)
	}
}
