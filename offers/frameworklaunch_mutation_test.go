package offers

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
)

// Tests written for the mutants of frameworklaunch.go that mutation
// testing found alive (scripts/mutation.sh --only '^frameworklaunch\.go$'
// offers; docs/testing.md). Expected values are worked out by hand from
// the rules the comments state (pickLocked, roomier, since moved to
// driverplace.go as roomierSpot, driverResources).

func offersEvent(offers ...mesos.Offer) *scheduler.Event {
	return &scheduler.Event{Type: scheduler.Event_OFFERS, Offers: &scheduler.Event_Offers{Offers: offers}}
}

// launchedOn is the offer each ACCEPT so far was for, in order.
func launchedOn(calls *callLog) []string {
	var out []string
	for _, c := range calls.of(scheduler.Call_ACCEPT) {
		out = append(out, c.Accept.OfferIDs[0].Value)
	}
	return out
}

// launchTask is the task of the LAUNCH in the i-th ACCEPT.
func launchTask(t *testing.T, calls *callLog, i int) mesos.TaskInfo {
	t.Helper()
	acc := calls.of(scheduler.Call_ACCEPT)
	if len(acc) <= i || len(acc[i].Accept.Operations) != 1 || acc[i].Accept.Operations[0].Launch == nil ||
		len(acc[i].Accept.Operations[0].Launch.TaskInfos) != 1 {
		t.Fatalf("ACCEPT %d of %+v: want one LAUNCH of one task", i, acc)
	}
	return acc[i].Accept.Operations[0].Launch.TaskInfos[0]
}

// TestKillByHand: KILL names the agent when it is known and only then
// (agent_id is optional in Call.Kill).
func TestKillByHand(t *testing.T) {
	ctx := context.Background()
	fw, calls := subscribedFramework(t, nil)
	if err := fw.Kill(ctx, "t1", "S1"); err != nil {
		t.Fatal(err)
	}
	if err := fw.Kill(ctx, "t2", ""); err != nil {
		t.Fatal(err)
	}
	k := calls.of(scheduler.Call_KILL)
	if len(k) != 2 || k[0].Kill.TaskID.Value != "t1" || k[0].Kill.AgentID.GetValue() != "S1" ||
		k[1].Kill.TaskID.Value != "t2" || k[1].Kill.AgentID != nil {
		t.Fatalf("KILL calls %+v; want t1 on S1, then t2 without agent", k)
	}
}

// TestExpectForgetsOldReservations: an announcement marks its agents as
// just reserved on, and forgets the agents reserved on more than
// expectFor (2 minutes) ago; younger ones stay.
func TestExpectForgetsOldReservations(t *testing.T) {
	ctx := context.Background()
	fw, _ := subscribedFramework(t, nil)
	fw.mu.Lock()
	fw.touched["S-old"] = time.Now().Add(-3 * time.Minute)
	fw.touched["S-recent"] = time.Now().Add(-time.Minute)
	fw.mu.Unlock()
	fw.Expect(ctx, "job-1", []string{"S-new"})
	fw.mu.Lock()
	defer fw.mu.Unlock()
	_, old := fw.touched["S-old"]
	_, recent := fw.touched["S-recent"]
	_, fresh := fw.touched["S-new"]
	if old || !recent || !fresh {
		t.Fatalf("touched agents %v; want S-recent and S-new, not S-old", fw.touched)
	}
}

// TestWaitingForgetsOldAnnouncements: an announcement older than
// expectFor (2 minutes) no longer counts as a waiting launch and is
// forgotten; a younger one and a queued launch count.
func TestWaitingForgetsOldAnnouncements(t *testing.T) {
	fw, _ := subscribedFramework(t, nil)
	fw.mu.Lock()
	defer fw.mu.Unlock()
	fw.expected["old"] = expectation{at: time.Now().Add(-3 * time.Minute)}
	fw.expected["new"] = expectation{at: time.Now().Add(-time.Minute)}
	fw.pending["queued"] = &DriverLaunch{JobID: "queued"}
	if n := fw.waitingLocked(); n != 2 {
		t.Fatalf("%d waiting launches; want 2 (the queued one and the younger announcement)", n)
	}
	if _, kept := fw.expected["old"]; kept {
		t.Fatal("an announcement older than expectFor is kept")
	}
}

