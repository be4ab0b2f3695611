package realmesos

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/master"
	"github.com/mesos/mesos-go/api/v1/lib/quota"
)

// Observer reads (and, for cleaning up, changes) a Mesos master's state
// through the v1 operator API in protobuf (JSON if JSON is set: the two do
// not always show the same, see JSON). It works the same against the real
// master and the emulator.
type Observer struct {
	URL  string // http://host:port
	HTTP *http.Client
	// JSON sends calls and reads answers in JSON. A real 1.12 master's
	// protobuf GET_TASKS (and GET_STATE) leaves out the tasks of
	// completed frameworks (a framework torn down, as Spark's is when
	// its application ends), where its JSON answer lists them: its
	// serializeGetTasks keeps a completed framework only if the caller
	// may NOT view it (src/master/readonly_handler.cpp at c1b42f79d, the
	// build of ../shared/mesos), so without an authorizer never.
	JSON bool
}

// NewObserver returns an Observer for the master at url (http://host:port).
func NewObserver(url string) *Observer {
	return &Observer{URL: strings.TrimRight(url, "/"), HTTP: &http.Client{Timeout: 15 * time.Second}}
}

const (
	mediaProtobuf = "application/x-protobuf"
	mediaJSON     = "application/json"
)

// Call sends an operator call; calls without a response body return nil.
func (o *Observer) Call(ctx context.Context, c *master.Call) (*master.Response, error) {
	media, marshal := mediaProtobuf, c.Marshal
	if o.JSON {
		media, marshal = mediaJSON, func() ([]byte, error) { return json.Marshal(c) }
	}
	body, err := marshal()
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", c.Type, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, o.URL+"/api/v1", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", media)
	req.Header.Set("Accept", media)
	resp, err := o.HTTP.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", c.Type, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("%s: read the answer: %w", c.Type, err)
	}
	if resp.StatusCode/100 != 2 {
		return nil, &StatusError{Call: c.Type.String(), Code: resp.StatusCode, Body: strings.TrimSpace(string(raw))}
	}
	if len(raw) == 0 {
		return nil, nil
	}
	var r master.Response
	unmarshal := r.Unmarshal
	if o.JSON {
		unmarshal = func(b []byte) error { return json.Unmarshal(b, &r) }
	}
	if err := unmarshal(raw); err != nil {
		return nil, fmt.Errorf("%s: decode the answer: %w", c.Type, err)
	}
	return &r, nil
}

// StatusError is a non-2xx answer of the operator API.
type StatusError struct {
	Call string
	Code int
	Body string
}

func (e *StatusError) Error() string { return fmt.Sprintf("%s: HTTP %d %s", e.Call, e.Code, e.Body) }

// Healthy reports whether GET_HEALTH answers healthy.
func (o *Observer) Healthy(ctx context.Context) bool {
	r, err := o.Call(ctx, &master.Call{Type: master.Call_GET_HEALTH})
	return err == nil && r != nil && r.GetHealth != nil && r.GetHealth.Healthy
}

// Reservation is one dynamic reservation on an agent (cpus and mem summed).
type Reservation struct {
	AgentID   string
	Hostname  string
	Role      string
	Principal string
	Labels    map[string]string
	CPUs      float64
	MemMB     float64
}

// Agent is an agent as GET_AGENTS shows it.
type Agent struct {
	ID           string
	Hostname     string
	Active       bool
	CPUs, MemMB  float64 // total
	Reservations []Reservation
}

// reservationOf returns the (innermost) reservation of a resource, in
// either format.
func reservationOf(r mesos.Resource) (role, principal string, labels map[string]string, ok bool) {
	switch {
	case len(r.Reservations) > 0:
		ri := r.Reservations[len(r.Reservations)-1]
		return ri.GetRole(), ri.GetPrincipal(), labelMap(ri.Labels), true
	case r.Role != nil && *r.Role != "*" && *r.Role != "":
		if r.Reservation != nil {
			return *r.Role, r.Reservation.GetPrincipal(), labelMap(r.Reservation.Labels), true
		}
		return *r.Role, "", nil, true
	}
	return "", "", nil, false
}

func labelMap(l *mesos.Labels) map[string]string {
	if l == nil || len(l.Labels) == 0 {
		return nil
	}
	out := make(map[string]string, len(l.Labels))
	for _, x := range l.Labels {
		out[x.Key] = x.GetValue()
	}
	return out
}

func labelString(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, k+"="+m[k])
	}
	return strings.Join(parts, ",")
}

