package probe

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"sort"
	"strings"
	"time"
)

// Options configure a probe session.
type Options struct {
	URL string // http://host:port of the master
	// LoseAgent and ReturnAgent, if set, make the named agent crash and
	// come back (with its work directory); the agent-loss steps run only
	// with both.
	LoseAgent   func(host string) error
	ReturnAgent func(host string) error
	Logf        func(format string, args ...any)
}

// Step is one recorded step: its events, normalised.
type Step struct {
	Name   string `json:"name"`
	Events []any  `json:"events"`
}

// Record is a probe session's result.
type Record struct {
	Comment string `json:"comment,omitempty"`
	Steps   []Step `json:"steps"`
}

type prober struct {
	o          Options
	url        string
	hc         *http.Client
	stream     *http.Client
	norm       *normalizer
	rec        *Record
	frameworks []string
	hosts      map[string]string // hostname -> agent id
	// the MULTI_ROLE framework and its offers, for the agent-loss steps
	multi       *framework
	multiOffers map[string]obj
}

// Run runs the session against the master and returns its record.
func Run(ctx context.Context, o Options) (*Record, error) {
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
	p := &prober{o: o, url: strings.TrimRight(o.URL, "/"), hc: &http.Client{Timeout: 15 * time.Second}, stream: &http.Client{},
		norm: &normalizer{agents: map[string]string{}, frameworks: map[string]string{}}, rec: &Record{}, hosts: map[string]string{}}
	err := p.run(ctx)
	p.cleanup()
	if err != nil {
		return p.rec, err
	}
	return p.rec, nil
}

func (p *prober) add(name string, events ...any) {
	out := make([]any, len(events))
	for i, e := range events {
		out[i] = p.norm.value(e)
	}
	p.rec.Steps = append(p.rec.Steps, Step{Name: name, Events: out})
	p.o.Logf("probe: %s (%d events)", name, len(events))
}

func (p *prober) run(ctx context.Context) error {
	ga, err := p.operator(ctx, obj{"type": "GET_AGENTS"})
	if err != nil {
		return err
	}
	agents, _ := get(ga, "get_agents", "agents").([]any)
	if len(agents) != 3 {
		return fmt.Errorf("the probe wants the 3 agents of realmesos.ThreeAgents, the master has %d", len(agents))
	}
	for _, a := range agents {
		id, host := str(a, "agent_info", "id", "value"), str(a, "agent_info", "hostname")
		p.norm.agents[id] = host
		p.hosts[host] = id
	}
	gm, err := p.operator(ctx, obj{"type": "GET_MASTER"})
	if err != nil {
		return err
	}
	p.norm.masterID = str(gm, "get_master", "master_info", "id")
	sortByHost(agents, func(a any) string { return str(a, "agent_info", "hostname") })
	p.add("operator GET_AGENTS of a fresh cluster", agents...)

	if err := p.legacy(ctx); err != nil {
		return err
	}
	if err := p.multiRole(ctx); err != nil {
		return err
	}
	if p.o.LoseAgent != nil && p.o.ReturnAgent != nil {
		if err := p.agentLoss(ctx); err != nil {
			return err
		}
	}
	return nil
}

// ---- a framework without MULTI_ROLE, as Spark registers ----

func scalarRes(name string, v float64, extra obj) obj {
	r := obj{"name": name, "type": "SCALAR", "scalar": obj{"value": v}}
	for k, x := range extra {
		r[k] = x
	}
	return r
}

func commandTask(id, agentID, cmd string, res []any, labels obj) obj {
	ls := []any{}
	for k, v := range labels {
		ls = append(ls, obj{"key": k, "value": v})
	}
	sort.Slice(ls, func(i, j int) bool { return str(ls[i], "key") < str(ls[j], "key") })
	t := obj{"name": id, "task_id": obj{"value": id}, "agent_id": obj{"value": agentID}, "resources": res,
		"command": obj{"shell": true, "value": cmd}}
	if len(ls) > 0 {
		t["labels"] = obj{"labels": ls}
	}
	return t
}