// TestDriverGoesToThePreferredAgent: a launch goes to an offer on an agent
// it prefers when one has room, the roomiest of those, even when an offer
// elsewhere is roomier; when none of its agents' offers has room it goes
// to the roomiest offer of all.
func TestDriverGoesToThePreferredAgent(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name   string
		prefer []string
		want   string
	}{
		{"one preferred", []string{"S2"}, "O-2"},
		{"two preferred", []string{"S2", "S3"}, "O-3"},
		{"preferred too small", []string{"S4"}, "O-1"},
		{"none preferred", nil, "O-1"},
	} {
		fw, calls := subscribedFramework(t, nil)
		fw.cfg.OfferHold = time.Hour
		fw.Launch(ctx, &DriverLaunch{JobID: "j", TaskID: "t-j", CPUs: 1, MemMB: 1024, Argv: []string{"x"}, Prefer: c.prefer})
		fw.Event(ctx, offersEvent(
			driverOffer("O-1", "S1", 8, 16384, "sparkpack"),
			driverOffer("O-2", "S2", 2, 4096, "sparkpack"),
			driverOffer("O-3", "S3", 3, 4096, "sparkpack"),
			driverOffer("O-4", "S4", 0.5, 4096, "sparkpack")))
		if got := launchedOn(calls); !slices.Equal(got, []string{c.want}) {
			t.Errorf("%s: launched on %v, want %s", c.name, got, c.want)
		}
	}
}

// TestRoomierByHand: among offers with room, the driver goes to the one
// with the most cpus; at equal cpus the most memory; at equal cpus and
// memory the lowest offer id.
func TestRoomierByHand(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name   string
		offers []mesos.Offer
		want   string
	}{
		{"cpus", []mesos.Offer{driverOffer("O-a", "S1", 2, 65536, "sparkpack"), driverOffer("O-b", "S2", 4, 2048, "sparkpack"),
			driverOffer("O-c", "S3", 3, 32768, "sparkpack")}, "O-b"},
		{"memory at equal cpus", []mesos.Offer{driverOffer("O-a", "S1", 2, 4096, "sparkpack"), driverOffer("O-b", "S2", 2, 8192, "sparkpack"),
			driverOffer("O-c", "S3", 2, 6144, "sparkpack")}, "O-b"},
		{"id at equal room", []mesos.Offer{driverOffer("O-c", "S1", 2, 4096, "sparkpack"), driverOffer("O-a", "S2", 2, 4096, "sparkpack"),
			driverOffer("O-b", "S3", 2, 4096, "sparkpack")}, "O-a"},
	} {
		for range 5 { // the offers are held in a map: several orders
			fw, calls := subscribedFramework(t, nil)
			fw.cfg.OfferHold = time.Hour
			fw.mu.Lock()
			for _, o := range c.offers {
				cpus, mem := fw.driverRoom(o)
				fw.offers[o.ID.Value] = heldOffer{offer: o, since: time.Now(), cpus: cpus, mem: mem}
			}
			fw.mu.Unlock()
			fw.Launch(ctx, &DriverLaunch{JobID: "j", TaskID: "t-j", CPUs: 1, MemMB: 1024, Argv: []string{"x"}})
			if got := launchedOn(calls); !slices.Equal(got, []string{c.want}) {
				t.Fatalf("%s: launched on %v, want %s", c.name, got, c.want)
			}
		}
	}
}

// TestFirstLaunchThatFits: the waiting launches are served in job id order,
// each by the first that a held offer has room for: a launch too big for
// every offer does not hold up the next.
func TestFirstLaunchThatFits(t *testing.T) {
	ctx := context.Background()
	fw, calls := subscribedFramework(t, nil)
	fw.cfg.OfferHold = time.Hour
	fw.mu.Lock()
	fw.pending["a-big"] = &DriverLaunch{JobID: "a-big", TaskID: "t-a", CPUs: 16, MemMB: 1024, Argv: []string{"x"}}
	fw.pending["b"] = &DriverLaunch{JobID: "b", TaskID: "t-b", CPUs: 1, MemMB: 1024, Argv: []string{"x"}}
	fw.pending["c"] = &DriverLaunch{JobID: "c", TaskID: "t-c", CPUs: 1, MemMB: 1024, Argv: []string{"x"}}
	fw.mu.Unlock()
	fw.Event(ctx, offersEvent(driverOffer("O-1", "S1", 2, 4096, "sparkpack")))
	if got := launchedOn(calls); !slices.Equal(got, []string{"O-1"}) || launchTask(t, calls, 0).TaskID.Value != "t-b" {
		t.Fatalf("launched on %v; want b's driver on O-1", got)
	}
	fw.mu.Lock()
	_, aWaits := fw.pending["a-big"]
	_, cWaits := fw.pending["c"]
	fw.mu.Unlock()
	if !aWaits || !cWaits {
		t.Fatalf("waiting: a-big %v, c %v; want both", aWaits, cWaits)
	}
}