// Agents lists the agents GET_AGENTS shows, with their reservations.
func (o *Observer) Agents(ctx context.Context) ([]Agent, error) {
	r, err := o.Call(ctx, &master.Call{Type: master.Call_GET_AGENTS})
	if err != nil {
		return nil, err
	}
	if r == nil || r.GetAgents == nil {
		return nil, fmt.Errorf("GET_AGENTS: empty answer")
	}
	var out []Agent
	for _, a := range r.GetAgents.Agents {
		ag := Agent{ID: a.AgentInfo.ID.GetValue(), Hostname: a.AgentInfo.Hostname, Active: a.Active}
		byKey := map[string]*Reservation{}
		var keys []string
		for _, res := range a.TotalResources {
			if res.Scalar == nil {
				continue
			}
			switch res.Name {
			case "cpus":
				ag.CPUs += res.Scalar.Value
			case "mem":
				ag.MemMB += res.Scalar.Value
			}
			role, principal, labels, ok := reservationOf(res)
			if !ok {
				continue
			}
			k := role + "|" + principal + "|" + labelString(labels)
			rv := byKey[k]
			if rv == nil {
				rv = &Reservation{AgentID: ag.ID, Hostname: ag.Hostname, Role: role, Principal: principal, Labels: labels}
				byKey[k] = rv
				keys = append(keys, k)
			}
			switch res.Name {
			case "cpus":
				rv.CPUs += res.Scalar.Value
			case "mem":
				rv.MemMB += res.Scalar.Value
			}
		}
		sort.Strings(keys)
		for _, k := range keys {
			ag.Reservations = append(ag.Reservations, *byKey[k])
		}
		out = append(out, ag)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Hostname < out[j].Hostname })
	return out, nil
}

// Reservations lists every dynamic reservation of every agent.
func (o *Observer) Reservations(ctx context.Context) ([]Reservation, error) {
	agents, err := o.Agents(ctx)
	if err != nil {
		return nil, err
	}
	var out []Reservation
	for _, a := range agents {
		out = append(out, a.Reservations...)
	}
	return out, nil
}

// Task is a task as GET_TASKS shows it (live or completed).
type Task struct {
	ID          string
	Name        string
	FrameworkID string
	AgentID     string
	State       string
	Completed   bool // listed under completed_tasks
	// Role is the role the task's resources are allocated to.
	Role string
	// ReservedCPUs are the task's cpus from reservations, with the
	// reservations' roles and labels; UnreservedCPUs the rest.
	ReservedCPUs, UnreservedCPUs float64
	ReservedMemMB, UnreservedMem float64
	Reservations                 []Reservation
	Labels                       map[string]string
}

// Tasks lists the tasks of GET_TASKS: live, unreachable and completed.
func (o *Observer) Tasks(ctx context.Context) ([]Task, error) {
	r, err := o.Call(ctx, &master.Call{Type: master.Call_GET_TASKS})
	if err != nil {
		return nil, err
	}
	if r == nil || r.GetTasks == nil {
		return nil, fmt.Errorf("GET_TASKS: empty answer")
	}
	var out []Task
	add := func(ts []mesos.Task, completed bool) {
		for _, t := range ts {
			out = append(out, taskOf(t, completed))
		}
	}
	add(r.GetTasks.PendingTasks, false)
	add(r.GetTasks.Tasks, false)
	add(r.GetTasks.UnreachableTasks, false)
	add(r.GetTasks.CompletedTasks, true)
	return out, nil
}