// offersByHost waits until f holds an offer from each of the hosts.
func (p *prober) offersByHost(ctx context.Context, f *framework, hosts ...string) (map[string]obj, error) {
	want := map[string]bool{}
	for _, h := range hosts {
		want[h] = true
	}
	got := map[string]obj{}
	deadline := time.Now().Add(30 * time.Second)
	for len(got) < len(want) {
		ev, err := f.wait(ctx, time.Until(deadline), isType("OFFERS"))
		if err != nil {
			return nil, fmt.Errorf("offers from %v: %w (have %d)", hosts, err, len(got))
		}
		list, _ := get(ev, "offers", "offers").([]any)
		for _, o := range list {
			om := o.(obj)
			h := str(om, "hostname")
			if want[h] && got[h] == nil {
				got[h] = om
				continue
			}
			// not wanted now: hand it back for a while
			_ = f.call(ctx, "DECLINE", obj{"offer_ids": []any{om["id"]}, "filters": obj{"refuse_seconds": 3600}})
		}
	}
	return got, nil
}

// updates collects the status updates of tasks until each is terminal,
// acknowledging them; it returns each task's updates in order.
func (p *prober) updates(ctx context.Context, f *framework, timeout time.Duration, tasks ...string) (map[string][]any, error) {
	out := map[string][]any{}
	done := map[string]bool{}
	deadline := time.Now().Add(timeout)
	for len(done) < len(tasks) {
		ev, err := f.wait(ctx, time.Until(deadline), func(e obj) bool {
			if e["type"] != "UPDATE" {
				return false
			}
			id := str(e, "update", "status", "task_id", "value")
			for _, t := range tasks {
				if t == id && !done[t] {
					return true
				}
			}
			return false
		})
		if err != nil {
			return out, fmt.Errorf("updates of %v: %w (done: %v)", tasks, err, done)
		}
		id := str(ev, "update", "status", "task_id", "value")
		out[id] = append(out[id], ev)
		if err := f.ack(ctx, ev); err != nil {
			return out, err
		}
		if terminalStates[str(ev, "update", "status", "state")] {
			done[id] = true
		}
	}
	return out, nil
}

