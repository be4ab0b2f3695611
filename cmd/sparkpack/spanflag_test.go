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

// TestParseSpanRefusesNonSpans: every caller asks a window's length or a
// step's width, so a value that is not a positive, finite span that fits a
// time.Duration is refused with the forms it takes (NaNd was accepted and
// became a huge negative duration; -1h and 0s were accepted as spans).
func TestParseSpanRefusesNonSpans(t *testing.T) {
	for _, v := range []string{
		"NaNd", "nand", "Infd", "+Infd", "-Infd", "infinityd", "1e400d", "-1e400d",
		"-1d", "-0.5d", "0d", "0.0d", "1e-30d", "100001d", "1e6d",
		"-1h", "-90m", "0", "0s", "0h0m", "1e400h", "9999999999h", "2500000h",
		"", "d", "dd", "7 d", "7x", "abc",
	} {
		if d, err := parseSpan(v); err == nil {
			t.Errorf("parseSpan(%q) = %s, want an error", v, d)
		} else if !strings.Contains(err.Error(), "such as 7d") || !strings.Contains(err.Error(), "36h") {
			t.Errorf("parseSpan(%q): %q does not say what a span looks like", v, err)
		}
	}
	for v, want := range map[string]time.Duration{
		"7d": 7 * 24 * time.Hour, "1.5d": 36 * time.Hour, "+1d": 24 * time.Hour, "0x1p1d": 48 * time.Hour,
		"90m": 90 * time.Minute, "1ns": 1, "100000d": maxSpan, "2400000h": maxSpan,
	} {
		if d, err := parseSpan(v); err != nil || d != want {
			t.Errorf("parseSpan(%q) = %s, %v; want %s", v, d, err, want)
		}
	}
}

// TestSpanFlagNamesTheFlag: a refused span names the flag it was given to.
func TestSpanFlagNamesTheFlag(t *testing.T) {
	for _, args := range [][]string{
		{"usage", "--since", "NaNd"},
		{"usage", "--since", "-1h"},
		{"forecast", "--horizon", "Infd"},
		{"forecast", "--step", "-2d"},
	} {
		code, _, errOut := runCmd(t, append(args, "--server", "http://127.0.0.1:1")...)
		if code == 0 || !strings.Contains(errOut, strings.TrimLeft(args[1], "-")) || !strings.Contains(errOut, "such as 7d") {
			t.Errorf("%v: exit %d, %q; want a failure naming the flag and the forms it takes", args, code, errOut)
		}
	}
}

// FuzzParseSpan: any input is refused or gives a positive span within
// maxSpan whose Go form (what spanParam sends the server) reads back as
// the same span; nothing panics.
func FuzzParseSpan(f *testing.F) {
	for _, s := range []string{"7d", "1.5d", "36h", "90m", "1ns", "100000d", "NaNd", "Infd", "-1d", "1e400d", "0", "-5h", "1e-30d", "0x1p-60d", "9223372036854775807ns", "2562047h47m16.854775807s", "d", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		d, err := parseSpan(v)
		if err != nil {
			if d != 0 {
				t.Errorf("parseSpan(%q) refused with %s", v, d)
			}
			return
		}
		if d <= 0 || d > maxSpan {
			t.Fatalf("parseSpan(%q) = %s (%d), want in (0, %s]", v, d, int64(d), maxSpan)
		}
		back, err := parseSpan(d.String())
		if err != nil || back != d {
			t.Fatalf("parseSpan(%q) = %s, which reads back as %s, %v", v, d, back, err)
		}
	})
}