func taskOf(t mesos.Task, completed bool) Task {
	out := Task{ID: t.TaskID.Value, Name: t.Name, FrameworkID: t.FrameworkID.Value, AgentID: t.AgentID.Value,
		State: t.GetState().String(), Completed: completed, Labels: labelMap(t.Labels)}
	byKey := map[string]*Reservation{}
	var keys []string
	for _, res := range t.Resources {
		if res.AllocationInfo != nil && out.Role == "" {
			out.Role = res.AllocationInfo.GetRole()
		}
		if res.Scalar == nil {
			continue
		}
		role, principal, labels, ok := reservationOf(res)
		switch {
		case !ok && res.Name == "cpus":
			out.UnreservedCPUs += res.Scalar.Value
		case !ok && res.Name == "mem":
			out.UnreservedMem += res.Scalar.Value
		case ok && (res.Name == "cpus" || res.Name == "mem"):
			k := role + "|" + principal + "|" + labelString(labels)
			rv := byKey[k]
			if rv == nil {
				rv = &Reservation{AgentID: out.AgentID, Role: role, Principal: principal, Labels: labels}
				byKey[k] = rv
				keys = append(keys, k)
			}
			if res.Name == "cpus" {
				rv.CPUs += res.Scalar.Value
				out.ReservedCPUs += res.Scalar.Value
			} else {
				rv.MemMB += res.Scalar.Value
				out.ReservedMemMB += res.Scalar.Value
			}
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		out.Reservations = append(out.Reservations, *byKey[k])
	}
	return out
}

// Framework is a framework as GET_FRAMEWORKS shows it.
type Framework struct {
	ID        string
	Name      string
	Roles     []string
	Active    bool
	Connected bool
	// Recovered: known from its agents after a master failover, not
	// subscribed again since.
	Recovered bool
	Completed bool
}

// Frameworks lists active and completed frameworks.
func (o *Observer) Frameworks(ctx context.Context) ([]Framework, error) {
	r, err := o.Call(ctx, &master.Call{Type: master.Call_GET_FRAMEWORKS})
	if err != nil {
		return nil, err
	}
	if r == nil || r.GetFrameworks == nil {
		return nil, fmt.Errorf("GET_FRAMEWORKS: empty answer")
	}
	var out []Framework
	add := func(fs []master.Response_GetFrameworks_Framework, completed bool) {
		for _, f := range fs {
			roles := append([]string(nil), f.FrameworkInfo.Roles...)
			if len(roles) == 0 && f.FrameworkInfo.Role != nil {
				roles = []string{*f.FrameworkInfo.Role}
			}
			out = append(out, Framework{ID: f.FrameworkInfo.ID.GetValue(), Name: f.FrameworkInfo.Name, Roles: roles,
				Active: f.Active, Connected: f.Connected, Recovered: f.Recovered, Completed: completed})
		}
	}
	add(r.GetFrameworks.Frameworks, false)
	add(r.GetFrameworks.CompletedFrameworks, true)
	return out, nil
}

// QuotaLimits returns each role's quota limits (cpus, mem, ...).
func (o *Observer) QuotaLimits(ctx context.Context) (map[string]map[string]float64, error) {
	r, err := o.Call(ctx, &master.Call{Type: master.Call_GET_QUOTA})
	if err != nil {
		return nil, err
	}
	out := map[string]map[string]float64{}
	if r == nil || r.GetQuota == nil {
		return out, nil
	}
	for _, c := range r.GetQuota.Status.Configs {
		if len(c.Limits) == 0 && len(c.Guarantees) == 0 {
			continue
		}
		m := map[string]float64{}
		for k, v := range c.Limits {
			m[k] = v.Value
		}
		out[c.Role] = m
	}
	return out, nil
}

// Teardown removes a framework (operator TEARDOWN).
func (o *Observer) Teardown(ctx context.Context, frameworkID string) error {
	_, err := o.Call(ctx, &master.Call{Type: master.Call_TEARDOWN, Teardown: &master.Call_Teardown{FrameworkID: mesos.FrameworkID{Value: frameworkID}}})
	return err
}

// ClearQuota removes a role's quota.
func (o *Observer) ClearQuota(ctx context.Context, role string) error {
	_, err := o.Call(ctx, &master.Call{Type: master.Call_UPDATE_QUOTA, UpdateQuota: &master.Call_UpdateQuota{
		Force: boolPtr(true), QuotaConfigs: []quota.QuotaConfig{{Role: role}}}})
	return err
}

// Unreserve gives a reservation (as Agents reported it) back.
func (o *Observer) Unreserve(ctx context.Context, r Reservation) error {
	var res []mesos.Resource
	for _, x := range []struct {
		name string
		v    float64
	}{{"cpus", r.CPUs}, {"mem", r.MemMB}} {
		if x.v <= 0 {
			continue
		}
		role := r.Role
		ri := mesos.Resource_ReservationInfo{Type: mesos.Resource_ReservationInfo_DYNAMIC.Enum(), Role: &role}
		if r.Principal != "" {
			p := r.Principal
			ri.Principal = &p
		}
		if len(r.Labels) > 0 {
			ls := &mesos.Labels{}
			keys := make([]string, 0, len(r.Labels))
			for k := range r.Labels {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				v := r.Labels[k]
				ls.Labels = append(ls.Labels, mesos.Label{Key: k, Value: &v})
			}
			ri.Labels = ls
		}
		res = append(res, mesos.Resource{Name: x.name, Type: mesos.SCALAR.Enum(), Scalar: &mesos.Value_Scalar{Value: x.v},
			Reservations: []mesos.Resource_ReservationInfo{ri}})
	}
	_, err := o.Call(ctx, &master.Call{Type: master.Call_UNRESERVE_RESOURCES, UnreserveResources: &master.Call_UnreserveResources{
		AgentID: mesos.AgentID{Value: r.AgentID}, Resources: res}})
	return err
}

func boolPtr(b bool) *bool { return &b }