func (p *prober) legacy(ctx context.Context) error {
	f, sub, err := p.subscribe(ctx, "legacy", obj{"user": "root", "name": "probe-legacy", "role": "probe", "failover_timeout": 0})
	if err != nil {
		return err
	}
	hb, err := f.wait(ctx, 20*time.Second, isType("HEARTBEAT"))
	if err != nil {
		return err
	}
	p.add("legacy framework (role probe, no capabilities): SUBSCRIBED and the first HEARTBEAT", sub, hb)

	offers, err := p.offersByHost(ctx, f, "rm-a1", "rm-a2", "rm-a3")
	if err != nil {
		return err
	}
	var list []any
	for _, h := range []string{"rm-a1", "rm-a2", "rm-a3"} {
		list = append(list, offers[h])
	}
	p.add("legacy framework: its first offer from each agent", list...)

	// Three command tasks in one ACCEPT on rm-a1: one finishes, one is
	// killed, one fails. The labels tell the emulator what the command
	// does (it runs no processes).
	a1 := p.hosts["rm-a1"]
	res := func() []any {
		return []any{scalarRes("cpus", 1, obj{"role": "*"}), scalarRes("mem", 128, obj{"role": "*"})}
	}
	tasks := []any{
		commandTask("probe-finishes", a1, "sleep 1", res(), obj{"sparkpack.sim/duration-seconds": "1"}),
		commandTask("probe-killed", a1, "sleep 600", res(), obj{"sparkpack.sim/duration-seconds": "600"}),
		commandTask("probe-fails", a1, "sleep 1; exit 3", res(), obj{"sparkpack.sim/duration-seconds": "1", "sparkpack.sim/exit-code": "3"}),
	}
	for _, h := range []string{"rm-a2", "rm-a3"} {
		if err := f.call(ctx, "DECLINE", obj{"offer_ids": []any{offers[h]["id"]}, "filters": obj{"refuse_seconds": 3600}}); err != nil {
			return err
		}
	}
	if err := f.call(ctx, "ACCEPT", obj{"offer_ids": []any{offers["rm-a1"]["id"]},
		"operations": []any{obj{"type": "LAUNCH", "launch": obj{"task_infos": tasks}}}, "filters": obj{"refuse_seconds": 3600}}); err != nil {
		return err
	}
	// Kill the long one once it runs.
	var killedUpdates []any
	for {
		ev, err := f.wait(ctx, 30*time.Second, updateOf("probe-killed"))
		if err != nil {
			return err
		}
		killedUpdates = append(killedUpdates, ev)
		if err := f.ack(ctx, ev); err != nil {
			return err
		}
		if str(ev, "update", "status", "state") == "TASK_RUNNING" {
			break
		}
	}
	if err := f.call(ctx, "KILL", obj{"task_id": obj{"value": "probe-killed"}, "agent_id": obj{"value": a1}}); err != nil {
		return err
	}
	ups, err := p.updates(ctx, f, 60*time.Second, "probe-finishes", "probe-killed", "probe-fails")
	if err != nil {
		return err
	}
	p.add("legacy framework: updates of a command task that exits 0", ups["probe-finishes"]...)
	p.add("legacy framework: updates of a command task killed while running", append(killedUpdates, ups["probe-killed"]...)...)
	p.add("legacy framework: updates of a command task that exits 3", ups["probe-fails"]...)

	// Reconciliation: a finished (acknowledged) task, an unknown one,
	// then implicit.
	if err := f.call(ctx, "RECONCILE", obj{"tasks": []any{obj{"task_id": obj{"value": "probe-finishes"}}, obj{"task_id": obj{"value": "probe-never-launched"}}}}); err != nil {
		return err
	}
	rec := f.drain(2*time.Second, isType("UPDATE"))
	sortUpdates(rec)
	p.add("legacy framework: explicit RECONCILE of a finished task and an unknown task", anys(rec)...)
	if err := f.call(ctx, "RECONCILE", obj{}); err != nil {
		return err
	}
	p.add("legacy framework: implicit RECONCILE with no task running", anys(f.drain(2*time.Second, isType("UPDATE")))...)

	// A reservation for its role, in the offer format Spark sees, and a
	// task on it built as Spark builds executors.
	a2 := p.hosts["rm-a2"]
	reserve := []any{
		scalarRes("cpus", 2, obj{"reservations": []any{obj{"type": "DYNAMIC", "role": "probe", "labels": obj{"labels": []any{obj{"key": "probe", "value": "legacy"}}}}}}),
		scalarRes("mem", 1024, obj{"reservations": []any{obj{"type": "DYNAMIC", "role": "probe", "labels": obj{"labels": []any{obj{"key": "probe", "value": "legacy"}}}}}}),
	}
	if _, err := p.operator(ctx, obj{"type": "RESERVE_RESOURCES", "reserve_resources": obj{"agent_id": obj{"value": a2}, "resources": reserve}}); err != nil {
		return err
	}
	if err := f.call(ctx, "REVIVE", nil); err != nil {
		return err
	}
	offers, err = p.offersByHost(ctx, f, "rm-a2")
	if err != nil {
		return err
	}
	o2 := offers["rm-a2"]
	p.add("legacy framework: an offer holding a reservation for its role", o2)
	var execRes []any
	for _, r := range o2["resources"].([]any) {
		rm := r.(obj)
		if rm["role"] == "probe" && (rm["name"] == "cpus" || rm["name"] == "mem") {
			c := obj{}
			for k, v := range rm {
				c[k] = v
			}
			c["scalar"] = obj{"value": map[string]float64{"cpus": 1, "mem": 512}[rm["name"].(string)]}
			execRes = append(execRes, c)
		}
	}
	exec := commandTask("probe-on-reservation", a2, "sleep 1", execRes, obj{"sparkpack.sim/duration-seconds": "1"})
	if err := f.call(ctx, "ACCEPT", obj{"offer_ids": []any{o2["id"]}, "operations": []any{obj{"type": "LAUNCH", "launch": obj{"task_infos": []any{exec}}}},
		"filters": obj{"refuse_seconds": 3600}}); err != nil {
		return err
	}
	ups, err = p.updates(ctx, f, 30*time.Second, "probe-on-reservation")
	if err != nil {
		return err
	}
	p.add("legacy framework: updates of a task on reserved resources (copied from the offer, legacy format)", ups["probe-on-reservation"]...)

	gt, err := p.operator(ctx, obj{"type": "GET_TASKS"})
	if err != nil {
		return err
	}
	p.add("operator GET_TASKS after the legacy framework's tasks ended", p.tasksOf(gt)...)

	if err := f.call(ctx, "TEARDOWN", nil); err != nil {
		return err
	}
	// Offers sent before the TEARDOWN may still arrive: only the other
	// events and whether the stream ends are recorded.
	after := f.drain(time.Second, func(e obj) bool { return e["type"] != "OFFERS" && e["type"] != "HEARTBEAT" })
	f.mu.Lock()
	ended := f.ended != nil
	f.mu.Unlock()
	p.add("legacy framework: events after its TEARDOWN, and whether its stream ended", append(anys(after), obj{"stream_ended": ended})...)
	f.close()
	gf, err := p.operator(ctx, obj{"type": "GET_FRAMEWORKS"})
	if err != nil {
		return err
	}
	p.add("operator GET_FRAMEWORKS after the TEARDOWN", gf)
	gt, err = p.operator(ctx, obj{"type": "GET_TASKS"})
	if err != nil {
		return err
	}
	p.add("operator GET_TASKS after the TEARDOWN", p.tasksOf(gt)...)
	if _, err := p.operator(ctx, obj{"type": "UNRESERVE_RESOURCES", "unreserve_resources": obj{"agent_id": obj{"value": a2}, "resources": reserve}}); err != nil {
		return err
	}
	return nil
}