// TestExactFitAndTolerance: a driver fits an offer of exactly its size,
// and one whose shortfall is at most 1e-9 (the tolerance of pickLocked
// and driverResources): a driver of 1e-9 cpus starts on an offer with
// memory and no cpus, and one of 1e-9 MiB on an offer with cpus and no
// memory, taking only the resource there is. 2e-9 short does not fit.
func TestExactFitAndTolerance(t *testing.T) {
	ctx := context.Background()
	memOnly := driverOffer("O-mem", "S1", 0, 2048, "sparkpack")
	memOnly.Resources = memOnly.Resources[1:]
	cpusOnly := driverOffer("O-cpus", "S2", 2, 0, "sparkpack")
	cpusOnly.Resources = cpusOnly.Resources[:1]
	for _, c := range []struct {
		name      string
		offer     mesos.Offer
		cpus, mem float64
		launched  bool
		res       []string // names of the LAUNCH's resources
	}{
		{"exact", driverOffer("O-x", "S3", 2, 4096, "sparkpack"), 2, 4096, true, []string{"cpus", "mem"}},
		{"1e-9 cpus short", memOnly, 1e-9, 1024, true, []string{"mem"}},
		{"1e-9 MiB short", cpusOnly, 1, 1e-9, true, []string{"cpus"}},
		{"2e-9 cpus short", memOnly, 2e-9, 1024, false, nil},
		{"2e-9 MiB short", cpusOnly, 1, 2e-9, false, nil},
	} {
		fw, calls := subscribedFramework(t, nil)
		fw.cfg.OfferHold = time.Hour
		fw.Launch(ctx, &DriverLaunch{JobID: "j", TaskID: "t-j", CPUs: c.cpus, MemMB: c.mem, Argv: []string{"x"}})
		fw.Event(ctx, offersEvent(c.offer))
		if got := len(launchedOn(calls)) == 1; got != c.launched {
			t.Errorf("%s: launched %v, want %v", c.name, got, c.launched)
			continue
		}
		if !c.launched {
			continue
		}
		var names []string
		for _, r := range launchTask(t, calls, 0).Resources {
			names = append(names, r.Name)
		}
		if !slices.Equal(names, c.res) {
			t.Errorf("%s: resources %v, want %v", c.name, names, c.res)
		}
	}
}

