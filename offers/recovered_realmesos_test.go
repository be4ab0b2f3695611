package offers

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/clusterspec"
	"github.com/sparkpack/sparkpack/integration/realmesos"
)

// TestRealMasterFailoverListsRecoveredAgents: a real Mesos 1.12 master
// with a registry (replicated_log) that fails over while its agent hangs
// lists the agent only in GET_AGENTS' recovered_agents; the operator's
// GET_AGENTS read gives its id as recovered (power management holds it,
// docs/power.md) and no agent; once the agent goes on and re-registers it
// is an agent again, no longer recovered.
func TestRealMasterFailoverListsRecoveredAgents(t *testing.T) {
	bin, skip, err := realmesos.Find()
	if err != nil {
		t.Fatal(err)
	}
	if skip != "" {
		t.Skip(skip)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	one := clusterspec.Cluster{Name: "recovered", Agents: []clusterspec.Agent{
		{ID: "rec-S0", Hostname: "rec-a1", CPUs: 2, MemMB: 2048, PricePerHour: 0.24, InstanceType: "m1.large", Location: "local"}}}
	c, err := realmesos.Start(ctx, realmesos.Options{Bin: bin, Cluster: one, Logf: t.Logf,
		MasterFlags: []string{"--registry=replicated_log", "--quorum=1"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Close(context.Background()); err != nil {
			t.Errorf("closing the cluster: %v", err)
		}
	})
	ep, err := NewEndpoint(c.URL, "", "")
	if err != nil {
		t.Fatal(err)
	}
	o := NewOperator(ep)
	id := c.AgentID("rec-a1")
	// read polls GET_AGENTS until ok holds, for up to 2 minutes.
	read := func(what string, ok func(f *agentsFetch) bool) *agentsFetch {
		t.Helper()
		deadline := time.Now().Add(2 * time.Minute)
		var last *agentsFetch
		var lastErr error
		for time.Now().Before(deadline) {
			f, err := o.agentsSince(ctx, time.Now())
			if err == nil && ok(f) {
				return f
			}
			last, lastErr = f, err
			time.Sleep(200 * time.Millisecond)
		}
		t.Fatalf("%s: not within 2 minutes; last read %+v (%v)\n%s", what, last, lastErr, c.MasterLog(20))
		return nil
	}
	listed := func(f *agentsFetch) bool {
		return len(f.agents) == 1 && f.agents[0].AgentInfo.GetID().Value == id && len(f.recovered) == 0
	}
	read("the agent listed", listed)

	if err := c.PauseAgent("rec-a1"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.RestartMaster(ctx, time.Second); err != nil {
		t.Fatal(err)
	}
	f := read("the agent recovered after the failover", func(f *agentsFetch) bool { return len(f.recovered) > 0 })
	if !slices.Equal(f.recovered, []string{id}) || len(f.agents) != 0 {
		t.Fatalf("after the failover: agents %d, recovered %q; want none and [%s]", len(f.agents), f.recovered, id)
	}
	if err := c.ResumeAgent("rec-a1"); err != nil {
		t.Fatal(err)
	}
	read("the agent re-registered", listed)
}
