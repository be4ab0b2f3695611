package offers

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/sirupsen/logrus"
)

// Driver launches: queued and announced launches, the offer a driver
// goes to, and the ACCEPT with its LAUNCH.

// Launch queues a driver launch; it is sent with an offer in sparkpack's
// role that holds the driver's cpus and memory, chosen by
// chooseDriverOffer: on the agent the cluster kept its room on (waiting
// up to RoomWait for it when that is one of the job's own agents or
// another active one), else on an active agent, else the roomiest.
//
// The task is reconciled (tracked) only once its ACCEPT was sent: Mesos
// cannot know a task before, and an answer saying so would be noise.
func (f *Framework) Launch(ctx context.Context, l *DriverLaunch) {
	now := time.Now()
	f.mu.Lock()
	if l.Room != "" && (l.RoomKind == RoomOnPlan || l.RoomKind == RoomActive) {
		l.waitUntil = now.Add(f.cfg.RoomWait)
	}
	f.pending[l.JobID] = l
	delete(f.expected, l.JobID)
	// The job's reservations were just made on its agents: offers there
	// received until now may be rescinded for them (and the RESCIND not
	// read yet); only later offers there are used. (Marking them at the
	// announcement only, to use an offer made after the reservation but
	// received before this call, had 18 of 51 launches dropped by the
	// emulator at 10,000 agents, "offer rescinded meanwhile":
	// docs/scale.md, 2026-11-27 roomwait11.)
	for _, a := range l.Prefer {
		f.touched[a] = now
	}
	f.mu.Unlock()
	f.log.WithFields(logrus.Fields{"job": l.JobID, "room_agent": l.Room, "room_kind": l.RoomKind.String()}).Debug("driver launch queued")
	f.tryLaunch(ctx)              // an offer kept in stock may have room
	f.declineUnneeded(ctx, false) // and those on the job's agents are given back to come again
	f.reviveIfWaiting(ctx)
}

// SetAgentRooms names what shows the agents as the cluster's overlay sees
// them (the Cluster does): whether each is active and the room it has left
// once every plan in flight and every queued driver's room is counted. A
// driver that cannot go where its room was kept goes to an active agent
// rather than an idle one, and only where the overlay has room to spare
// (chooseDriverOffer). It is called without f.mu.
func (f *Framework) SetAgentRooms(rooms func(agentIDs []string) []AgentRoom) {
	f.mu.Lock()
	f.agentRooms = rooms
	f.mu.Unlock()
}

// roomsOf asks SetAgentRooms' function about agents; nil without one.
// f.mu must not be held.
func (f *Framework) roomsOf(ids []string) []AgentRoom {
	f.mu.Lock()
	fn := f.agentRooms
	f.mu.Unlock()
	if fn == nil || len(ids) == 0 {
		return nil
	}
	if out := fn(ids); len(out) == len(ids) {
		return out
	}
	return nil
}

// heldRooms is roomsOf for the agents of the offers held now, by agent
// (nil when no launch waits, or without SetAgentRooms).
func (f *Framework) heldRooms() map[string]AgentRoom {
	f.mu.Lock()
	if len(f.pending) == 0 || len(f.offers) == 0 || f.agentRooms == nil {
		f.mu.Unlock()
		return nil
	}
	// An agent with two offers is asked about twice: cheaper than a set
	// of every agent (a REVIVE on 30,000 agents brings 30,000 offers).
	ids := make([]string, 0, len(f.offers))
	for _, ho := range f.offers {
		ids = append(ids, ho.offer.AgentID.Value)
	}
	f.mu.Unlock()
	rooms := f.roomsOf(ids)
	if rooms == nil {
		return nil
	}
	out := make(map[string]AgentRoom, len(ids))
	for i, id := range ids {
		out[id] = rooms[i]
	}
	return out
}

// CancelLaunch forgets a queued launch (the job was killed first).
func (f *Framework) CancelLaunch(jobID string) {
	f.mu.Lock()
	delete(f.pending, jobID)
	delete(f.expected, jobID)
	f.mu.Unlock()
}

// expectFor bounds how long an announced launch keeps offers in stock.
const expectFor = 2 * time.Minute

// expectBurst: while launches are announced less than this apart, the
// offers beyond the stock are kept rather than declined. A pass starts its
// jobs one after the other (a store write each), so their announcements
// come over a second or more; an offer round that arrives in the middle
// would otherwise be cut to the launches announced so far, the rest
// declined with RefuseSeconds, and the later drivers would wait for the
// next REVIVE (reviveEvery), about one more offer round. Offers are still
// declined after OfferHold, and at most burstStock more are kept.
const expectBurst = 500 * time.Millisecond

