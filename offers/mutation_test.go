package offers

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/master"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
)

// Tests written for the mutants that mutation testing found alive
// (scripts/mutation.sh offers; docs/testing.md). Expected values are
// worked out by hand from the Mesos operator API (MESOS_PROTOCOL.md), not
// read from the code's output.

// TestPriceZeroIsAPrice: a free agent (price 0, e.g. a machine already
// paid for) is a valid price table entry and a valid price attribute; the
// attribute wins over the instance type's table price.
func TestPriceZeroIsAPrice(t *testing.T) {
	pt, err := ParsePriceTable("owned=0,m1.large=0.24")
	if err != nil || len(pt) != 2 || pt["owned"] != 0 {
		t.Fatalf("price table %v, %v; want owned=0 and m1.large=0.24", pt, err)
	}
	a := getAgent("A", 4, 8192)
	a.AgentInfo.Attributes = []mesos.Attribute{
		{Name: "price", Type: mesos.TEXT, Text: &mesos.Value_Text{Value: "0"}},
		{Name: "instance_type", Type: mesos.TEXT, Text: &mesos.Value_Text{Value: "m1.large"}},
	}
	agents, warnings := AgentsFromMesos([]master.Response_GetAgents_Agent{a}, pt)
	if len(agents) != 1 || agents[0].PricePerHour != 0 || len(warnings) != 0 {
		t.Fatalf("agent with price attribute 0: %+v, warnings %v; want price 0 and no warning", agents, warnings)
	}
}

// TestSizeFromAgentInfo: GET_AGENTS' total_resources is optional (older
// masters leave it out); the agent's size is then agent_info.resources.
// When total_resources is there it is the size.
func TestSizeFromAgentInfo(t *testing.T) {
	a := getAgent("A", 4, 8192)
	a.AgentInfo.Resources = a.TotalResources
	a.TotalResources = nil
	b := getAgent("B", 8, 16384)
	b.AgentInfo.Resources = []mesos.Resource{scalarRes("cpus", 2, ""), scalarRes("mem", 1024, "")}
	agents, _ := AgentsFromMesos([]master.Response_GetAgents_Agent{a, b}, nil)
	if len(agents) != 2 {
		t.Fatalf("%d agents", len(agents))
	}
	if agents[0].CPUs != 4 || agents[0].MemMB != 8192 {
		t.Errorf("A (no total_resources): %v cpus, %v MiB; want 4 and 8192 from agent_info", agents[0].CPUs, agents[0].MemMB)
	}
	if agents[1].CPUs != 8 || agents[1].MemMB != 16384 {
		t.Errorf("B: %v cpus, %v MiB; want total_resources' 8 and 16384", agents[1].CPUs, agents[1].MemMB)
	}
}

// TestAllocatedByRoleCountsCPUsAndMemOnly: what GET_AGENTS shows
// allocated to tasks, by allocation role, sums cpus and mem; disk (or
// any other resource) allocated too is neither.
func TestAllocatedByRoleCountsCPUsAndMemOnly(t *testing.T) {
	a := getAgent("A", 4, 8192, scalarRes("cpus", 1, "sparkpack"), scalarRes("mem", 1024, "sparkpack"),
		scalarRes("disk", 5000, "sparkpack"), scalarRes("cpus", 2, "other"))
	agents, _ := AgentsFromMesos([]master.Response_GetAgents_Agent{a}, nil)
	if len(agents) != 1 {
		t.Fatalf("%d agents", len(agents))
	}
	got := agents[0].allocByRole
	if got["sparkpack"] != [2]float64{1, 1024} || got["other"] != [2]float64{2, 0} || len(got) != 2 {
		t.Errorf("allocated by role %v; want sparkpack [1 1024], other [2 0]", got)
	}
}

