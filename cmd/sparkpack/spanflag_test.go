package main

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestSpanFlagsTakeDays: the window flags an operator asks in days take
// them (usage --since 7d, --step 1d, forecast --horizon 2d) and send the
// server the Go duration it reads; a bad span says what to write instead
// of the flag package's bare "parse error".
func TestSpanFlagsTakeDays(t *testing.T) {
	var mu sync.Mutex
	var got []url.Values
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.URL.Query())
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"by":"team","rows":[]}`))
	}))
	defer srv.Close()
	last := func() url.Values {
		mu.Lock()
		defer mu.Unlock()
		if len(got) == 0 {
			t.Fatal("the server was not asked")
		}
		return got[len(got)-1]
	}

	before := time.Now()
	code, out, errOut := runCmd(t, "usage", "--server", srv.URL, "--since", "7d", "--step", "1d", "-o", "json")
	after := time.Now()
	if code != 0 {
		t.Fatalf("usage --since 7d: %d %q %q", code, out, errOut)
	}
	q := last()
	from, err := time.Parse(time.RFC3339, q.Get("from"))
	if err != nil {
		t.Fatalf("from %q: %v", q.Get("from"), err)
	}
	week := 7 * 24 * time.Hour
	if from.Before(before.Add(-week).Add(-time.Second)) || from.After(after.Add(-week)) {
		t.Errorf("--since 7d sent from=%s, want a week before now (%s)", from, before)
	}
	if q.Get("step") != "24h0m0s" {
		t.Errorf("--step 1d sent step=%q, want 24h0m0s", q.Get("step"))
	}

	if code, out, errOut := runCmd(t, "forecast", "--server", srv.URL, "--horizon", "2d", "--step", "1h", "-o", "json"); code != 0 {
		t.Fatalf("forecast --horizon 2d: %d %q %q", code, out, errOut)
	}
	if q := last(); q.Get("horizon") != "48h0m0s" || q.Get("step") != "1h0m0s" {
		t.Errorf("forecast --horizon 2d --step 1h sent %v", q)
	}

	for _, args := range [][]string{
		{"usage", "--since", "a week"},
		{"usage", "--since", "7x"},
		{"forecast", "--horizon", "abc"},
	} {
		code, _, errOut := runCmd(t, append(args, "--server", srv.URL)...)
		if code == 0 || strings.Contains(errOut, "parse error") || !strings.Contains(errOut, "such as 7d") {
			t.Errorf("%v: exit %d, %q; want a failure naming the forms it takes", args, code, errOut)
		}
	}
	code, _, errOut = runCmd(t, "usage", "--server", srv.URL, "--step", "xd")
	if code == 0 || !strings.Contains(errOut, "--step") || !strings.Contains(errOut, "such as 7d") {
		t.Errorf("usage --step xd: exit %d, %q", code, errOut)
	}
}
