package offers

import (
	"cmp"
	"context"
	"slices"
	"sort"
	"strings"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
)

// Offer hygiene: which offers are kept, declined, suppressed or revived.

func (f *Framework) handleOffers(ctx context.Context, offers []mesos.Offer) {
	now := time.Now()
	f.cfg.Observer.ObserveOffers(len(offers))
	offers = f.roleOffers(ctx, offers, now)
	ids := make([]string, len(offers))
	for i, o := range offers {
		ids[i] = o.AgentID.Value
	}
	rooms := f.roomsOf(ids) // before f.mu: the cluster takes its own lock
	f.mu.Lock()
	f.lastOffer = now
	for i, o := range offers {
		ho := heldOffer{offer: o, since: now}
		ho.cpus, ho.mem = f.driverRoom(o)
		ho.active = rooms != nil && rooms[i].Active
		f.offers[o.ID.Value] = ho
	}
	f.mu.Unlock()
	f.tryLaunch(ctx)
	f.declineUnneeded(ctx, false)
}

// driverRoom is what a driver may take from an offer: unreserved cpus and
// mem allocated to sparkpack's role.
func (f *Framework) driverRoom(o mesos.Offer) (cpus, mem float64) {
	for _, r := range o.Resources {
		if r.Scalar == nil || len(r.Reservations) > 0 || r.Reservation != nil ||
			r.AllocationInfo == nil || r.AllocationInfo.GetRole() != f.cfg.Role {
			continue
		}
		switch r.Name {
		case "cpus":
			cpus += r.Scalar.Value
		case "mem":
			mem += r.Scalar.Value
		}
	}
	return cpus, mem
}

// declineUnneeded declines the offers held longer than OfferHold and, unless
// expiredOnly, those beyond the stock: one per waiting launch plus
// OfferStock, keeping those of active agents first, then the roomiest. While launches are being announced
// (expectBurst) the stock holds burstStock more; the first call after
// that cuts it. Offers on agents a waiting or announced
// launch prefers are kept (at most expectFor). Declines carry a RefuseSeconds filter,
// so that the master does not offer the same resources again at once; a
// REVIVE (reviveIfWaiting) clears the filters when a driver finds no room.
func (f *Framework) declineUnneeded(ctx context.Context, expiredOnly bool) {
	f.mu.Lock()
	var ids, stale []mesos.OfferID
	now := time.Now()
	// What the roomiest are chosen by: small keys, not the offers (a
	// REVIVE on a cluster of 30,000 agents brings 30,000 offers, and
	// sorting the offers themselves moved megabytes under f.mu).
	type stockKey struct {
		active    bool
		cpus, mem float64
		id        string
	}
	var keep []stockKey
	var yield []mesos.OfferID
	wanted := f.wantedAgentsLocked()
	for id, ho := range f.offers {
		if ho.cpus <= 0 || ho.mem <= 0 {
			ids = append(ids, ho.offer.ID)
			delete(f.offers, id)
			continue
		}
		if f.yielding[ho.offer.AgentID.Value] > 0 {
			yield = append(yield, ho.offer.ID)
			delete(f.offers, id)
			continue
		}
		if ho.since.Before(f.touched[ho.offer.AgentID.Value]) {
			// Received before a reservation on its agent: it is about
			// to be rescinded, or, if not, it is given back without a
			// filter so that the master offers the agent again.
			stale = append(stale, ho.offer.ID)
			delete(f.offers, id)
			continue
		}
		if wanted[ho.offer.AgentID.Value] && now.Sub(ho.since) < expectFor {
			continue // kept for the launch that prefers its agent
		}
		if now.Sub(ho.since) >= f.cfg.OfferHold {
			ids = append(ids, ho.offer.ID)
			delete(f.offers, id)
			continue
		}
		keep = append(keep, stockKey{ho.active, ho.cpus, ho.mem, id})
	}
	trim := !expiredOnly || f.trimLater
	stock := f.waitingLocked() + f.cfg.OfferStock
	if now.Sub(f.lastExpect) < expectBurst {
		// Launches are still being announced: room for them, cut to the
		// plain stock once they stop.
		stock += burstStock
		f.trimLater = true
	} else if trim {
		f.trimLater = false
	}
	if trim && len(keep) > stock {
		// Offers of active agents first (a driver goes there before an
		// idle agent: driverplace.go), then the order of roomierSpot:
		// cpus, then mem, then id.
		slices.SortFunc(keep, func(a, b stockKey) int {
			if a.active != b.active {
				if a.active {
					return -1
				}
				return 1
			}
			if c := cmp.Compare(b.cpus, a.cpus); c != 0 {
				return c
			}
			if c := cmp.Compare(b.mem, a.mem); c != 0 {
				return c
			}
			return strings.Compare(a.id, b.id)
		})
		for _, k := range keep[stock:] {
			ids = append(ids, f.offers[k.id].offer.ID)
			delete(f.offers, k.id)
		}
	}
	f.mu.Unlock()
	if len(yield) > 0 {
		// A short filter: the job's role is offered the agent meanwhile.
		short := 2.0
		call := &scheduler.Call{Type: scheduler.Call_DECLINE, Decline: &scheduler.Call_Decline{OfferIDs: yield, Filters: &mesos.Filters{RefuseSeconds: &short}}}
		if err := f.Sched.Call(ctx, call); err != nil {
			f.log.WithError(err).Debug("decline failed")
		} else {
			f.cfg.Observer.ObserveDeclines(len(yield))
		}
	}
	if len(stale) > 0 {
		var none float64
		call := &scheduler.Call{Type: scheduler.Call_DECLINE, Decline: &scheduler.Call_Decline{OfferIDs: stale, Filters: &mesos.Filters{RefuseSeconds: &none}}}
		if err := f.Sched.Call(ctx, call); err != nil {
			f.log.WithError(err).Debug("decline failed")
		} else {
			f.cfg.Observer.ObserveDeclines(len(stale))
		}
	}
	if len(ids) == 0 {
		return
	}
	refuse := f.cfg.RefuseSeconds
	call := &scheduler.Call{Type: scheduler.Call_DECLINE, Decline: &scheduler.Call_Decline{OfferIDs: ids, Filters: &mesos.Filters{RefuseSeconds: &refuse}}}
	if err := f.Sched.Call(ctx, call); err != nil {
		f.log.WithError(err).Debug("decline failed")
	} else {
		f.cfg.Observer.ObserveDeclines(len(ids))
	}
	f.reviveOrSuppress(ctx)
}