// TestDriverResourcesByHand: the driver takes exactly its cpus and memory
// from the offer's unreserved resources allocated to sparkpack's role,
// across several resources when one is not enough, and nothing else: not
// disk, not reserved resources (refined or legacy), not another role's;
// the resources it sends carry no legacy role.
func TestDriverResourcesByHand(t *testing.T) {
	ctx := context.Background()
	reserved := scalarRes("cpus", 8, "sparkpack")
	reserved.Reservations = []mesos.Resource_ReservationInfo{{Type: mesos.Resource_ReservationInfo_DYNAMIC.Enum(), Role: ptr("sparkpack")}}
	legacy := scalarRes("cpus", 8, "sparkpack")
	legacy.Reservation = &mesos.Resource_ReservationInfo{Principal: ptr("ops")}
	noAlloc := scalarRes("cpus", 8, "")
	o := mesos.Offer{ID: mesos.OfferID{Value: "O-1"}, FrameworkID: mesos.FrameworkID{Value: "F1"}, AgentID: mesos.AgentID{Value: "S1"}, Hostname: "host-S1",
		Resources: []mesos.Resource{
			reserved, legacy, noAlloc, scalarRes("cpus", 8, "other"), scalarRes("disk", 5000, "sparkpack"),
			scalarRes("cpus", 0.5, "sparkpack"), scalarRes("cpus", 0.75, "sparkpack"), scalarRes("cpus", 4, "sparkpack"),
			scalarRes("mem", 8192, "sparkpack"), scalarRes("mem", 4096, "sparkpack"),
		}}
	fw, calls := subscribedFramework(t, nil)
	fw.cfg.OfferHold = time.Hour
	fw.Launch(ctx, &DriverLaunch{JobID: "j", TaskID: "t-j", CPUs: 1, MemMB: 1024, Argv: []string{"x"}})
	fw.Event(ctx, offersEvent(o))
	task := launchTask(t, calls, 0)
	type amt struct {
		name string
		v    float64
	}
	var got []amt
	for _, r := range task.Resources {
		if r.Role != nil || len(r.Reservations) > 0 || r.Reservation != nil || r.AllocationInfo.GetRole() != "sparkpack" {
			t.Errorf("resource %+v: want unreserved, allocated to sparkpack, without legacy role", r)
		}
		got = append(got, amt{r.Name, r.Scalar.GetValue()})
	}
	// 1 cpu: 0.5 from the first unreserved cpus, 0.5 of the next (0.75);
	// 1024 MiB from the first mem.
	want := []amt{{"cpus", 0.5}, {"cpus", 0.5}, {"mem", 1024}}
	if !slices.Equal(got, want) {
		t.Fatalf("LAUNCH resources %v, want %v", got, want)
	}
}

func ptr[T any](v T) *T { return &v }

// TestLaunchCommandByHand: the LAUNCH runs the argument vector without a
// shell (value argv[0], arguments the whole vector), with the environment
// and labels sorted by name, the driver's task id, name and agent, and the
// decline filter of RefuseSeconds; without environment no Environment is
// sent. An empty command is not sent at all: the launch waits again.
func TestLaunchCommandByHand(t *testing.T) {
	ctx := context.Background()
	fw, calls := subscribedFramework(t, nil)
	fw.cfg.OfferHold, fw.cfg.RefuseSeconds = time.Hour, 7
	fw.Launch(ctx, &DriverLaunch{JobID: "j", TaskID: "t-j", CPUs: 1, MemMB: 1024, Argv: []string{"spark-submit", "--class", "a.B"},
		Env: map[string]string{"Z": "26", "A": "1", "M": "13"}, Labels: map[string]string{"y": "2", "x": "1"}})
	fw.Event(ctx, offersEvent(driverOffer("O-1", "S1", 2, 4096, "sparkpack")))
	task := launchTask(t, calls, 0)
	cmd := task.Command
	if cmd.GetShell() || cmd.Shell == nil || cmd.GetValue() != "spark-submit" || !slices.Equal(cmd.Arguments, []string{"spark-submit", "--class", "a.B"}) {
		t.Errorf("command %+v; want spark-submit's argument vector, shell false", cmd)
	}
	var env []string
	for _, v := range cmd.GetEnvironment().GetVariables() {
		env = append(env, v.Name+"="+v.GetValue())
	}
	if !slices.Equal(env, []string{"A=1", "M=13", "Z=26"}) {
		t.Errorf("environment %v; want A=1 M=13 Z=26", env)
	}
	var labels []string
	for _, l := range task.GetLabels().GetLabels() {
		labels = append(labels, l.Key+"="+l.GetValue())
	}
	if !slices.Equal(labels, []string{"x=1", "y=2"}) {
		t.Errorf("labels %v; want x=1 y=2", labels)
	}
	if task.TaskID.Value != "t-j" || task.Name != "sparkpack driver j" || task.AgentID.Value != "S1" {
		t.Errorf("task %q named %q on %q; want t-j, \"sparkpack driver j\", S1", task.TaskID.Value, task.Name, task.AgentID.Value)
	}
	acc := calls.of(scheduler.Call_ACCEPT)[0].Accept
	if acc.Filters.GetRefuseSeconds() != 7 {
		t.Errorf("ACCEPT filter %v s; want RefuseSeconds, 7", acc.Filters.GetRefuseSeconds())
	}

	fw.Launch(ctx, &DriverLaunch{JobID: "k", TaskID: "t-k", CPUs: 1, MemMB: 1024, Argv: []string{"x"}})
	fw.Event(ctx, offersEvent(driverOffer("O-2", "S2", 2, 4096, "sparkpack")))
	if env := launchTask(t, calls, 1).Command.Environment; env != nil {
		t.Errorf("environment %+v for a driver without one; want none", env)
	}

	var sentErr error
	fw.Launch(ctx, &DriverLaunch{JobID: "e", TaskID: "t-e", CPUs: 1, MemMB: 1024, Sent: func(_ string, err error) { sentErr = err }})
	fw.Event(ctx, offersEvent(driverOffer("O-3", "S3", 2, 4096, "sparkpack")))
	fw.mu.Lock()
	_, waits := fw.pending["e"]
	fw.mu.Unlock()
	if n := len(calls.of(scheduler.Call_ACCEPT)); n != 2 || sentErr == nil || !waits {
		t.Fatalf("empty command: %d ACCEPTs, Sent error %v, waiting %v; want 2 (none more), an error, true", n, sentErr, waits)
	}
}