// burstStock bounds the offers kept beyond the stock during a burst of
// announcements: enough for the starts of a large pass, and on a cluster
// of tens of thousands of agents not every agent's offer (holding 30,000
// offers made every launch, decline and reservation slow: the master
// rescinds a held offer before each reservation on its agent).
const burstStock = 100

type expectation struct {
	at     time.Time
	agents []string
}

// Expect announces that a job's driver launch comes soon (its reservations
// are being made on agents): offers stay unsuppressed, the offers held on
// those agents are declined with no filter (the reservations would have
// them rescinded, with a filter), the offers there that come after are
// kept (they are where the cluster keeps room for the driver), and a few
// others are kept in stock, so that the driver starts as soon as Launch
// is called. Launch or CancelLaunch ends the announcement.
func (f *Framework) Expect(ctx context.Context, jobID string, agents []string) {
	now := time.Now()
	f.mu.Lock()
	f.expected[jobID] = expectation{at: now, agents: agents}
	f.lastExpect = now
	for _, a := range agents {
		f.touched[a] = now
	}
	for a, at := range f.touched {
		if now.Sub(at) > expectFor {
			delete(f.touched, a)
		}
	}
	f.mu.Unlock()
	// The offers held on those agents are given back now, with no
	// filter, before the reservations go out: a Mesos master rescinds
	// an outstanding offer that holds what an operator RESERVE takes,
	// with a 5 s filter (master/http.cpp, _operation: Filters()), and
	// the agent would not be offered to sparkpack's role again until
	// that filter ran out or a REVIVE.
	f.declineUnneeded(ctx, true)
	f.reviveOrSuppress(ctx)
}

// waitingLocked counts the launches offers are wanted for: queued and
// announced ones. f.mu is held.
func (f *Framework) waitingLocked() int {
	for id, e := range f.expected {
		if time.Since(e.at) > expectFor {
			delete(f.expected, id)
		}
	}
	return len(f.pending) + len(f.expected)
}

// wantedAgentsLocked are the agents that waiting or announced launches
// prefer. f.mu is held.
func (f *Framework) wantedAgentsLocked() map[string]bool {
	out := map[string]bool{}
	for _, l := range f.pending {
		for _, a := range l.Prefer {
			out[a] = true
		}
		if l.Room != "" {
			out[l.Room] = true
		}
	}
	for _, e := range f.expected {
		for _, a := range e.agents {
			out[a] = true
		}
	}
	return out
}

// Kill asks Mesos to kill a task.
func (f *Framework) Kill(ctx context.Context, taskID, agentID string) error {
	k := &scheduler.Call_Kill{TaskID: mesos.TaskID{Value: taskID}}
	if agentID != "" {
		k.AgentID = &mesos.AgentID{Value: agentID}
	}
	return f.Sched.Call(ctx, &scheduler.Call{Type: scheduler.Call_KILL, Kill: k})
}