// reviveOrSuppress keeps offers flowing only while a driver waits or is
// expected (Expect). Calls
// are serialised and decided just before sending, so a SUPPRESS can never
// overtake a later REVIVE.
func (f *Framework) reviveOrSuppress(ctx context.Context) {
	f.rsMu.Lock()
	defer f.rsMu.Unlock()
	f.mu.Lock()
	want := f.waitingLocked() > 0
	change := want == f.suppressed
	f.mu.Unlock()
	if !change {
		return
	}
	f.sendReviveOrSuppress(ctx, want)
}

// sendReviveOrSuppress sends REVIVE (want) or SUPPRESS; f.rsMu is held.
func (f *Framework) sendReviveOrSuppress(ctx context.Context, want bool) {
	var err error
	t := scheduler.Call_SUPPRESS
	if want {
		t = scheduler.Call_REVIVE
		err = f.Sched.Call(ctx, &scheduler.Call{Type: t, Revive: &scheduler.Call_Revive{Roles: []string{f.cfg.Role}}})
	} else {
		err = f.Sched.Call(ctx, &scheduler.Call{Type: t, Suppress: &scheduler.Call_Suppress{Roles: []string{f.cfg.Role}}})
	}
	if err != nil {
		f.log.WithError(err).Debug(t.String() + " failed; trying again later")
		return
	}
	f.mu.Lock()
	f.suppressed = !want
	if want {
		f.revivedAt = time.Now()
	}
	f.mu.Unlock()
}

// reviveEvery bounds how often REVIVE is sent while drivers wait for room.
const reviveEvery = time.Second

// reviveIfWaiting sends REVIVE when a driver waits and no held offer has
// room, at most every reviveEvery: it also clears the decline filters of
// sparkpack's role, so every agent with room is offered again (a lost
// REVIVE or filters the master kept are covered too, as Mesos advises).
func (f *Framework) reviveIfWaiting(ctx context.Context) {
	f.rsMu.Lock()
	defer f.rsMu.Unlock()
	f.mu.Lock()
	since := time.Since(f.revivedAt)
	waiting := f.connected && (len(f.pending) > 0 && (f.suppressed || since >= reviveEvery) ||
		// announced launches get a fresh stock once the last one was declined
		f.waitingLocked() > 0 && len(f.offers) == 0 && (f.suppressed || since >= f.cfg.OfferHold))
	f.mu.Unlock()
	if waiting {
		f.sendReviveOrSuppress(ctx, true)
	}
}

func (f *Framework) expireOffers(ctx context.Context) {
	t := time.NewTicker(min(f.cfg.OfferHold/2, reviveEvery/2))
	defer t.Stop()
	rec := time.NewTicker(f.cfg.ReconcileEvery)
	defer rec.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-rec.C:
			if f.Connected() {
				f.mu.Lock()
				tasks := make([]string, 0, len(f.taskJob))
				for t := range f.taskJob {
					tasks = append(tasks, t)
				}
				f.mu.Unlock()
				sort.Strings(tasks)
				f.Reconcile(ctx, tasks)
			}
		case <-t.C:
			f.mu.Lock()
			waiting := len(f.pending) > 0 && len(f.offers) > 0
			f.mu.Unlock()
			if waiting {
				// A launch that waited for an offer where its room was
				// kept (RoomWait) goes elsewhere once the wait is over.
				f.tryLaunch(ctx)
			}
			f.declineUnneeded(ctx, true)
			f.reviveIfWaiting(ctx)
		}
	}
}