// TestSendingFailureKeepsTheLaunch: when recording the launch fails
// (Sending's error), no ACCEPT goes out, the offer is held again and the
// launch waits; the next try sends it. A launch queued again for the job
// meanwhile is the one that waits. A withdrawn launch is dropped.
func TestSendingFailureKeepsTheLaunch(t *testing.T) {
	ctx := context.Background()
	fw, calls := subscribedFramework(t, nil)
	fw.cfg.OfferHold = time.Hour
	fail := true
	var sent []string
	l := &DriverLaunch{JobID: "j", TaskID: "t-j", CPUs: 1, MemMB: 1024, Argv: []string{"x"},
		Sending: func(string) error {
			if fail {
				return errors.New("database down")
			}
			return nil
		},
		Sent: func(a string, err error) { sent = append(sent, a) }}
	fw.Launch(ctx, l)
	fw.Event(ctx, offersEvent(driverOffer("O-1", "S1", 2, 4096, "sparkpack")))
	fw.mu.Lock()
	_, held := fw.offers["O-1"]
	waiting := fw.pending["j"]
	fw.mu.Unlock()
	if n := len(calls.of(scheduler.Call_ACCEPT)); n != 0 || !held || waiting != l || len(sent) != 0 {
		t.Fatalf("Sending failed: %d ACCEPTs, offer held %v, waiting %v, Sent %v; want 0, true, the launch, not called", n, held, waiting != nil, sent)
	}
	fail = false
	fw.tryLaunch(ctx)
	if got := launchedOn(calls); !slices.Equal(got, []string{"O-1"}) || !slices.Equal(sent, []string{"S1"}) {
		t.Fatalf("second try: launched on %v, Sent %v; want O-1 and S1", got, sent)
	}

	// Queued again while Sending runs: the newer launch waits.
	fw2, calls2 := subscribedFramework(t, nil)
	fw2.cfg.OfferHold = time.Hour
	newer := &DriverLaunch{JobID: "j", TaskID: "t-j2", CPUs: 1, MemMB: 1024, Argv: []string{"x"}}
	fw2.Launch(ctx, &DriverLaunch{JobID: "j", TaskID: "t-j1", CPUs: 1, MemMB: 1024, Argv: []string{"x"},
		Sending: func(string) error {
			fw2.mu.Lock()
			fw2.pending["j"] = newer
			fw2.mu.Unlock()
			return errors.New("database down")
		}})
	fw2.Event(ctx, offersEvent(driverOffer("O-1", "S1", 2, 4096, "sparkpack")))
	fw2.mu.Lock()
	waiting = fw2.pending["j"]
	fw2.mu.Unlock()
	if waiting != newer || len(calls2.of(scheduler.Call_ACCEPT)) != 0 {
		t.Fatalf("waiting %+v; want the newer launch t-j2, no ACCEPT", waiting)
	}

	// Withdrawn: dropped, the offer held, the next launch served at once.
	fw3, calls3 := subscribedFramework(t, nil)
	fw3.cfg.OfferHold = time.Hour
	fw3.mu.Lock()
	fw3.pending["a"] = &DriverLaunch{JobID: "a", TaskID: "t-a", CPUs: 1, MemMB: 1024, Argv: []string{"x"},
		Sending: func(string) error { return ErrLaunchWithdrawn }}
	fw3.pending["b"] = &DriverLaunch{JobID: "b", TaskID: "t-b", CPUs: 1, MemMB: 1024, Argv: []string{"x"}}
	fw3.mu.Unlock()
	fw3.Event(ctx, offersEvent(driverOffer("O-1", "S1", 2, 4096, "sparkpack")))
	fw3.mu.Lock()
	_, aWaits := fw3.pending["a"]
	fw3.mu.Unlock()
	if got := launchedOn(calls3); aWaits || !slices.Equal(got, []string{"O-1"}) || launchTask(t, calls3, 0).TaskID.Value != "t-b" {
		t.Fatalf("withdrawn a: a waits %v, launched on %v; want a dropped and b's driver on O-1", aWaits, got)
	}

	// Withdrawn beside a launch sent: the offer given back serves the next
	// waiting launch at once (c waited for want of an offer).
	fw4, calls4 := subscribedFramework(t, nil)
	fw4.cfg.OfferHold = time.Hour
	fw4.mu.Lock()
	fw4.pending["a"] = &DriverLaunch{JobID: "a", TaskID: "t-a", CPUs: 1, MemMB: 1024, Argv: []string{"x"},
		Sending: func(string) error { return ErrLaunchWithdrawn }}
	fw4.pending["b"] = &DriverLaunch{JobID: "b", TaskID: "t-b", CPUs: 1, MemMB: 1024, Argv: []string{"x"}}
	fw4.pending["c"] = &DriverLaunch{JobID: "c", TaskID: "t-c", CPUs: 1, MemMB: 1024, Argv: []string{"x"}}
	fw4.mu.Unlock()
	// a takes the roomier O-1, b O-2, c none; a gives O-1 back to c.
	fw4.Event(ctx, offersEvent(driverOffer("O-1", "S1", 4, 4096, "sparkpack"), driverOffer("O-2", "S2", 2, 4096, "sparkpack")))
	tasks := map[string]string{}
	for i, o := range launchedOn(calls4) {
		tasks[launchTask(t, calls4, i).TaskID.Value] = o
	}
	if len(tasks) != 2 || tasks["t-b"] != "O-2" || tasks["t-c"] != "O-1" {
		t.Fatalf("launched %v; want t-b on O-2 and t-c on O-1 (given back by the withdrawn a)", tasks)
	}
}

