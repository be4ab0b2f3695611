package realmesos

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/clusterspec"
	"github.com/sparkpack/sparkpack/internal/pgtest"
	"github.com/sparkpack/sparkpack/power"
	"github.com/sparkpack/sparkpack/store"
)

// TestDrainingAgentHeldWhileRecovered (a helper's finding: after a real
// master failover the master lists an agent only in recovered_agents
// until it re-registers, and a draining agent missing from agents went
// "left Mesos while draining" and to the provider's power-off): a real
// 1.12 master with a registry fails over while its agent, which power
// management is draining, hangs (SIGSTOP). sparkpack serve starts on the
// master that lists the agent only as recovered: it holds the agent (one
// notice) and does not power it off; once the agent goes on and
// re-registers, the drain goes on (deactivated, idle: powered off).
func TestDrainingAgentHeldWhileRecovered(t *testing.T) {
	bin := mesosBin(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	one := clusterspec.Cluster{Name: "held", Agents: []clusterspec.Agent{
		{ID: "held-S0", Hostname: "held-a1", CPUs: 2, MemMB: 2048, PricePerHour: 0.24, InstanceType: "m1.large", Location: "local"}}}
	c, err := Start(ctx, Options{Bin: bin, Cluster: one, Logf: t.Logf, MasterFlags: []string{"--registry=replicated_log", "--quorum=1"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.ResumeAgent("held-a1")
		if t.Failed() {
			t.Logf("master log:\n%s", c.MasterLog(40))
		}
		if err := c.Close(context.Background()); err != nil {
			t.Errorf("closing the cluster: %v", err)
		}
	})
	id := c.AgentID("held-a1")

	// Power management was draining the agent (its record, as a sparkpack
	// that died mid-drain left it).
	db := pgtest.URL(t)
	st, err := store.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.PutPowerRecord(ctx, power.Record{AgentID: id, Hostname: "held-a1", CPUs: 2, MemMB: 2048, PricePerHour: 0.24,
		State: power.StateDraining, Since: time.Now()}); err != nil {
		t.Fatal(err)
	}
	st.Close()

	// The master fails over while the agent hangs: it lists it only as
	// recovered.
	if err := c.PauseAgent("held-a1"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.RestartMaster(ctx, time.Second); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, time.Minute, "the restarted master lists the agent as recovered", func() bool {
		b := getAgentsJSON(ctx, c.URL)
		return strings.Contains(b, `"recovered_agents":[{`) && strings.Contains(b, id)
	})

	dir := t.TempDir()
	calls := filepath.Join(dir, "power-calls")
	prog := filepath.Join(dir, "power")
	if err := os.WriteFile(prog, []byte("#!/bin/sh\necho \"$@\" >> "+calls+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	sp := startSparkpack(t, c.URL, db, "--power-off-after", "1h", "--power-provider", "exec", "--power-exec", prog,
		"--power-warm-pool=false")
	t.Cleanup(sp.stop)
	powerCalls := func() string { b, _ := os.ReadFile(calls); return string(b) }
	waitUntil(t, 90*time.Second, "serve holds the recovered agent", func() bool {
		if got := powerCalls(); got != "" {
			t.Fatalf("power program called while the agent was only recovered: %q\n%s", got, tail(sp.logText(), 30))
		}
		return strings.Contains(sp.logText(), "agent power: held: ")
	})
	// More ticks (--power-tick 2s) on the recovered view: the hold is
	// logged at the first one, where the power-off was decided before.
	time.Sleep(6 * time.Second)
	if got := powerCalls(); got != "" {
		t.Fatalf("power program called while the agent was only recovered: %q", got)
	}
	if n := strings.Count(sp.logText(), "agent power: held: "); n != 1 {
		t.Errorf("%d held notices, want 1", n)
	}

	// The agent goes on and re-registers: the drain goes on.
	if err := c.ResumeAgent("held-a1"); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 2*time.Minute, "the agent powered off once it re-registered, deactivated and idle", func() bool {
		return strings.Contains(powerCalls(), "off "+id+" held-a1")
	})
	logs := sp.logText()
	if strings.Contains(logs, "left Mesos while draining") || !strings.Contains(logs, "deactivated and idle") {
		t.Errorf("the power-off's reason is not the drain's end:\n%s", tail(withoutRequests(logs), 40))
	}
}

// getAgentsJSON is the master's GET_AGENTS answer as JSON ("" on error).
func getAgentsJSON(ctx context.Context, url string) string {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"/api/v1", strings.NewReader(`{"type":"GET_AGENTS"}`))
	if err != nil {
		return ""
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// waitUntil polls cond every 200 ms for up to timeout.
func waitUntil(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if cond() {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("%s: not within %s", what, timeout)
}
