package offers

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
)

// Tests written for the mutants of frameworkroles.go (scripts/mutation.sh
// --only '^frameworkroles\.go$' offers; docs/testing.md): the job roles
// the framework takes on for offer-mode reservations. Expected values are
// worked out by hand from the Mesos scheduler API.

// reserveAll is a RoleHandler that answers every offer with a RESERVE.
type reserveAll struct{ offered []string }

func (h *reserveAll) Offer(o mesos.Offer) []mesos.Offer_Operation {
	h.offered = append(h.offered, o.ID.Value)
	return []mesos.Offer_Operation{{Type: mesos.Offer_Operation_RESERVE, Reserve: &mesos.Offer_Operation_Reserve{}}}
}
func (h *reserveAll) OperationStatus(mesos.OperationStatus) {}

// countingObserver counts accepts and declines.
type countingObserver struct {
	nopObserver
	mu                sync.Mutex
	accepts, declines int
}

func (o *countingObserver) ObserveAccept(time.Duration) { o.mu.Lock(); o.accepts++; o.mu.Unlock() }
func (o *countingObserver) ObserveDeclines(n int)       { o.mu.Lock(); o.declines += n; o.mu.Unlock() }

func frameworkRoles(c scheduler.Call) []string { return c.UpdateFramework.FrameworkInfo.GetRoles() }