// TestConvertReusingTakesWhatPrevHolds: an agent whose sum is in prev is
// not converted again (a refresh of 30,000 agents converts only those
// that changed): what prev holds for it is used as it is, and handed on
// for the next refresh; an agent with a new sum is converted.
func TestConvertReusingTakesWhatPrevHolds(t *testing.T) {
	in := []master.Response_GetAgents_Agent{getAgent("A", 4, 8192), getAgent("B", 8, 16384)}
	cached := convertedAgent{st: AgentStatus{Agent: Agent{ID: "A", CPUs: 2, MemMB: 1024}, Active: true}, warn: "cached warning"}
	agents, warnings, statuses, next := convertReusing(in, []uint64{11, 22}, nil, map[uint64]convertedAgent{11: cached})
	if len(agents) != 2 || agents[0].CPUs != 2 || agents[0].MemMB != 1024 || agents[1].CPUs != 8 || agents[1].MemMB != 16384 {
		t.Fatalf("agents %+v: want A as cached (2 cpus, 1024 MiB) and B converted (8, 16384)", agents)
	}
	if len(warnings) != 1 || warnings[0] != "cached warning" || len(statuses) != 2 {
		t.Errorf("warnings %q, %d statuses; want the cached warning only (B has a price), 2 statuses", warnings, len(statuses))
	}
	if len(next) != 2 || next[11].st.CPUs != 2 || next[22].st.CPUs != 8 {
		t.Errorf("next %+v: want both agents by their sums", next)
	}
}

// TestDrainedOnlyWhenDrained: GET_AGENTS' drain_info.state is DRAINING
// while the agent's tasks are being killed and DRAINED once none is left;
// only the latter is a drained agent.
func TestDrainedOnlyWhenDrained(t *testing.T) {
	draining, drained, none := getAgent("A", 4, 8192), getAgent("B", 4, 8192), getAgent("C", 4, 8192)
	draining.DrainInfo = &mesos.DrainInfo{State: mesos.DrainState_DRAINING}
	drained.DrainInfo = &mesos.DrainInfo{State: mesos.DrainState_DRAINED}
	st := StatusesFromMesos([]master.Response_GetAgents_Agent{draining, drained, none}, nil)
	if len(st) != 3 || st[0].Drained || !st[1].Drained || st[2].Drained {
		t.Fatalf("drained: A %v, B %v, C %v; want false, true, false", st[0].Drained, st[1].Drained, st[2].Drained)
	}
}

// TestBusyByHand: an agent is busy when any of its resources is reserved
// (dynamically, or statically through the legacy role field) or when
// cpus or memory are allocated to tasks. Unreserved resources ("*") are
// not; what the rule counts in use is cpus and memory, which every task
// and executor holds (the command executor adds 0.1 cpus and 32 MiB), in
// positive amounts: disk alone, or a zero amount, is no task.
func TestBusyByHand(t *testing.T) {
	static := getAgent("S", 4, 8192)
	ops := "ops"
	static.TotalResources[0].Role = &ops
	star := getAgent("U", 4, 8192)
	empty := ""
	star.TotalResources[1].Role = &empty
	cases := []struct {
		a    master.Response_GetAgents_Agent
		busy bool
	}{
		{static, true},
		{star, false},
		{getAgent("C", 4, 8192, scalarRes("cpus", 1, "other")), true},
		{getAgent("M", 4, 8192, scalarRes("mem", 512, "other")), true},
		{getAgent("D", 4, 8192, scalarRes("disk", 100, "other")), false},
		{getAgent("Z", 4, 8192, scalarRes("cpus", 0, "other")), false},
	}
	for _, c := range cases {
		st := StatusesFromMesos([]master.Response_GetAgents_Agent{c.a}, nil)
		if len(st) != 1 || st[0].Busy != c.busy {
			t.Errorf("agent %s: busy %v, want %v", c.a.AgentInfo.ID.Value, st[0].Busy, c.busy)
		}
	}
}

// TestVarintAtMostTenBytes: a protobuf varint holds 64 bits in at most 10
// bytes (7 bits each); the largest, 2^64-1, is nine 0xff and 0x01. An
// 11-byte varint is malformed.
func TestVarintAtMostTenBytes(t *testing.T) {
	maxv := []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}
	if v, n, err := readVarint(maxv); err != nil || n != 10 || v != ^uint64(0) {
		t.Fatalf("10-byte varint: %d, %d bytes, %v; want 2^64-1 in 10", v, n, err)
	}
	long := []byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01}
	if v, n, err := readVarint(long); err == nil {
		t.Fatalf("11-byte varint read as %d (%d bytes); want an error", v, n)
	}
}

