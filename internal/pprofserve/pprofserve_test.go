package pprofserve

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestStartServesProfilesUntilCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	addr, err := Start(ctx, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get("http://" + addr + "/debug/pprof/goroutine?debug=1")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(b), "goroutine profile") {
		t.Fatalf("HTTP %d: %.200s", resp.StatusCode, b)
	}
	cancel()
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, err := http.Get("http://" + addr + "/debug/pprof/")
		if err != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("still serving after the context ended")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := Start(context.Background(), "256.0.0.1:bad"); err == nil {
		t.Fatal("a bad address was accepted")
	}
}