// ---- a MULTI_ROLE, partition-aware framework, as sparkpack registers ----

func (p *prober) multiRole(ctx context.Context) error {
	a3 := p.hosts["rm-a3"]
	reserve := []any{
		scalarRes("cpus", 2, obj{"reservations": []any{obj{"type": "DYNAMIC", "role": "probe-m", "labels": obj{"labels": []any{obj{"key": "probe", "value": "multi"}}}}}}),
		scalarRes("mem", 1024, obj{"reservations": []any{obj{"type": "DYNAMIC", "role": "probe-m", "labels": obj{"labels": []any{obj{"key": "probe", "value": "multi"}}}}}}),
	}
	if _, err := p.operator(ctx, obj{"type": "RESERVE_RESOURCES", "reserve_resources": obj{"agent_id": obj{"value": a3}, "resources": reserve}}); err != nil {
		return err
	}
	f, _, err := p.subscribe(ctx, "multi", obj{"user": "root", "name": "probe-multi", "roles": []any{"probe-m"}, "failover_timeout": 60,
		"checkpoint": true, "capabilities": []any{obj{"type": "MULTI_ROLE"}, obj{"type": "RESERVATION_REFINEMENT"}, obj{"type": "PARTITION_AWARE"}}})
	if err != nil {
		return err
	}
	offers, err := p.offersByHost(ctx, f, "rm-a1", "rm-a3")
	if err != nil {
		return err
	}
	p.add("MULTI_ROLE framework: offers of an agent with and without a reservation for its role", offers["rm-a1"], offers["rm-a3"])
	p.multi = f
	p.multiOffers = offers
	return nil
}

// ---- agent loss ----

