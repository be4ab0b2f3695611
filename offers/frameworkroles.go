package offers

import (
	"context"
	"errors"
	"sort"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
)

// Job roles the framework takes on for offer-mode reservations.

// RoleHandler receives what Mesos sends for a job role the framework took
// on for offer-mode reservations. Offer returns the operations to ACCEPT
// the offer with (none: it is declined). Both are called from the event
// goroutine and must not block.
type RoleHandler interface {
	Offer(o mesos.Offer) []mesos.Offer_Operation
	OperationStatus(st mesos.OperationStatus)
}

func (f *Framework) roles() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := []string{f.cfg.Role}
	for r := range f.extraRoles {
		out = append(out, r)
	}
	sort.Strings(out[1:])
	return out
}

// dropRoleTimeout bounds AddRole's giving up of a role it could not take
// on (the default reservation timeout: the offer reserver's own give-up,
// which follows, is bounded by the configured one).
const dropRoleTimeout = 30 * time.Second

// AddRole subscribes the framework to a job role too (UPDATE_FRAMEWORK),
// sending that role's offers and operation updates to h, and revives it.
// If either call fails the role is not taken on: it is dropped again
// (RemoveRole), so that it does not ride along in later updates or a
// later subscription, nor its handler take offers; the update may have
// reached the master (its REVIVE refused, its answer lost), so the master
// is told too.
func (f *Framework) AddRole(ctx context.Context, role string, h RoleHandler) error {
	f.mu.Lock()
	if f.extraRoles == nil {
		f.extraRoles = map[string]RoleHandler{}
	}
	f.extraRoles[role] = h
	f.mu.Unlock()
	err := f.updateFramework(ctx)
	if err == nil {
		err = f.Sched.Call(ctx, &scheduler.Call{Type: scheduler.Call_REVIVE, Revive: &scheduler.Call_Revive{Roles: []string{role}}})
	}
	if err != nil {
		// Bounded even when ctx has ended (a master that does not answer
		// must not hold the caller for ever).
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), dropRoleTimeout)
		defer cancel()
		if rerr := f.RemoveRole(rctx, role); rerr != nil {
			f.log.WithError(rerr).WithField("role", role).Warn("taking on a job role failed and the master could not be told to drop it; the next framework update or subscription leaves it out")
		}
		return err
	}
	return nil
}

// Yield makes sparkpack's role give back, and not hold, offers on agents
// while a job's role reserves there from offers (offer mode); the returned
// function ends it.
func (f *Framework) Yield(ctx context.Context, agents []string) (done func()) {
	f.mu.Lock()
	for _, a := range agents {
		f.yielding[a]++
	}
	f.mu.Unlock()
	f.declineUnneeded(ctx, true)
	return func() {
		f.mu.Lock()
		for _, a := range agents {
			if f.yielding[a]--; f.yielding[a] <= 0 {
				delete(f.yielding, a)
			}
		}
		f.mu.Unlock()
	}
}

// RemoveRole drops a job role from the framework (UPDATE_FRAMEWORK).
func (f *Framework) RemoveRole(ctx context.Context, role string) error {
	f.mu.Lock()
	delete(f.extraRoles, role)
	f.mu.Unlock()
	return f.updateFramework(ctx)
}

func (f *Framework) updateFramework(ctx context.Context) error {
	f.rolesMu.Lock()
	defer f.rolesMu.Unlock()
	info, _ := f.Info(ctx) // without the stored id, the subscribed one
	if info.ID == nil {
		id := f.Sched.FrameworkID()
		if id == "" {
			return errors.New("not subscribed to Mesos yet")
		}
		info.ID = &mesos.FrameworkID{Value: id}
	}
	return f.Sched.Call(ctx, &scheduler.Call{Type: scheduler.Call_UPDATE_FRAMEWORK, UpdateFramework: &scheduler.Call_UpdateFramework{FrameworkInfo: info}})
}

// roleOffers hands offers of job roles to their handlers; it returns the
// offers of sparkpack's own role. received is when they arrived.
func (f *Framework) roleOffers(ctx context.Context, offers []mesos.Offer, received time.Time) []mesos.Offer {
	var own []mesos.Offer
	var decline []mesos.OfferID
	for _, o := range offers {
		role := f.cfg.Role
		if o.AllocationInfo != nil {
			role = o.AllocationInfo.GetRole()
		}
		if role == f.cfg.Role {
			own = append(own, o)
			continue
		}
		f.mu.Lock()
		h := f.extraRoles[role]
		f.mu.Unlock()
		var ops []mesos.Offer_Operation
		if h != nil {
			ops = h.Offer(o)
		}
		if len(ops) == 0 {
			decline = append(decline, o.ID)
			continue
		}
		refuse := 1.0
		call := &scheduler.Call{Type: scheduler.Call_ACCEPT, Accept: &scheduler.Call_Accept{
			OfferIDs: []mesos.OfferID{o.ID}, Operations: ops, Filters: &mesos.Filters{RefuseSeconds: &refuse}}}
		if err := f.Sched.Call(ctx, call); err != nil {
			f.log.WithError(err).WithField("role", role).Warn("ACCEPT in a job role failed; it will be retried with the next offer")
		} else {
			f.cfg.Observer.ObserveAccept(time.Since(received))
		}
	}
	if len(decline) > 0 {
		refuse := 1.0
		if err := f.Sched.Call(ctx, &scheduler.Call{Type: scheduler.Call_DECLINE, Decline: &scheduler.Call_Decline{OfferIDs: decline, Filters: &mesos.Filters{RefuseSeconds: &refuse}}}); err == nil {
			f.cfg.Observer.ObserveDeclines(len(decline))
		}
	}
	return own
}