// TestAcceptFailureKeepsTheLaunch: when the master refuses the ACCEPT,
// the launch waits again (not tracked, Sent told the error), and no other
// launch is tried until the next offer; once the master takes it, the
// task is tracked and Sent told of no error.
func TestAcceptFailureKeepsTheLaunch(t *testing.T) {
	ctx := context.Background()
	m := &failingMaster{}
	m.failing(scheduler.Call_ACCEPT, true)
	fw, _ := frameworkOn(t, m, FrameworkConfig{OfferHold: time.Hour}, nil, nil)
	var sentMu sync.Mutex // the two launches are sent from their own goroutines
	var sentErrs []error
	for _, j := range []string{"a", "b"} {
		fw.mu.Lock()
		fw.pending[j] = &DriverLaunch{JobID: j, TaskID: "t-" + j, CPUs: 1, MemMB: 1024, Argv: []string{"x"},
			Sent: func(_ string, err error) { sentMu.Lock(); sentErrs = append(sentErrs, err); sentMu.Unlock() }}
		fw.mu.Unlock()
	}
	fw.Event(ctx, offersEvent(driverOffer("O-1", "S1", 2, 4096, "sparkpack"), driverOffer("O-2", "S2", 1, 1024, "sparkpack")))
	// a goes to O-1 (roomier) and b to O-2, together; both refused.
	fw.mu.Lock()
	waiting := len(fw.pending)
	tracked := len(fw.taskJob)
	fw.mu.Unlock()
	if n := len(m.of(scheduler.Call_ACCEPT)); n != 2 || waiting != 2 || tracked != 0 || len(sentErrs) != 2 || sentErrs[0] == nil || sentErrs[1] == nil {
		t.Fatalf("refused: %d ACCEPTs, %d waiting, %d tracked, Sent errors %v; want 2, 2, 0, two errors", n, waiting, tracked, sentErrs)
	}
	m.failing(scheduler.Call_ACCEPT, false)
	fw.Event(ctx, offersEvent(driverOffer("O-3", "S3", 2, 4096, "sparkpack")))
	fw.mu.Lock()
	job := fw.taskJob["t-a"]
	_, aWaits := fw.pending["a"]
	fw.mu.Unlock()
	if job != "a" || aWaits || len(sentErrs) != 3 || sentErrs[2] != nil {
		t.Fatalf("accepted: t-a tracked for %q, a waits %v, Sent errors %v; want a, false, a nil last", job, aWaits, sentErrs)
	}
}