// TestAppendVarintByHand: protobuf's encoding (7 bits a byte, low first,
// the high bit set on all but the last): 127 is one byte, 128 two (0x80
// 0x01), 300 is 0xac 0x02 (the protobuf documentation's example).
func TestAppendVarintByHand(t *testing.T) {
	for _, c := range []struct {
		v    uint64
		want []byte
	}{{0, []byte{0}}, {127, []byte{0x7f}}, {128, []byte{0x80, 0x01}}, {300, []byte{0xac, 0x02}}, {16384, []byte{0x80, 0x80, 0x01}}} {
		if got := appendVarint(nil, c.v); string(got) != string(c.want) {
			t.Errorf("varint %d: % x, want % x", c.v, got, c.want)
		}
	}
}

// TestAttributesFlattened: every Mesos attribute type becomes a string,
// as an agent's --attributes flag writes it: text as is, a scalar as its
// number ("8", "2.5"), ranges "[1-2,5-6]", a set "{a,b}".
func TestAttributesFlattened(t *testing.T) {
	got := attributes([]mesos.Attribute{
		{Name: "rack", Type: mesos.TEXT, Text: &mesos.Value_Text{Value: "r1"}},
		{Name: "cores", Type: mesos.SCALAR, Scalar: &mesos.Value_Scalar{Value: 8}},
		{Name: "ghz", Type: mesos.SCALAR, Scalar: &mesos.Value_Scalar{Value: 2.5}},
		{Name: "ports", Type: mesos.RANGES, Ranges: &mesos.Value_Ranges{Range: []mesos.Value_Range{{Begin: 1, End: 2}, {Begin: 5, End: 6}}}},
		{Name: "zones", Type: mesos.SET, Set: &mesos.Value_Set{Item: []string{"a", "b"}}},
	})
	want := map[string]string{"rack": "r1", "cores": "8", "ghz": "2.5", "ports": "[1-2,5-6]", "zones": "{a,b}"}
	if len(got) != len(want) {
		t.Fatalf("attributes %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("attribute %s = %q, want %q", k, got[k], v)
		}
	}
}

// TestFixedWidthFields: protobuf's wire type 1 is 8 bytes (fixed64,
// double), wire type 5 is 4 (fixed32, float); a field with exactly its
// width is read, one cut short is malformed.
func TestFixedWidthFields(t *testing.T) {
	for _, c := range []struct {
		key   byte // field 1 with the wire type
		width int
	}{{1<<3 | wire64, 8}, {1<<3 | wire32, 4}} {
		full := append([]byte{c.key}, make([]byte, c.width)...)
		f, rest, err := nextField(full)
		if err != nil || len(f.value) != c.width || len(rest) != 0 || f.num != 1 {
			t.Errorf("wire type %d, %d bytes: value of %d bytes, %d left, %v", c.key&7, c.width, len(f.value), len(rest), err)
		}
		if _, _, err := nextField(full[:c.width]); err == nil {
			t.Errorf("wire type %d cut to %d bytes read without an error", c.key&7, c.width-1)
		}
	}
}

// TestDecodeErrorNamesTheAgent: an agent that does not decode is named by
// its place in the answer, counting from 1.
func TestDecodeErrorNamesTheAgent(t *testing.T) {
	a := getAgent("A", 4, 8192)
	good, err := a.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	// The second agent is empty: its required agent_info and active are missing.
	body := appendBytesField(appendBytesField(nil, fGetAgentsAgents, good), fGetAgentsAgents, nil)
	resp := appendBytesField(nil, fResponseGetAgents, body)
	_, err = decodeAgents(resp)
	if err == nil || !strings.HasPrefix(err.Error(), "agent 2: ") {
		t.Fatalf("error %v; want one naming agent 2", err)
	}
}

// declinedIDs are the offers declined so far.
func declinedIDs(calls *callLog) map[string]bool {
	out := map[string]bool{}
	for _, c := range calls.of(scheduler.Call_DECLINE) {
		for _, id := range c.Decline.OfferIDs {
			out[id.Value] = true
		}
	}
	return out
}

