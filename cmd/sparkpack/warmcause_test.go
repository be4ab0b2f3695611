package main

import (
	"context"
	"testing"
	"time"

	"github.com/sirupsen/logrus/hooks/test"

	"github.com/sparkpack/sparkpack/power"
)

// onePowerRecord is a power store holding the records put in it.
type onePowerRecord struct{ recs []power.Record }

func (s *onePowerRecord) PowerRecords(context.Context) ([]power.Record, error) { return s.recs, nil }
func (s *onePowerRecord) PutPowerRecord(_ context.Context, r power.Record) error {
	s.recs = []power.Record{r}
	return nil
}

// noMesos is a master that accepts every (de)activation.
type noMesos struct{}

func (noMesos) DeactivateAgent(context.Context, string) error { return nil }
func (noMesos) ReactivateAgent(context.Context, string) error { return nil }

// TestWarmPowerOnSaysWhy: an agent the live warm pool powers on ahead of
// the forecast logs "agent power: booting" with the warm pool's reason
// and no job (serve hands warmlive this power-on).
func TestWarmPowerOnSaysWhy(t *testing.T) {
	log, hook := test.NewNullLogger()
	st := &onePowerRecord{recs: []power.Record{{AgentID: "a1", Hostname: "host-a1", State: power.StateOff, Since: time.Now()}}}
	m, err := power.NewManager(power.Config{OffAfter: time.Minute, Provider: &power.ExecProvider{Program: "true"}, Log: log}, st, noMesos{})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Load(context.Background()); err != nil {
		t.Fatal(err)
	}
	why := "warm pool: forecast 2.00 jobs"
	if err := warmPowerOn(m)(context.Background(), "a1", why); err != nil {
		t.Fatal(err)
	}
	for _, e := range hook.AllEntries() {
		if e.Message == "agent power: booting" {
			if _, job := e.Data["job"]; e.Data["agent"] != "a1" || e.Data["reason"] != why || job {
				t.Fatalf("booting line %v, want agent a1, reason %q and no job", e.Data, why)
			}
			return
		}
	}
	t.Fatalf("no booting line in %d log entries", len(hook.AllEntries()))
}