// TestToleranceAgreesAboveZero: pickLocked and driverResources agree on a
// driver within 1e-9 of an offer that is not empty: 1+1e-9 cpus is
// 1.00000008e-9 more than 1 in floating point, which a shortfall test
// (need left <= 1e-9) refused after pickLocked had chosen the launch;
// tryLaunch then stopped, and every launch behind that one waited for
// ever. Now the driver starts on the 1-cpu offer and the next launch
// gets the next offer.
func TestToleranceAgreesAboveZero(t *testing.T) {
	ctx := context.Background()
	fw, calls := subscribedFramework(t, nil)
	fw.cfg.OfferHold = time.Hour
	fw.mu.Lock()
	fw.pending["a"] = &DriverLaunch{JobID: "a", TaskID: "t-a", CPUs: 1 + 1e-9, MemMB: 1024, Argv: []string{"x"}}
	fw.pending["b"] = &DriverLaunch{JobID: "b", TaskID: "t-b", CPUs: 1, MemMB: 1024 + 1e-9, Argv: []string{"x"}}
	fw.mu.Unlock()
	fw.Event(ctx, offersEvent(driverOffer("O-1", "S1", 1, 1024, "sparkpack"), driverOffer("O-2", "S2", 1, 1024, "sparkpack")))
	if got := launchedOn(calls); len(got) != 2 {
		t.Fatalf("launched on %v; want both drivers started, one per 1-cpu offer", got)
	}
}

// TestExpectGivesBackOffersBeforeTheReserve: the transcript of an
// operator-mode start. Expect gives back the offer held on the job's
// agent with no filter before the reservation goes out (a Mesos master
// would rescind it for the reserve, with a 5 s filter, and not offer the
// agent to sparkpack's role again until that ran out or a REVIVE); offers
// elsewhere stay. Launch marks the agent again: an offer there received
// before it may still be rescinded (its RESCIND not read yet) and is not
// used; the next one is.
func TestExpectGivesBackOffersBeforeTheReserve(t *testing.T) {
	ctx := context.Background()
	fw, calls := subscribedFramework(t, nil)
	fw.cfg.OfferHold = time.Hour
	fw.Event(ctx, offersEvent(driverOffer("O-before", "S1", 4, 16384, "sparkpack"), driverOffer("O-other", "S2", 4, 16384, "sparkpack")))
	time.Sleep(2 * time.Millisecond) // the announcement comes after the offers
	fw.Expect(ctx, "j", []string{"S1"})
	declined := map[string]float64{}
	for _, c := range calls.of(scheduler.Call_DECLINE) {
		for _, id := range c.Decline.OfferIDs {
			declined[id.Value] = c.Decline.Filters.GetRefuseSeconds()
		}
	}
	if f, ok := declined["O-before"]; !ok || f != 0 || len(declined) != 1 {
		t.Fatalf("declined %v when announced; want only O-before, given back with no filter before the reservation", declined)
	}
	time.Sleep(2 * time.Millisecond) // the reservation is made; the master offers S1 again
	fw.Event(ctx, offersEvent(driverOffer("O-early", "S1", 2, 8192, "sparkpack")))
	time.Sleep(2 * time.Millisecond)
	fw.Launch(ctx, &DriverLaunch{JobID: "j", TaskID: "t-j", CPUs: 1, MemMB: 1024, Argv: []string{"x"},
		Prefer: []string{"S1"}, Room: "S1", RoomKind: RoomOnPlan})
	if got := launchedOn(calls); len(got) != 0 {
		t.Fatalf("launched on %v; want no launch from an offer received before Launch", got)
	}
	time.Sleep(2 * time.Millisecond)
	fw.Event(ctx, offersEvent(driverOffer("O-after", "S1", 2, 8192, "sparkpack")))
	if got := launchedOn(calls); !slices.Equal(got, []string{"O-after"}) {
		t.Fatalf("launched on %v; want O-after", got)
	}
}
