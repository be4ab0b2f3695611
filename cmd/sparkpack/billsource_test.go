package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestBillSourceOnSparkpacksClock: the emulator bills in simulated time;
// the cost view shows the bill next to the meter, which runs on wall time,
// so under --sim-speed 60 (scale 1/60) a simulated hour of a $6/h cluster
// is shown as one wall minute, $0.10, and the share saved is unchanged.
// Without a scale (sim-speed 1) the bill is as the emulator says.
func TestBillSourceOnSparkpacksClock(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"seconds":3600,"totalUSD":3,"alwaysOnUSD":6}`))
	}))
	defer srv.Close()
	b := (&billSource{url: srv.URL, client: srv.Client(), scale: 1.0 / 60}).get(context.Background())
	if b == nil || b.Seconds != 60 || b.TotalUSD != 0.05 || b.AlwaysOnUSD != 0.1 {
		t.Fatalf("scaled bill %+v; want 60 s, $0.05 of $0.10", b)
	}
	b = (&billSource{url: srv.URL, client: srv.Client()}).get(context.Background())
	if b == nil || b.Seconds != 3600 || b.TotalUSD != 3 || b.AlwaysOnUSD != 6 {
		t.Fatalf("unscaled bill %+v", b)
	}
}