// pickLocked chooses the first waiting launch (by job id) that
// chooseDriverOffer finds a held offer for, and the offer; rooms are the
// offers' agents as the overlay shows them (heldRooms; nil: unknown, and
// every agent has room to spare). f.mu is held.
func (f *Framework) pickLocked(rooms map[string]AgentRoom) (*DriverLaunch, heldOffer, bool) {
	if len(f.pending) == 0 || len(f.offers) == 0 {
		return nil, heldOffer{}, false
	}
	ids := make([]string, 0, len(f.pending))
	for id := range f.pending {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	// What does not depend on the launch, once per pick (a REVIVE on a
	// cluster of 30,000 agents brings 30,000 offers): the offers by
	// roomierSpot, those of active agents, those on the agents a launch
	// names (its room's, its own). Per launch, driverCandidates, then
	// chooseDriverOffer on the few it keeps.
	type heldSpot struct {
		key, agent string
		spot       offerSpot // OnRoom unset; Active and Spare as without rooms
		room       AgentRoom
	}
	named := map[string][]int{}
	for _, id := range ids {
		l := f.pending[id]
		if l.Room != "" {
			named[l.Room] = nil
		}
		for _, a := range l.Prefer {
			named[a] = nil
		}
	}
	held := make([]heldSpot, 0, len(f.offers))
	for key, ho := range f.offers {
		agent := ho.offer.AgentID.Value
		h := heldSpot{key: key, agent: agent, spot: offerSpot{ID: ho.offer.ID.Value, CPUs: ho.cpus, MemMB: ho.mem,
			Fresh: !ho.since.Before(f.touched[agent]), Active: ho.active, Spare: true}}
		if rooms != nil {
			h.room = rooms[agent]
			h.spot.Active = h.room.Active
		}
		if ks, ok := named[agent]; ok {
			named[agent] = append(ks, len(held))
		}
		held = append(held, h)
	}
	order := make([]int, len(held))
	for k := range order {
		order[k] = k
	}
	slices.SortFunc(order, func(a, b int) int {
		switch {
		case roomierSpot(held[a].spot, held[b].spot):
			return -1
		case roomierSpot(held[b].spot, held[a].spot):
			return 1
		}
		return 0
	})
	var active []int
	for _, k := range order {
		if held[k].spot.Active {
			active = append(active, k)
		}
	}
	now := time.Now()
	var spots []offerSpot
	var extra []int
	for _, id := range ids {
		l := f.pending[id]
		spot := func(k int) offerSpot {
			h := &held[k]
			s := h.spot
			s.OnRoom = l.Room != "" && h.agent == l.Room
			if slices.Contains(l.Prefer, h.agent) {
				s.Active = true
			}
			if rooms != nil {
				s.Spare = h.room.Known && covers(h.room.FreeCPUs, l.CPUs) && covers(h.room.FreeMemMB, l.MemMB)
			}
			return s
		}
		extra = extra[:0]
		if l.Room != "" {
			extra = append(extra, named[l.Room]...)
		}
		for _, a := range l.Prefer {
			extra = append(extra, named[a]...)
		}
		want := driverWant{CPUs: l.CPUs, MemMB: l.MemMB, Room: l.RoomKind, Wait: now.Before(l.waitUntil)}
		cand := driverCandidates(want, order, active, extra, spot)
		spots = spots[:0]
		for _, k := range cand {
			spots = append(spots, spot(k))
		}
		if i := chooseDriverOffer(want, spots); i >= 0 {
			return l, f.offers[held[cand[i]].key], true
		}
	}
	return nil, heldOffer{}, false
}

// covers reports whether have is enough for want, within 1e-9 (offers'
// scalars are fixed-point in Mesos, a request's sum may round). chooseDriverOffer
// and driverResources must use this one test: a launch that one accepts
// and the other refuses stops tryLaunch, and every launch behind it waits.
func covers(have, want float64) bool { return have+1e-9 >= want }

// driverResources picks cpus and mem for a driver from an offer's
// resources allocated to sparkpack's role that are not reserved for a job.
func (f *Framework) driverResources(o mesos.Offer, cpus, mem float64) ([]mesos.Resource, bool) {
	var out []mesos.Resource
	need := map[string]float64{"cpus": cpus, "mem": mem}
	took := map[string]float64{}
	for _, r := range o.Resources {
		want := need[r.Name]
		if want <= 0 || r.Scalar == nil || len(r.Reservations) > 0 || r.Reservation != nil {
			continue
		}
		if r.AllocationInfo == nil || r.AllocationInfo.GetRole() != f.cfg.Role {
			continue
		}
		take := want
		if r.Scalar.Value < take {
			take = r.Scalar.Value
		}
		c := r
		c.Scalar = &mesos.Value_Scalar{Value: take}
		c.Role = nil
		out = append(out, c)
		need[r.Name] -= take
		took[r.Name] += take
	}
	return out, covers(took["cpus"], cpus) && covers(took["mem"], mem)
}

// launchPick is a waiting launch matched with a held offer.
type launchPick struct {
	l      *DriverLaunch
	chosen heldOffer
	res    []mesos.Resource
}

// tryLaunch launches the waiting drivers that held offers have room for.
// The launches matched at once are sent together, each from its own
// goroutine that tryLaunch waits for: a master that answers an ACCEPT
// late (a Mesos master allocating 30,000 agents; the emulator holds its
// lock meanwhile) made 16 drivers sent one after the other wait 20 s.
func (f *Framework) tryLaunch(ctx context.Context) {
	for {
		var picks []launchPick
		rooms := f.heldRooms() // before f.mu: the cluster takes its own lock
		f.mu.Lock()
		for {
			l, chosen, ok := f.pickLocked(rooms)
			var res []mesos.Resource
			if ok {
				res, ok = f.driverResources(chosen.offer, l.CPUs, l.MemMB)
			}
			if !ok {
				break
			}
			delete(f.pending, l.JobID)
			delete(f.offers, chosen.offer.ID.Value)
			picks = append(picks, launchPick{l, chosen, res})
		}
		f.mu.Unlock()
		if len(picks) == 0 {
			return
		}
		more := make([]bool, len(picks))
		if len(picks) == 1 {
			more[0] = f.launchOne(ctx, picks[0])
		} else {
			var wg sync.WaitGroup
			for i := range picks {
				wg.Add(1)
				go func() { defer wg.Done(); more[i] = f.launchOne(ctx, picks[i]) }()
			}
			wg.Wait()
		}
		for _, ok := range more {
			if !ok {
				return
			}
		}
	}
}

// launchOne sends one matched launch; false when the launches should stop
// until the next offer (recording it or the ACCEPT failed).
func (f *Framework) launchOne(ctx context.Context, p launchPick) bool {
	l, chosen, res := p.l, p.chosen, p.res
	agent := chosen.offer.AgentID.Value
	if l.Sending != nil {
		if err := l.Sending(agent); err != nil {
			f.mu.Lock()
			f.offers[chosen.offer.ID.Value] = chosen // declined in time like any unused offer
			if !errors.Is(err, ErrLaunchWithdrawn) {
				if _, again := f.pending[l.JobID]; !again {
					f.pending[l.JobID] = l
				}
			}
			f.mu.Unlock()
			if errors.Is(err, ErrLaunchWithdrawn) {
				return true
			}
			f.log.WithError(err).WithField("job", l.JobID).Warn("could not record the driver launch; it waits for the next offer")
			return false
		}
	}
	err := f.acceptLaunch(ctx, chosen.offer, l, res)
	if err == nil {
		f.cfg.Observer.ObserveAccept(time.Since(chosen.since))
		f.cfg.Observer.ObserveDriverLaunch()
		f.mu.Lock()
		f.taskJob[l.TaskID] = l.JobID
		f.mu.Unlock()
	} else {
		f.log.WithError(err).WithField("job", l.JobID).Warn("driver launch failed; retrying with the next offer")
		f.mu.Lock()
		if _, again := f.pending[l.JobID]; !again {
			f.pending[l.JobID] = l
		}
		f.mu.Unlock()
	}
	if l.Sent != nil {
		l.Sent(agent, err)
	}
	return err == nil
}

func (f *Framework) acceptLaunch(ctx context.Context, o mesos.Offer, l *DriverLaunch, res []mesos.Resource) error {
	if len(l.Argv) == 0 {
		return errors.New("empty driver command")
	}
	shell := false
	cmd := &mesos.CommandInfo{Shell: &shell, Value: &l.Argv[0], Arguments: l.Argv}
	if len(l.Env) > 0 {
		keys := make([]string, 0, len(l.Env))
		for k := range l.Env {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		env := &mesos.Environment{}
		for _, k := range keys {
			v := l.Env[k]
			env.Variables = append(env.Variables, mesos.Environment_Variable{Name: k, Value: &v})
		}
		cmd.Environment = env
	}
	labels := &mesos.Labels{}
	lk := make([]string, 0, len(l.Labels))
	for k := range l.Labels {
		lk = append(lk, k)
	}
	sort.Strings(lk)
	for _, k := range lk {
		v := l.Labels[k]
		labels.Labels = append(labels.Labels, mesos.Label{Key: k, Value: &v})
	}
	task := mesos.TaskInfo{
		Name:      "sparkpack driver " + l.JobID,
		TaskID:    mesos.TaskID{Value: l.TaskID},
		AgentID:   o.AgentID,
		Resources: res,
		Command:   cmd,
		Labels:    labels,
	}
	refuse := f.cfg.RefuseSeconds
	f.mu.Lock()
	if f.waitingLocked() > 0 {
		// Other launches wait or come soon: what this one leaves on the
		// agent, now active, is offered again at the next allocation
		// rather than after the filter (or a REVIVE), for a driver whose
		// room was kept there (chooseDriverOffer waits for it).
		refuse = 0
	}
	f.mu.Unlock()
	call := &scheduler.Call{Type: scheduler.Call_ACCEPT, Accept: &scheduler.Call_Accept{
		OfferIDs:   []mesos.OfferID{o.ID},
		Operations: []mesos.Offer_Operation{{Type: mesos.Offer_Operation_LAUNCH, Launch: &mesos.Offer_Operation_Launch{TaskInfos: []mesos.TaskInfo{task}}}},
		Filters:    &mesos.Filters{RefuseSeconds: &refuse},
	}}
	if err := f.Sched.Call(ctx, call); err != nil {
		return fmt.Errorf("launch driver of job %s on agent %s: %w", l.JobID, o.Hostname, err)
	}
	f.log.WithFields(logrus.Fields{"job": l.JobID, "agent": o.Hostname, "agent_id": o.AgentID.Value, "task": l.TaskID}).Info("driver launched")
	return nil
}