func (p *prober) agentLoss(ctx context.Context) error {
	f := p.multi
	a3 := p.hosts["rm-a3"]
	o3 := p.multiOffers["rm-a3"]
	var res []any
	for _, r := range o3["resources"].([]any) {
		rm := r.(obj)
		if len(anySlice(rm["reservations"])) > 0 && (rm["name"] == "cpus" || rm["name"] == "mem") {
			res = append(res, rm)
		}
	}
	long := commandTask("probe-m-long", a3, "sleep 600", res, obj{"sparkpack.sim/duration-seconds": "600"})
	if err := f.call(ctx, "ACCEPT", obj{"offer_ids": []any{o3["id"]}, "operations": []any{obj{"type": "LAUNCH", "launch": obj{"task_infos": []any{long}}}},
		"filters": obj{"refuse_seconds": 3600}}); err != nil {
		return err
	}
	if err := f.call(ctx, "DECLINE", obj{"offer_ids": []any{p.multiOffers["rm-a1"]["id"]}, "filters": obj{"refuse_seconds": 3600}}); err != nil {
		return err
	}
	// A second framework without MULTI_ROLE and without checkpointing (as
	// Spark registers) with a task on the same agent.
	g, _, err := p.subscribe(ctx, "legacy2", obj{"user": "root", "name": "probe-legacy-2", "role": "probe", "failover_timeout": 0})
	if err != nil {
		return err
	}
	offers, err := p.offersByHost(ctx, g, "rm-a3")
	if err != nil {
		return err
	}
	long2 := commandTask("probe-legacy-long", a3, "sleep 600", []any{scalarRes("cpus", 1, obj{"role": "*"}), scalarRes("mem", 128, obj{"role": "*"})},
		obj{"sparkpack.sim/duration-seconds": "600"})
	if err := g.call(ctx, "ACCEPT", obj{"offer_ids": []any{offers["rm-a3"]["id"]}, "operations": []any{obj{"type": "LAUNCH", "launch": obj{"task_infos": []any{long2}}}},
		"filters": obj{"refuse_seconds": 3600}}); err != nil {
		return err
	}
	for _, fw := range []struct {
		f    *framework
		task string
	}{{f, "probe-m-long"}, {g, "probe-legacy-long"}} {
		for {
			ev, err := fw.f.wait(ctx, 30*time.Second, updateOf(fw.task))
			if err != nil {
				return err
			}
			if err := fw.f.ack(ctx, ev); err != nil {
				return err
			}
			if str(ev, "update", "status", "state") == "TASK_RUNNING" {
				break
			}
		}
	}
	lost := time.Now()
	if err := p.o.LoseAgent("rm-a3"); err != nil {
		return err
	}
	// Until the master lets the agent go (it leaves GET_AGENTS).
	for {
		ga, err := p.operator(ctx, obj{"type": "GET_AGENTS"})
		if err != nil {
			return err
		}
		present := false
		for _, a := range anySlice(get(ga, "get_agents", "agents")) {
			present = present || str(a, "agent_info", "id", "value") == a3
		}
		if !present {
			break
		}
		if time.Since(lost) > time.Minute {
			return fmt.Errorf("rm-a3 still in GET_AGENTS a minute after it was lost")
		}
		time.Sleep(100 * time.Millisecond)
	}
	mUps := f.drain(time.Second, updateOf("probe-m-long"))
	gUps := g.drain(0, updateOf("probe-legacy-long"))
	for _, ev := range mUps {
		_ = f.ack(ctx, ev)
	}
	for _, ev := range gUps {
		_ = g.ack(ctx, ev)
	}
	p.add("agent lost: updates of a partition-aware framework's task on it", anys(mUps)...)
	p.add("agent lost: updates of a framework's task on it (no MULTI_ROLE, no checkpoint)", anys(gUps)...)
	p.add("agent lost: other events of the partition-aware framework", withoutHeartbeats(f.drain(0, func(e obj) bool { return e["type"] != "OFFERS" }))...)
	p.add("agent lost: other events of the legacy framework", withoutHeartbeats(g.drain(0, func(e obj) bool { return e["type"] != "OFFERS" }))...)
	ga, err := p.operator(ctx, obj{"type": "GET_AGENTS"})
	if err != nil {
		return err
	}
	hostsLeft := []any{}
	for _, a := range anySlice(get(ga, "get_agents", "agents")) {
		hostsLeft = append(hostsLeft, str(a, "agent_info", "hostname"))
	}
	sort.Slice(hostsLeft, func(i, j int) bool { return hostsLeft[i].(string) < hostsLeft[j].(string) })
	p.add("agent lost: hostnames GET_AGENTS lists", hostsLeft...)

	if err := p.o.ReturnAgent("rm-a3"); err != nil {
		return err
	}
	back := f.drain(3*time.Second, updateOf("probe-m-long"))
	for _, ev := range back {
		_ = f.ack(ctx, ev)
	}
	p.add("agent back: updates of the partition-aware framework's task", anys(back)...)
	p.add("agent back: updates of the legacy framework's task", anys(g.drain(0, updateOf("probe-legacy-long")))...)
	ga, err = p.operator(ctx, obj{"type": "GET_AGENTS"})
	if err != nil {
		return err
	}
	var a3Back []any
	for _, a := range anySlice(get(ga, "get_agents", "agents")) {
		if str(a, "agent_info", "hostname") == "rm-a3" {
			a3Back = append(a3Back, a)
		}
	}
	p.add("agent back: its GET_AGENTS entry (reservations are checkpointed)", a3Back...)
	if err := f.call(ctx, "RECONCILE", obj{"tasks": []any{obj{"task_id": obj{"value": "probe-m-long"}}}}); err != nil {
		return err
	}
	rec := f.drain(2*time.Second, isType("UPDATE"))
	p.add("agent back: explicit RECONCILE of the partition-aware framework's task", anys(rec)...)
	return nil
}