// TestOfferWithoutRoomDeclinedAtOnce: an offer with no cpus, or no
// memory, in sparkpack's role has no room for any driver: it is declined
// at once, even while the stock (4 offers) has room for it.
func TestOfferWithoutRoomDeclinedAtOnce(t *testing.T) {
	ctx := context.Background()
	fw, calls := subscribedFramework(t, nil)
	fw.cfg.OfferHold = time.Hour // no offer expires however slow the machine
	fw.Event(ctx, &scheduler.Event{Type: scheduler.Event_OFFERS, Offers: &scheduler.Event_Offers{Offers: []mesos.Offer{
		driverOffer("O-no-cpus", "S1", 0, 1024, "sparkpack"),
		driverOffer("O-no-mem", "S2", 2, 0, "sparkpack"),
		driverOffer("O-room", "S3", 2, 4096, "sparkpack"),
	}}})
	d := declinedIDs(calls)
	if !d["O-no-cpus"] || !d["O-no-mem"] || d["O-room"] {
		t.Fatalf("declined %v; want O-no-cpus and O-no-mem, not O-room", d)
	}
}

// TestOfferOnAWantedAgent: an offer on an agent an announced launch
// prefers is kept beyond the stock (the driver's room is there), however
// small; once held longer than expectFor (2 minutes) it is an offer like
// any other, declined after OfferHold (1 hour here).
func TestOfferOnAWantedAgent(t *testing.T) {
	ctx := context.Background()
	fw, calls := subscribedFramework(t, nil)
	fw.cfg.OfferHold = time.Hour // no offer expires however slow the machine
	fw.Expect(ctx, "job-1", []string{"S-wanted"})
	fw.mu.Lock()
	fw.lastExpect = fw.lastExpect.Add(-time.Minute) // no burst of announcements: the plain stock
	fw.mu.Unlock()
	offers := []mesos.Offer{driverOffer("O-wanted", "S-wanted", 1, 1024, "sparkpack")}
	for i := range 10 {
		offers = append(offers, driverOffer(fmt.Sprintf("O-%d", i), fmt.Sprintf("S%d", i), 4, 8192, "sparkpack"))
	}
	fw.Event(ctx, &scheduler.Event{Type: scheduler.Event_OFFERS, Offers: &scheduler.Event_Offers{Offers: offers}})
	d := declinedIDs(calls)
	// stock: one per waiting launch (1) + OfferStock (4): 5 of the 10 others kept.
	if d["O-wanted"] || len(d) != 5 {
		t.Fatalf("declined %v; want 5 of the 10 others, not O-wanted", d)
	}
	fw.mu.Lock()
	ho := fw.offers["O-wanted"]
	ho.since = ho.since.Add(-2 * time.Hour)
	fw.offers["O-wanted"] = ho
	fw.mu.Unlock()
	fw.declineUnneeded(ctx, true)
	if !declinedIDs(calls)["O-wanted"] {
		t.Fatal("an offer on a wanted agent held 2 hours is still kept")
	}
}

// TestStockKeepsTheRoomiest: beyond the stock (no launch waiting: the 4
// of OfferStock) the offers with the least room are declined: fewer cpus
// first, then, at equal cpus, less memory. No DECLINE goes out empty.
func TestStockKeepsTheRoomiest(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name     string
		offers   []mesos.Offer
		declined []string
	}{
		{"by cpus", []mesos.Offer{
			driverOffer("O-a", "S1", 1, 4096, "sparkpack"), driverOffer("O-b", "S2", 2, 4096, "sparkpack"),
			driverOffer("O-c", "S3", 3, 4096, "sparkpack"), driverOffer("O-d", "S4", 4, 4096, "sparkpack"),
			driverOffer("O-e", "S5", 5, 4096, "sparkpack"), driverOffer("O-f", "S6", 6, 4096, "sparkpack"),
		}, []string{"O-a", "O-b"}},
		{"by memory at equal cpus", []mesos.Offer{
			driverOffer("O-a", "S1", 4, 1024, "sparkpack"), driverOffer("O-b", "S2", 4, 2048, "sparkpack"),
			driverOffer("O-c", "S3", 4, 3072, "sparkpack"), driverOffer("O-d", "S4", 4, 4096, "sparkpack"),
			driverOffer("O-e", "S5", 4, 5120, "sparkpack"), driverOffer("O-f", "S6", 4, 6144, "sparkpack"),
		}, []string{"O-a", "O-b"}},
	} {
		fw, calls := subscribedFramework(t, nil)
		fw.cfg.OfferHold = time.Hour // no offer expires however slow the machine
		fw.Event(ctx, &scheduler.Event{Type: scheduler.Event_OFFERS, Offers: &scheduler.Event_Offers{Offers: c.offers}})
		d := declinedIDs(calls)
		if len(d) != len(c.declined) || !d[c.declined[0]] || !d[c.declined[1]] {
			t.Errorf("%s: declined %v, want %v", c.name, d, c.declined)
		}
		for _, call := range calls.of(scheduler.Call_DECLINE) {
			if len(call.Decline.OfferIDs) == 0 {
				t.Errorf("%s: a DECLINE of no offer was sent", c.name)
			}
		}
	}
}

