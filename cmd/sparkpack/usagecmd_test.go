package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/sparkpack/sparkpack/api"
	"github.com/sparkpack/sparkpack/chargeback"
	"github.com/sparkpack/sparkpack/internal/pgtest"
	"github.com/sparkpack/sparkpack/scheduler"
	"github.com/sparkpack/sparkpack/store"
)

// TestCLIUsage: sparkpack usage shows each team's attributed cost, the
// idle remainder and the total, as a table, JSON and CSV, and says which
// flag is wrong.
func TestCLIUsage(t *testing.T) {
	dbURL := pgtest.URL(t)
	server := startServeOn(t, dbURL)
	ids := map[string]string{}
	for _, team := range []string{"analytics", "search"} {
		code, out, errOut := runCmd(t, append(append([]string{"submit", "--server", server, "-o", "name"}, jobFlags...), "--executor-memory", "1g", "--label", "team="+team)...)
		if code != 0 {
			t.Fatalf("submit: %d %q %q", code, out, errOut)
		}
		ids[team] = strings.TrimSpace(out)
	}
	log := logrus.New()
	log.SetOutput(io.Discard)
	st, err := store.Open(context.Background(), dbURL, store.WithLogger(log))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	b := time.Now().Add(-time.Hour).Truncate(time.Minute)
	if err := st.SaveCost(context.Background(), "6f1c4d4e-0000-4000-8000-000000000001", 4, []scheduler.LedgerEntry{
		{Bucket: b, JobID: ids["analytics"], Usage: scheduler.Usage{CostUSD: 3, CPUSeconds: 3600 * 4}},
		{Bucket: b, JobID: ids["search"], Usage: scheduler.Usage{CostUSD: 0.75}},
		{Bucket: b, JobID: "", Usage: scheduler.Usage{CostUSD: 0.25}},
	}); err != nil {
		t.Fatal(err)
	}

	code, out, errOut := runCmd(t, "usage", "--server", server)
	if code != 0 {
		t.Fatalf("usage: %d %q %q", code, out, errOut)
	}
	for _, want := range []string{"TEAM", "analytics", "$3.0000", "75.0%", "4.00", "search", "$0.7500", "(idle)", "$0.2500", "total $4.0000"} {
		if !strings.Contains(out, want) {
			t.Errorf("the table lacks %q:\n%s", want, out)
		}
	}

	code, out, _ = runCmd(t, "usage", "--server", server, "-o", "json", "--since", "2h", "--step", "1h")
	var v api.UsageView
	if code != 0 || json.Unmarshal([]byte(out), &v) != nil || v.StepSeconds != 3600 || len(v.Rows) != 3 {
		t.Fatalf("json: %d %q", code, out)
	}

	code, out, _ = runCmd(t, "usage", "--server", server, "--csv", "--by", "job")
	recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if code != 0 || err != nil || len(recs) != 4 || recs[0][0] != "from" {
		t.Fatalf("csv: %d %v %q", code, err, out)
	}

	code, out, _ = runCmd(t, "usage", "--server", server, "-o", "name")
	if code != 0 || strings.Fields(out)[0] != "analytics" || strings.Fields(out)[1] != "search" || len(strings.Fields(out)) != 2 {
		t.Fatalf("-o name: %d %q", code, out)
	}

	code, _, errOut = runCmd(t, "usage", "--server", server, "--step", "90s")
	if code == 0 || !strings.Contains(errOut, "step") {
		t.Fatalf("a bad step: %d %q", code, errOut)
	}
	code, _, errOut = runCmd(t, "usage", "--server", server, "--by", "tenant")
	if code == 0 || !strings.Contains(errOut, "by must be team, job or label:KEY") {
		t.Fatalf("a bad grouping: %d %q", code, errOut)
	}
}

// startServeOn runs serve (API and store, no Mesos) on dbURL.
func startServeOn(t *testing.T, dbURL string, mod ...func(*serveConfig)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	log := logrus.New()
	log.SetOutput(io.Discard)
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	done := make(chan error, 1)
	c := serveConfig{databaseURL: dbURL, listen: ln.Addr().String(), policy: "bfd", logLevel: "info", shutdownTimeout: 5 * time.Second}
	for _, m := range mod {
		m(&c)
	}
	go func() { done <- serve(ctx, c, log, ln, ready) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	select {
	case addr := <-ready:
		return "http://" + addr
	case err := <-done:
		t.Fatalf("serve stopped: %v", err)
	case <-time.After(60 * time.Second):
		t.Fatal("serve did not start")
	}
	return ""
}

// TestServeTeamBudgets: with --team-budgets, a team whose attributed cost
// today passed its reject budget has its new jobs refused (403 naming the
// budget, as the CLI shows it), another team submits, and usage by team
// shows the budgets.
func TestServeTeamBudgets(t *testing.T) {
	dbURL := pgtest.URL(t)
	budgets, err := chargeback.ParseStatic("analytics=1/day:reject,search=100/day")
	if err != nil {
		t.Fatal(err)
	}
	server := startServeOn(t, dbURL, func(c *serveConfig) { c.budgets = budgets })
	sub := func(team string) (int, string, string) {
		return runCmd(t, append(append([]string{"submit", "--server", server, "-o", "name"}, jobFlags...), "--executor-memory", "1g", "--label", "team="+team)...)
	}
	code, out, errOut := sub("analytics")
	if code != 0 {
		t.Fatalf("submit before any spend: %d %q %q", code, out, errOut)
	}
	log := logrus.New()
	log.SetOutput(io.Discard)
	st, err := store.Open(context.Background(), dbURL, store.WithLogger(log))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.SaveCost(context.Background(), "6f1c4d4e-0000-4000-8000-000000000002", 2, []scheduler.LedgerEntry{
		{Bucket: time.Now().UTC().Truncate(time.Minute), JobID: strings.TrimSpace(out), Usage: scheduler.Usage{CostUSD: 2}},
	}); err != nil {
		t.Fatal(err)
	}
	// The tracker reads the spend every few seconds.
	deadline := time.Now().Add(90 * time.Second)
	for {
		code, out, errOut = sub("analytics")
		if code != 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("analytics spent $2 of a $1 reject budget, yet its jobs are still accepted (%q)", out)
		}
		time.Sleep(500 * time.Millisecond)
	}
	if !strings.Contains(errOut, "team analytics is over its daily budget $1.00") {
		t.Fatalf("refusal: %q", errOut)
	}
	if code, out, errOut := sub("search"); code != 0 {
		t.Fatalf("another team's submission: %d %q %q", code, out, errOut)
	}
	code, out, _ = runCmd(t, "usage", "--server", server, "-o", "json")
	var v api.UsageView
	if code != 0 || json.Unmarshal([]byte(out), &v) != nil || len(v.Budgets) != 2 || !v.Budgets[0].Over || v.Budgets[1].Over || v.Budgets[1].LeftUSD != 100 {
		t.Fatalf("usage budgets: %d %q", code, out)
	}
}
