package power

import (
	"context"
	"testing"
	"time"
)

// TestBootState: with a boot time, an agent a plan powers on is booting,
// ready a boot time after the power-on was decided, with its whole
// capacity; once it registered again it is on and no longer listed.
// Without a boot time nothing is told (placement is not boot-aware).
func TestBootState(t *testing.T) {
	r := newRig(t, Config{OffAfter: time.Minute, BootTime: 45 * time.Second})
	a := idle("a1", 4)
	r.tick(nil, a)
	r.now = r.now.Add(2 * time.Minute)
	r.tick(nil, a)
	r.tick(nil, drained(a))
	if st := r.store.state("a1"); st != StateOff {
		t.Fatalf("a1 %s, want off", st)
	}
	if bs := r.m.BootState(); bs.BootTime != 45*time.Second || len(bs.Booting) != 0 {
		t.Fatalf("boot state %+v with nothing booting", bs)
	}
	decided := r.now
	if err := r.m.PowerOn(context.Background(), "a1"); err != nil {
		t.Fatal(err)
	}
	r.now = r.now.Add(10 * time.Second)
	bs := r.m.BootState()
	if len(bs.Booting) != 1 || bs.Booting[0].Agent.ID != "a1" || !bs.Booting[0].ReadyAt.Equal(decided.Add(45*time.Second)) ||
		bs.Booting[0].Agent.FreeCPUs != 4 {
		t.Fatalf("boot state %+v; want a1 booting with 4 cpus, ready at %s", bs, decided.Add(45*time.Second))
	}
	r.tick(nil, rebooted(a))
	if bs := r.m.BootState(); len(bs.Booting) != 0 {
		t.Fatalf("boot state %+v after a1 registered again", bs)
	}

	r2 := newRig(t, Config{OffAfter: time.Minute})
	if bs := r2.m.BootState(); bs.BootTime != 0 || bs.Booting != nil {
		t.Fatalf("without a boot time: %+v", bs)
	}
}