// declineCounter is an Observer that counts the offers declined.
type declineCounter struct {
	nopObserver
	declined int
}

func (d *declineCounter) ObserveDeclines(n int) { d.declined += n }

// TestDeclinesObserved: the metrics hear of the offers declined, once
// the master took the DECLINE: the 2 beyond the stock of 4.
func TestDeclinesObserved(t *testing.T) {
	ctx := context.Background()
	fw, calls := subscribedFramework(t, nil)
	obs := &declineCounter{}
	fw.cfg.Observer, fw.cfg.OfferHold = obs, time.Hour
	var offers []mesos.Offer
	for i := range 6 {
		offers = append(offers, driverOffer(fmt.Sprintf("O-%d", i), fmt.Sprintf("S%d", i), 4, 8192, "sparkpack"))
	}
	fw.Event(ctx, &scheduler.Event{Type: scheduler.Event_OFFERS, Offers: &scheduler.Event_Offers{Offers: offers}})
	if d := declinedIDs(calls); len(d) != 2 || obs.declined != 2 {
		t.Fatalf("declined %v, observed %d; want 2 and 2", d, obs.declined)
	}
}

// TestReviveIfWaitingByHand: REVIVE (which also clears the decline
// filters) goes out when a queued driver waits and offers are suppressed
// or the last REVIVE is reviveEvery (1 s) old; or when a launch is
// announced, no offer is held, and offers are suppressed or the last
// REVIVE is OfferHold (5 s) old. Nothing waiting: no REVIVE.
func TestReviveIfWaitingByHand(t *testing.T) {
	ctx := context.Background()
	const (
		longAgo = -time.Hour
		justNow = time.Hour // revivedAt in the future: surely less than any wait ago, however slow the machine
	)
	for _, c := range []struct {
		name                         string
		queued, announced, offerHeld bool
		suppressed                   bool
		revived                      time.Duration // revivedAt from now
		want                         bool
	}{
		{"queued, revived long ago", true, false, false, false, longAgo, true},
		{"queued, revived just now", true, false, false, false, justNow, false},
		{"queued, suppressed, revived just now", true, false, false, true, justNow, true},
		{"nothing waits", false, false, false, false, longAgo, false},
		{"nothing waits, suppressed", false, false, false, true, longAgo, false},
		{"announced, no offer held, revived long ago", false, true, false, false, longAgo, true},
		{"announced, an offer held", false, true, true, false, longAgo, false},
		{"announced, no offer held, revived just now", false, true, false, false, justNow, false},
	} {
		fw, calls := subscribedFramework(t, nil)
		fw.mu.Lock()
		if c.queued {
			fw.pending["j-queued"] = &DriverLaunch{JobID: "j-queued", TaskID: "t-q", CPUs: 1, MemMB: 1024}
		}
		if c.announced {
			fw.expected["j-announced"] = expectation{at: time.Now()}
		}
		if c.offerHeld {
			o := driverOffer("O-1", "S1", 0.5, 512, "sparkpack")
			fw.offers["O-1"] = heldOffer{offer: o, since: time.Now(), cpus: 0.5, mem: 512}
		}
		fw.suppressed = c.suppressed
		fw.revivedAt = time.Now().Add(c.revived)
		fw.mu.Unlock()
		fw.reviveIfWaiting(ctx)
		if got := len(calls.of(scheduler.Call_REVIVE)) == 1; got != c.want {
			t.Errorf("%s: REVIVE sent %v, want %v", c.name, got, c.want)
		}
	}
}

