package main

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/encoding/codecs"
	"github.com/mesos/mesos-go/api/v1/lib/httpcli"
	"github.com/mesos/mesos-go/api/v1/lib/httpcli/httpsched"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"
)

// maxAgentFailures is Spark's MAX_AGENT_FAILURES: an agent where this
// many executors failed or were lost gets no more executors.
const maxAgentFailures = 2

// backend plays Spark 3.5's MesosCoarseGrainedSchedulerBackend over the v1
// scheduler API (Spark itself uses the v0 driver library; what the master
// sees is the same: a framework in one legacy role, no capabilities).
type backend struct {
	st      *Settings
	appName string
	user    string
	log     func(format string, args ...any)
	caller  calls.Caller
	fwID    string

	stopCalled  bool
	acquired    int
	coresByTask map[string]int
	agents      map[string]*agentState
	nextTaskID  int
	launched    int // executors launched in total
}

type agentState struct {
	hostname string
	tasks    map[string]bool
	failures int
}

func newBackend(master string, st *Settings, appName, user string, log func(string, ...any)) *backend {
	opts := []httpcli.ConfigOpt{httpcli.Timeout(10 * time.Second)}
	if st.Principal != "" {
		opts = append(opts, httpcli.BasicAuth(st.Principal, st.Secret))
	}
	cli := httpcli.New(
		httpcli.Endpoint("http://"+master+"/api/v1/scheduler"),
		httpcli.Codec(codecs.ByMediaType[codecs.MediaTypeProtobuf]),
		httpcli.Do(httpcli.With(opts...)),
	)
	return &backend{st: st, appName: appName, user: user, log: log, caller: httpsched.NewCaller(cli),
		coresByTask: map[string]int{}, agents: map[string]*agentState{}}
}

// frameworkInfo is what Spark's createSchedulerDriver registers: user,
// name, the role (legacy field), failover timeout, no capabilities.
func (b *backend) frameworkInfo() *mesos.FrameworkInfo {
	fo := b.st.FailoverTimeout
	fi := &mesos.FrameworkInfo{User: b.user, Name: b.appName, FailoverTimeout: &fo}
	if b.st.Role != "" {
		r := b.st.Role
		fi.Role = &r
	}
	if b.st.Principal != "" {
		p := b.st.Principal
		fi.Principal = &p
	}
	return fi
}

// subscription is an open event stream.
type subscription struct {
	events <-chan *scheduler.Event
	errc   <-chan error
	close  func()
}

