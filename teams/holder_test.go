package teams

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
)

// TestWatcherKeepsPreviousOnBadReload: a refused file (a parse error, or a
// configuration Check refuses) leaves the one in force; a good one replaces it.
func TestWatcherKeepsPreviousOnBadReload(t *testing.T) {
	path := filepath.Join(t.TempDir(), "teams")
	write := func(s string) {
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a weight=2\n")
	h := &Holder{}
	w := &Watcher{Path: path, Holder: h, Check: func(c *Config) error {
		if c.Team("a").GuaranteedCPUs > 100 {
			return errors.New("line 1: too big for the cluster")
		}
		return nil
	}}
	if err := w.Load(); err != nil {
		t.Fatal(err)
	}
	first := h.Get()
	if first.Team("a").Weight != 2 || h.Version() != 1 {
		t.Fatalf("loaded %+v v%d", first, h.Version())
	}
	for _, bad := range []string{"a weight=2\nb max-cpus=-1\n", "a guaranteed-cpus=500\n"} {
		write(bad)
		changed, err := w.Reload()
		if err == nil || changed || !strings.Contains(err.Error(), "line ") {
			t.Fatalf("bad file %q: changed %v err %v", bad, changed, err)
		}
		if h.Get() != first || h.Version() != 1 {
			t.Fatal("a refused file replaced the configuration in force")
		}
	}
	write("a weight=3\n")
	if changed, err := w.Reload(); err != nil || !changed || h.Get().Team("a").Weight != 3 {
		t.Fatalf("good reload: %v %v", changed, err)
	}
	if changed, err := w.Reload(); err != nil || changed {
		t.Fatalf("the same contents again: changed %v err %v", changed, err)
	}
}

// TestWatcherRunOnSignal: Run reloads when signalled.
func TestWatcherRunOnSignal(t *testing.T) {
	path := filepath.Join(t.TempDir(), "teams")
	os.WriteFile(path, []byte("a weight=1\n"), 0o644)
	h := &Holder{}
	log := logrus.New()
	log.SetOutput(io.Discard)
	w := &Watcher{Path: path, Holder: h, Log: log}
	if err := w.Load(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	hup := make(chan os.Signal, 1)
	done := make(chan struct{})
	go func() { defer close(done); w.Run(ctx, time.Hour, hup) }()
	defer func() { cancel(); <-done }()
	os.WriteFile(path, []byte("a weight=5\n"), 0o644)
	hup <- syscall.SIGHUP
	for end := time.Now().Add(30 * time.Second); h.Get().Team("a").Weight != 5; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatal("not reloaded on the signal")
		}
	}
}