// TestYieldedAndStaleOffersDeclined: an offer on an agent being reserved
// from offers in a job's role is declined with a 2 s filter (the job's
// role is offered the agent meanwhile); one received before a reservation
// on its agent is given back with no filter; both count as declines.
func TestYieldedAndStaleOffersDeclined(t *testing.T) {
	ctx := context.Background()
	fw, calls := subscribedFramework(t, nil)
	obs := &declineCounter{}
	fw.cfg.Observer, fw.cfg.OfferHold = obs, time.Hour
	fw.mu.Lock()
	fw.yielding["S-yield"] = 1
	fw.touched["S-touched"] = time.Now().Add(time.Hour) // reserved after any offer received now
	fw.mu.Unlock()
	fw.Event(ctx, &scheduler.Event{Type: scheduler.Event_OFFERS, Offers: &scheduler.Event_Offers{Offers: []mesos.Offer{
		driverOffer("O-yield", "S-yield", 2, 4096, "sparkpack"),
		driverOffer("O-stale", "S-touched", 2, 4096, "sparkpack"),
	}}})
	filter := map[string]float64{}
	for _, c := range calls.of(scheduler.Call_DECLINE) {
		for _, id := range c.Decline.OfferIDs {
			filter[id.Value] = c.Decline.Filters.GetRefuseSeconds()
		}
	}
	if len(filter) != 2 || filter["O-yield"] != 2 || filter["O-stale"] != 0 || obs.declined != 2 {
		t.Fatalf("declined with filters %v, %d observed; want O-yield 2 s, O-stale 0 s, 2 observed", filter, obs.declined)
	}
}

// TestReservationResourcesByHand: a reservation is a cpus and a mem
// resource, dynamically reserved for the role with the job's label, by
// the principal when there is one (ReservationInfo.principal is
// optional); an amount of 0 is no resource at all (nothing of it is
// reserved).
func TestReservationResourcesByHand(t *testing.T) {
	res := ReservationResources("sparkpack-job-j", "ops", "j", 2, 4096)
	if len(res) != 2 || res[0].Name != "cpus" || res[0].Scalar.Value != 2 || res[1].Name != "mem" || res[1].Scalar.Value != 4096 {
		t.Fatalf("resources %+v; want cpus 2 and mem 4096", res)
	}
	for _, r := range res {
		ri := r.Reservations[0]
		if len(r.Reservations) != 1 || ri.GetRole() != "sparkpack-job-j" || ri.GetPrincipal() != "ops" ||
			ri.GetType() != mesos.Resource_ReservationInfo_DYNAMIC || len(ri.Labels.Labels) != 1 ||
			ri.Labels.Labels[0].Key != LabelKey || ri.Labels.Labels[0].GetValue() != "j" {
			t.Errorf("%s reservation %+v", r.Name, ri)
		}
	}
	for _, r := range ReservationResources("sparkpack-job-j", "", "j", 2, 4096) {
		if r.Reservations[0].Principal != nil {
			t.Errorf("%s reserved by principal %q without one", r.Name, r.Reservations[0].GetPrincipal())
		}
	}
	if res := ReservationResources("r", "", "j", 0, 1024); len(res) != 1 || res[0].Name != "mem" {
		t.Errorf("0 cpus: %+v; want the mem resource only", res)
	}
	if res := ReservationResources("r", "", "j", 1, 0); len(res) != 1 || res[0].Name != "cpus" {
		t.Errorf("0 MiB: %+v; want the cpus resource only", res)
	}
}

// TestLabelledReservationsOrder: an agent's reservations are listed by
// job id, then role (a job reserved in two roles shows twice), each
// summing its cpus and mem.
func TestLabelledReservationsOrder(t *testing.T) {
	res := append(append(ReservationResources("role-b", "", "b", 1, 100), ReservationResources("role-z", "", "a", 2, 200)...),
		ReservationResources("role-a", "", "a", 3, 300)...)
	res = append(res, ReservationResources("role-a", "", "a", 1, 10)...)
	got := LabelledReservations("A", res)
	want := []struct {
		job, role string
		cpus, mem float64
	}{{"a", "role-a", 4, 310}, {"a", "role-z", 2, 200}, {"b", "role-b", 1, 100}}
	if len(got) != len(want) {
		t.Fatalf("%d reservations, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		if g := got[i]; g.JobID != w.job || g.Role != w.role || g.CPUs != w.cpus || g.MemMB != w.mem || g.AgentID != "A" {
			t.Errorf("reservation %d: %s in %s, %v cpus, %v MiB; want %s in %s, %v, %v", i, g.JobID, g.Role, g.CPUs, g.MemMB, w.job, w.role, w.cpus, w.mem)
		}
	}
}