// subscribe registers the framework, retrying for up to wait while the
// master cannot be reached.
func (b *backend) subscribe(ctx context.Context, wait time.Duration) (*subscription, error) {
	deadline := time.Now().Add(wait)
	for {
		resp, err := b.caller.Call(ctx, calls.Subscribe(b.frameworkInfo()))
		if err == nil {
			events := make(chan *scheduler.Event, 256)
			errc := make(chan error, 1)
			sctx, cancel := context.WithCancel(ctx)
			go func() {
				defer resp.Close()
				for {
					var ev scheduler.Event
					if err := resp.Decode(&ev); err != nil {
						errc <- err
						return
					}
					select {
					case events <- &ev:
					case <-sctx.Done():
						return
					}
				}
			}()
			return &subscription{events: events, errc: errc, close: func() { cancel(); resp.Close() }}, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("could not subscribe to the Mesos master %s within %s: %w", b.caller, wait, err)
		}
		b.log("WARN could not reach the Mesos master (%v); retrying", err)
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

func (b *backend) call(ctx context.Context, c *scheduler.Call) error {
	c = c.With(calls.Framework(b.fwID))
	if err := calls.CallNoData(ctx, b.caller, c); err != nil {
		return fmt.Errorf("%s: %w", c.GetType(), err)
	}
	return nil
}

func (b *backend) numExecutors() int {
	n := 0
	for _, a := range b.agents {
		n += len(a.tasks)
	}
	return n
}

// handle processes one event; it returns an error when the application
// must abort (Mesos sent ERROR).
func (b *backend) handle(ctx context.Context, ev *scheduler.Event) error {
	switch ev.GetType() {
	case scheduler.Event_SUBSCRIBED:
		b.fwID = ev.Subscribed.FrameworkID.Value
		b.log("INFO Registered as framework ID %s (role %q)", b.fwID, b.st.Role)
	case scheduler.Event_OFFERS:
		b.resourceOffers(ctx, ev.Offers.Offers)
	case scheduler.Event_UPDATE:
		b.statusUpdate(ctx, ev.Update.Status)
	case scheduler.Event_ERROR:
		return fmt.Errorf("Mesos error: %s", ev.Error.Message)
	case scheduler.Event_FAILURE:
		if f := ev.Failure; f != nil && f.AgentID != nil && f.ExecutorID == nil {
			b.log("INFO Mesos agent lost: %s", f.AgentID.Value)
		}
	}
	return nil
}

// resourceOffers follows Spark's resourceOffers: decline everything while
// stopping, decline offers that miss the constraints, build executors
// round-robin over the rest, launch them, decline the offers left unused.
func (b *backend) resourceOffers(ctx context.Context, offers []mesos.Offer) {
	if b.stopCalled {
		for _, o := range offers {
			b.decline(ctx, o, "during shutdown", nil)
		}
		return
	}
	var matched []mesos.Offer
	for _, o := range offers {
		if matchesConstraints(b.st.Constraints, o.Attributes) {
			matched = append(matched, o)
		} else {
			d := b.st.RejectUnmetConstr
			b.decline(ctx, o, "unmet constraints", &d)
		}
	}
	tasks := b.buildTasks(matched)
	for _, o := range matched {
		if ts := tasks[o.ID.Value]; len(ts) > 0 {
			acc := calls.Accept(calls.OfferOperations{calls.OpLaunch(ts...)}.WithOffers(o.ID))
			if err := b.call(ctx, acc); err != nil {
				b.log("WARN launching %d executors on %s failed: %v", len(ts), o.Hostname, err)
				continue
			}
			for _, t := range ts {
				b.log("INFO Launching Mesos task %s on agent %s (%s): %s", t.TaskID.Value, o.AgentID.Value, o.Hostname, describe(t.Resources))
			}
			b.launched += len(ts)
			continue
		}
		if b.acquired >= b.st.MaxCores {
			d := b.st.RejectReachedMax
			b.decline(ctx, o, "reached spark.cores.max", &d)
			continue
		}
		b.decline(ctx, o, "unmet task launch constraints", nil)
	}
}

// decline declines an offer, with a refuse filter when refuse is set (no
// filters otherwise: the master's default of 5 s applies).
func (b *backend) decline(ctx context.Context, o mesos.Offer, why string, refuse *time.Duration) {
	c := calls.Decline(o.ID)
	if refuse != nil {
		c = c.With(calls.RefuseSeconds(*refuse))
	}
	if err := b.call(ctx, c); err != nil {
		b.log("WARN decline of offer %s failed: %v", o.ID.Value, err)
		return
	}
	b.log("DEBUG Declining offer %s from %s (%s)", o.ID.Value, o.Hostname, why)
}

// buildTasks creates executors round-robin over the offers until none
// can take one more (Spark's buildMesosTasks).
func (b *backend) buildTasks(offers []mesos.Offer) map[string][]mesos.TaskInfo {
	out := map[string][]mesos.TaskInfo{}
	remaining := map[string][]mesos.Resource{}
	for _, o := range offers {
		remaining[o.ID.Value] = append([]mesos.Resource(nil), o.Resources...)
	}
	for launch := true; launch; {
		launch = false
		for _, o := range offers {
			res := remaining[o.ID.Value]
			if !b.canLaunch(o.AgentID.Value, res) {
				continue
			}
			launch = true
			id := strconv.Itoa(b.nextTaskID)
			b.nextTaskID++
			cores := b.executorCores(int(scalar(res, "cpus")))
			a := b.agents[o.AgentID.Value]
			if a == nil {
				a = &agentState{hostname: o.Hostname, tasks: map[string]bool{}}
				b.agents[o.AgentID.Value] = a
			}
			a.tasks[id] = true
			left, cpus := partition(res, "cpus", float64(cores))
			left, mem := partition(left, "mem", float64(b.st.ExecutorMemMB))
			remaining[o.ID.Value] = left
			out[o.ID.Value] = append(out[o.ID.Value], b.taskInfo(o, id, cores, append(cpus, mem...)))
			b.acquired += cores
			b.coresByTask[id] = cores
		}
	}
	return out
}

// canLaunch is Spark's canLaunchTask (no ports, gpus, locality or
// dynamic allocation).
func (b *backend) canLaunch(agentID string, res []mesos.Resource) bool {
	offerCPUs := int(scalar(res, "cpus"))
	cpus := b.executorCores(offerCPUs)
	failures := 0
	if a := b.agents[agentID]; a != nil {
		failures = a.failures
	}
	return cpus > 0 && cpus <= offerCPUs && cpus+b.acquired <= b.st.MaxCores &&
		float64(b.st.ExecutorMemMB) <= scalar(res, "mem") && failures < maxAgentFailures
}

func (b *backend) executorCores(offerCPUs int) int {
	if b.st.ExecutorCores > 0 {
		return b.st.ExecutorCores
	}
	return min(offerCPUs, b.st.MaxCores-b.acquired)
}

// taskInfo is an executor task as Spark builds it: name "<app> <id>",
// Spark's task labels, a MESOS container and a shell command. The command
// only sleeps (there is no Spark here) until the driver stops it; it
// names what it stands in for.
func (b *backend) taskInfo(o mesos.Offer, id string, cores int, res []mesos.Resource) mesos.TaskInfo {
	shell := true
	cmd := fmt.Sprintf("exec sleep 86400 # stand-in for org.apache.spark.executor.CoarseGrainedExecutorBackend --executor-id %s --cores %d --app-id %s --hostname %s",
		id, cores+b.st.ExtraCores, b.fwID, o.Hostname)
	opts := ""
	labels := &mesos.Labels{}
	keys := make([]string, 0, len(b.st.TaskLabels))
	for k := range b.st.TaskLabels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := b.st.TaskLabels[k]
		labels.Labels = append(labels.Labels, mesos.Label{Key: k, Value: &v})
	}
	return mesos.TaskInfo{
		Name:      b.appName + " " + id,
		TaskID:    mesos.TaskID{Value: id},
		AgentID:   o.AgentID,
		Resources: res,
		Command: &mesos.CommandInfo{Shell: &shell, Value: &cmd,
			Environment: &mesos.Environment{Variables: []mesos.Environment_Variable{{Name: "SPARK_EXECUTOR_OPTS", Value: &opts}}}},
		Labels:    labels,
		Container: &mesos.ContainerInfo{Type: mesos.ContainerInfo_MESOS.Enum()},
	}
}

// statusUpdate follows Spark's statusUpdate: a terminal executor gives
// its cores back, a failed or lost one counts against its agent, and
// offers are revived. Updates carrying a uuid are acknowledged (the v0
// driver Spark uses does that by itself).
func (b *backend) statusUpdate(ctx context.Context, st mesos.TaskStatus) {
	id := st.TaskID.Value
	agentID := st.GetAgentID().GetValue()
	b.log("INFO Mesos task %s is now %s%s", id, st.GetState(), msgSuffix(st))
	if terminal(st.GetState()) {
		if c, ok := b.coresByTask[id]; ok {
			b.acquired -= c
			delete(b.coresByTask, id)
		}
		if a := b.agents[agentID]; a != nil {
			if failed(st.GetState()) {
				a.failures++
				if a.failures >= maxAgentFailures {
					b.log("INFO Excluding Mesos agent %s due to too many failures; is Spark installed on it?", agentID)
				}
			}
			delete(a.tasks, id)
		}
		if err := b.call(ctx, calls.Revive()); err != nil {
			b.log("WARN revive failed: %v", err)
		}
	}
	if len(st.UUID) > 0 && st.AgentID != nil {
		if err := b.call(ctx, calls.Acknowledge(st.AgentID.Value, id, st.UUID)); err != nil {
			b.log("WARN acknowledge of %s failed: %v", id, err)
		}
	}
}

func msgSuffix(st mesos.TaskStatus) string {
	if m := st.GetMessage(); m != "" {
		return " (" + m + ")"
	}
	return ""
}

// Spark maps Mesos' terminal states to FINISHED, FAILED, KILLED or LOST
// (every other terminal state); FAILED and LOST count as failures.
func terminal(s mesos.TaskState) bool {
	switch s {
	case mesos.TASK_FINISHED, mesos.TASK_FAILED, mesos.TASK_KILLED, mesos.TASK_LOST, mesos.TASK_ERROR,
		mesos.TASK_DROPPED, mesos.TASK_GONE, mesos.TASK_GONE_BY_OPERATOR, mesos.TASK_UNREACHABLE, mesos.TASK_UNKNOWN:
		return true
	}
	return false
}

func failed(s mesos.TaskState) bool {
	return terminal(s) && s != mesos.TASK_FINISHED && s != mesos.TASK_KILLED
}

// stopExecutors ends every executor: Spark asks its executors to exit;
// these are sleeps, so they are killed.
func (b *backend) stopExecutors(ctx context.Context) {
	b.stopCalled = true
	for agentID, a := range b.agents {
		for id := range a.tasks {
			k := calls.Kill(id, agentID)
			if err := b.call(ctx, k); err != nil {
				b.log("WARN kill of executor %s failed: %v", id, err)
			}
		}
	}
}

// teardown unregisters the framework (the v0 driver's stop()), which
// kills whatever executor is left.
func (b *backend) teardown(ctx context.Context) error {
	if b.fwID == "" {
		return nil
	}
	return b.call(ctx, &scheduler.Call{Type: scheduler.Call_TEARDOWN})
}

// ---- resources ----

func scalar(res []mesos.Resource, name string) float64 {
	v := 0.0
	for _, r := range res {
		if r.Name == name && r.Scalar != nil {
			v += r.Scalar.Value
		}
	}
	return v
}

// partition takes amount of a scalar from the resources in their order
// (Spark's partitionResources): each piece keeps its role and
// reservation.
func partition(res []mesos.Resource, name string, amount float64) (left, used []mesos.Resource) {
	remain := amount
	for _, r := range res {
		if remain > 0 && r.Name == name && r.Scalar != nil && r.Scalar.Value > 0 {
			take := math.Min(remain, r.Scalar.Value)
			u := piece(r, take)
			used = append(used, u)
			remain -= take
			if rest := r.Scalar.Value - take; rest > 0 {
				left = append(left, piece(r, rest))
			}
			continue
		}
		left = append(left, r)
	}
	return left, used
}

// piece is Spark's createResource: name, scalar, role and reservation.
func piece(r mesos.Resource, v float64) mesos.Resource {
	out := mesos.Resource{Name: r.Name, Type: mesos.SCALAR.Enum(), Scalar: &mesos.Value_Scalar{Value: v}}
	if r.Role != nil {
		role := *r.Role
		out.Role = &role
	}
	if r.Reservation != nil {
		ri := *r.Reservation
		out.Reservation = &ri
	}
	if len(r.Reservations) > 0 {
		out.Reservations = append([]mesos.Resource_ReservationInfo(nil), r.Reservations...)
	}
	return out
}

func describe(res []mesos.Resource) string {
	var parts []string
	for _, r := range res {
		s := fmt.Sprintf("%s:%g", r.Name, r.GetScalar().GetValue())
		if r.Role != nil && *r.Role != "*" {
			s += "(" + *r.Role + ")"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, " ")
}

// matchesConstraints is Spark's matchesAttributeRequirements: every
// constrained attribute must be present; text attributes must equal one
// of the values, scalar ones be at least one of them; no values means
// presence is enough.
func matchesConstraints(cons map[string][]string, attrs []mesos.Attribute) bool {
	for name, want := range cons {
		var found *mesos.Attribute
		for i := range attrs {
			if attrs[i].Name == name {
				found = &attrs[i]
				break
			}
		}
		if found == nil {
			return false
		}
		if len(want) == 0 {
			continue
		}
		ok := false
		switch found.Type {
		case mesos.SCALAR:
			for _, w := range want {
				if f, err := strconv.ParseFloat(w, 64); err == nil && f <= found.GetScalar().GetValue() {
					ok = true
				}
			}
		case mesos.TEXT:
			for _, w := range want {
				if w == found.GetText().GetValue() {
					ok = true
				}
			}
		case mesos.SET:
			have := map[string]bool{}
			for _, x := range found.GetSet().GetItem() {
				have[x] = true
			}
			ok = true
			for _, w := range want {
				ok = ok && have[w]
			}
		case mesos.RANGES:
			for _, w := range want {
				f, err := strconv.ParseUint(w, 10, 64)
				if err != nil {
					continue
				}
				for _, r := range found.GetRanges().GetRange() {
					if f >= r.Begin && f <= r.End {
						ok = true
					}
				}
			}
		}
		if !ok {
			return false
		}
	}
	return true
}