// TestAddAndRemoveRoles: each AddRole sends UPDATE_FRAMEWORK with the
// framework's role and every job role taken on (the earlier ones kept),
// then REVIVEs the new role only; RemoveRole sends the set without it.
// The update carries the stored framework id, or, with none stored, the
// subscribed one; without either it is not sent. A refused update is
// AddRole's error, and no REVIVE follows.
func TestAddAndRemoveRoles(t *testing.T) {
	ctx := context.Background()
	m := &failingMaster{}
	fw, _ := frameworkOn(t, m, FrameworkConfig{}, &idStore{}, nil)
	for _, r := range []string{"sparkpack-job-b", "sparkpack-job-a"} {
		if err := fw.AddRole(ctx, r, noRoleOffers{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := fw.RemoveRole(ctx, "sparkpack-job-b"); err != nil {
		t.Fatal(err)
	}
	up := m.of(scheduler.Call_UPDATE_FRAMEWORK)
	want := [][]string{{"sparkpack", "sparkpack-job-b"}, {"sparkpack", "sparkpack-job-a", "sparkpack-job-b"}, {"sparkpack", "sparkpack-job-a"}}
	if len(up) != len(want) {
		t.Fatalf("%d UPDATE_FRAMEWORK calls, want %d", len(up), len(want))
	}
	for i, w := range want {
		if got := frameworkRoles(up[i]); !slices.Equal(got, w) {
			t.Errorf("update %d: roles %v, want %v", i, got, w)
		}
		if id := up[i].UpdateFramework.FrameworkInfo.GetID().GetValue(); id != "F1" {
			t.Errorf("update %d: framework id %q, want the subscribed F1", i, id)
		}
	}
	rv := m.of(scheduler.Call_REVIVE)
	if len(rv) != 2 || !slices.Equal(rv[0].Revive.Roles, []string{"sparkpack-job-b"}) || !slices.Equal(rv[1].Revive.Roles, []string{"sparkpack-job-a"}) {
		t.Fatalf("REVIVE calls %+v; want job-b's role, then job-a's", rv)
	}

	// The stored id wins over the subscribed one.
	m2 := &failingMaster{}
	fw2, _ := frameworkOn(t, m2, FrameworkConfig{}, &idStore{id: "F-stored"}, nil)
	if err := fw2.AddRole(ctx, "sparkpack-job-c", noRoleOffers{}); err != nil {
		t.Fatal(err)
	}
	if up := m2.of(scheduler.Call_UPDATE_FRAMEWORK); len(up) != 1 || up[0].UpdateFramework.FrameworkInfo.GetID().GetValue() != "F-stored" {
		t.Fatalf("updates %+v; want one with the stored id F-stored", up)
	}

	// Refused: AddRole's error, no REVIVE.
	m2.failing(scheduler.Call_UPDATE_FRAMEWORK, true)
	if err := fw2.AddRole(ctx, "sparkpack-job-d", noRoleOffers{}); err == nil {
		t.Fatal("AddRole with a refused UPDATE_FRAMEWORK: no error")
	}
	if rv := m2.of(scheduler.Call_REVIVE); len(rv) != 1 {
		t.Fatalf("%d REVIVE calls; want only job-c's", len(rv))
	}

	// No framework id at all: nothing is sent.
	m3 := &failingMaster{}
	fw3, _ := frameworkOn(t, m3, FrameworkConfig{}, &idStore{}, nil)
	fw3.Sched.frameworkID = ""
	err := fw3.AddRole(ctx, "sparkpack-job-e", noRoleOffers{})
	if err == nil || !strings.Contains(err.Error(), "not subscribed") || len(m3.of(scheduler.Call_UPDATE_FRAMEWORK)) != 0 {
		t.Fatalf("AddRole before any subscription: %v, %d updates; want \"not subscribed\" and none", err, len(m3.of(scheduler.Call_UPDATE_FRAMEWORK)))
	}
}

// TestYieldCountsPerJob: while an agent is yielded, sparkpack's offers on
// it are declined with a 2 s filter (those already held at once); two
// jobs yielding one agent keep it yielded until both are done; then its
// offers are kept again.
func TestYieldCountsPerJob(t *testing.T) {
	ctx := context.Background()
	fw, calls := subscribedFramework(t, nil)
	fw.cfg.OfferHold = time.Hour
	fw.Event(ctx, offersEvent(driverOffer("O-held", "S1", 2, 4096, "sparkpack")))
	done1 := fw.Yield(ctx, []string{"S1", "S2"})
	if d := declinedIDs(calls); !d["O-held"] {
		t.Fatalf("declined %v; want the offer held on S1 declined when S1 is yielded", d)
	}
	done2 := fw.Yield(ctx, []string{"S1"})
	done1()
	fw.Event(ctx, offersEvent(driverOffer("O-2", "S1", 2, 4096, "sparkpack")))
	if d := declinedIDs(calls); !d["O-2"] {
		t.Fatalf("declined %v; want O-2: S1 is still yielded by the second job", d)
	}
	done2()
	fw.Event(ctx, offersEvent(driverOffer("O-3", "S1", 2, 4096, "sparkpack"), driverOffer("O-4", "S2", 2, 4096, "sparkpack")))
	if d := declinedIDs(calls); d["O-3"] || d["O-4"] {
		t.Fatalf("declined %v; want O-3 and O-4 kept once both yields are done", d)
	}
	for _, c := range calls.of(scheduler.Call_DECLINE) {
		if c.Decline.Filters.GetRefuseSeconds() != 2 {
			t.Errorf("a yielded offer declined with a %v s filter; want 2", c.Decline.Filters.GetRefuseSeconds())
		}
	}
}

// TestRoleOffersByHand: an offer without allocation info is sparkpack's
// own; an offer in a job role goes to that role's handler and is
// ACCEPTed with its operations and a 1 s filter (an accept observed); one
// in a role without handler is DECLINEd with a 1 s filter (observed). No
// DECLINE goes out empty; a refused ACCEPT or DECLINE is not observed.
func TestRoleOffersByHand(t *testing.T) {
	ctx := context.Background()
	m := &failingMaster{}
	obs := &countingObserver{}
	fw, _ := frameworkOn(t, m, FrameworkConfig{OfferHold: time.Hour, Observer: obs}, &idStore{}, nil)
	h := &reserveAll{}
	fw.extraRoles = map[string]RoleHandler{"sparkpack-job-a": h}
	inRole := func(id, role string) mesos.Offer {
		if role == "" { // resources in sparkpack's role, the offer without allocation info
			return driverOffer(id, "S-"+id, 2, 4096, "sparkpack")
		}
		o := driverOffer(id, "S-"+id, 2, 4096, role)
		o.AllocationInfo = &mesos.Resource_AllocationInfo{Role: &role}
		return o
	}
	fw.Event(ctx, offersEvent(inRole("O-own", "sparkpack"), inRole("O-noalloc", "")))
	if n := len(m.of(scheduler.Call_DECLINE)) + len(m.of(scheduler.Call_ACCEPT)); n != 0 || len(h.offered) != 0 {
		t.Fatalf("sparkpack's own offers: %d calls, the handler offered %v; want none", n, h.offered)
	}
	fw.mu.Lock()
	_, own := fw.offers["O-own"]
	_, noalloc := fw.offers["O-noalloc"]
	fw.mu.Unlock()
	if !own || !noalloc {
		t.Fatalf("held: O-own %v, O-noalloc %v; want both kept as sparkpack's", own, noalloc)
	}

	fw.Event(ctx, offersEvent(inRole("O-a", "sparkpack-job-a"), inRole("O-x", "sparkpack-job-x"), inRole("O-y", "sparkpack-job-y")))
	acc := m.of(scheduler.Call_ACCEPT)
	if len(acc) != 1 || acc[0].Accept.OfferIDs[0].Value != "O-a" || len(acc[0].Accept.Operations) != 1 ||
		acc[0].Accept.Operations[0].Type != mesos.Offer_Operation_RESERVE || acc[0].Accept.Filters.GetRefuseSeconds() != 1 {
		t.Fatalf("ACCEPT calls %+v; want O-a's RESERVE with a 1 s filter", acc)
	}
	dec := m.of(scheduler.Call_DECLINE)
	if len(dec) != 1 || len(dec[0].Decline.OfferIDs) != 2 || dec[0].Decline.Filters.GetRefuseSeconds() != 1 {
		t.Fatalf("DECLINE calls %+v; want O-x and O-y with a 1 s filter", dec)
	}
	if obs.accepts != 1 || obs.declines != 2 {
		t.Fatalf("observed %d accepts, %d declines; want 1 and 2", obs.accepts, obs.declines)
	}

	m.failing(scheduler.Call_ACCEPT, true)
	m.failing(scheduler.Call_DECLINE, true)
	fw.Event(ctx, offersEvent(inRole("O-a2", "sparkpack-job-a"), inRole("O-x2", "sparkpack-job-x")))
	if obs.accepts != 1 || obs.declines != 2 {
		t.Fatalf("refused calls observed: %d accepts, %d declines; want still 1 and 2", obs.accepts, obs.declines)
	}
}