// cleanup tears down the probe's frameworks and removes its reservations.
func (p *prober) cleanup() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, id := range p.frameworks {
		_, _ = p.operator(ctx, obj{"type": "TEARDOWN", "teardown": obj{"framework_id": obj{"value": id}}})
	}
	ga, err := p.operator(ctx, obj{"type": "GET_AGENTS"})
	if err != nil {
		return
	}
	for _, a := range anySlice(get(ga, "get_agents", "agents")) {
		var mine []any
		for _, r := range anySlice(get(a, "total_resources")) {
			rs := anySlice(get(r, "reservations"))
			if len(rs) > 0 && strings.HasPrefix(str(rs[len(rs)-1], "role"), "probe") {
				c := obj{}
				for k, v := range r.(obj) {
					if k != "role" && k != "reservation" {
						c[k] = v
					}
				}
				mine = append(mine, c)
			}
		}
		if len(mine) > 0 {
			_, _ = p.operator(ctx, obj{"type": "UNRESERVE_RESOURCES", "unreserve_resources": obj{"agent_id": get(a, "agent_info", "id"), "resources": mine}})
		}
	}
}

func anys(evs []obj) []any {
	out := make([]any, len(evs))
	for i, e := range evs {
		out[i] = e
	}
	return out
}

func anySlice(v any) []any {
	s, _ := v.([]any)
	return s
}

func withoutHeartbeats(evs []obj) []any {
	var out []any
	for _, e := range evs {
		if e["type"] != "HEARTBEAT" {
			out = append(out, e)
		}
	}
	return out
}

func sortUpdates(evs []obj) {
	sort.SliceStable(evs, func(i, j int) bool {
		return str(evs[i], "update", "status", "task_id", "value") < str(evs[j], "update", "status", "task_id", "value")
	})
}

// tasksOf lists the probe's tasks in GET_TASKS by list name, sorted by
// task id.
func (p *prober) tasksOf(gt obj) []any {
	mine := map[string]bool{}
	for _, id := range p.frameworks {
		mine[id] = true
	}
	var out []any
	lists, _ := get(gt, "get_tasks").(obj)
	names := make([]string, 0, len(lists))
	for k := range lists {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		ts := anySlice(lists[k])
		sort.SliceStable(ts, func(i, j int) bool { return str(ts[i], "task_id", "value") < str(ts[j], "task_id", "value") })
		for _, t := range ts {
			if mine[str(t, "framework_id", "value")] {
				out = append(out, obj{"list": k, "task": t})
			}
		}
	}
	return out
}

// Marshal renders the record as indented JSON (placeholders such as
// <agent:rm-a1> left readable).
func (r *Record) Marshal() ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", " ")
	if err := enc.Encode(r); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Load reads a record written by Marshal.
func Load(path string) (*Record, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r Record
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &r, nil
}
