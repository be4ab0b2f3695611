package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/sirupsen/logrus/hooks/test"

	"github.com/sparkpack/sparkpack/api"
)

// SIGHUP reloads the tokens file (a bad file keeps the tokens in force)
// and never ends serve: before onHangup, nothing caught SIGHUP without
// --tls-cert or --teams, so `systemctl reload` killed sparkpack.
func TestHangupReloadsTokens(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "tokens")
	write := func(s string) {
		t.Helper()
		if err := os.WriteFile(file, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("ci:aaaaaaaaaaaaaaaaaaaaaaaa:submit\n")
	tokens, err := api.LoadTokens(file, "")
	if err != nil {
		t.Fatal(err)
	}
	log, hook := test.NewNullLogger()
	log.SetLevel(logrus.DebugLevel)
	stop := onHangup(file, tokens, log)
	defer stop()

	names := func() string { return strings.Join(tokens.Names(), ";") }
	hangup := func() {
		t.Helper()
		if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
			t.Fatal(err)
		}
	}
	waitLog := func(part string) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for time.Now().Before(deadline) {
			for _, e := range hook.AllEntries() {
				if strings.Contains(e.Message, part) {
					hook.Reset()
					return
				}
			}
			time.Sleep(10 * time.Millisecond)
		}
		t.Fatalf("no log %q after SIGHUP; logs: %v", part, hook.AllEntries())
	}

	write("ops:bbbbbbbbbbbbbbbbbbbbbbbb:admin\netl:cccccccccccccccccccccccc:submit:analytics\n")
	hangup()
	waitLog("tokens file reloaded")
	if got := names(); got != "ops (admin);etl (submit; team analytics)" {
		t.Fatalf("tokens after a reload: %s", got)
	}

	write("this line is no token\n")
	hangup()
	waitLog("was not reloaded")
	if got := names(); got != "ops (admin);etl (submit; team analytics)" {
		t.Fatalf("a bad file replaced the tokens in force: %s", got)
	}
}
