package offers

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/master"
	"github.com/mesos/mesos-go/api/v1/lib/quota"
)

// Operator is a client of the Mesos operator API (POST /api/v1).
type Operator struct {
	ep *Endpoint
	// GET_AGENTS calls are shared (agentsfetch.go).
	agentsMu       sync.Mutex
	agentsInFlight *agentsFetch
	lastAgents     *agentsFetch
	lastSeq        uint64
	// decoded: the agents of the last GET_AGENTS by sum, reused by the
	// next (decodeAgentsReusing).
	decodeMu sync.Mutex
	decoded  map[uint64]master.Response_GetAgents_Agent
	// agentsSize is the size of the last GET_AGENTS answer: the next is
	// read into a buffer of about that size (readAnswer).
	agentsSize atomic.Int64
}

// NewOperator returns an operator API client on the endpoint.
func NewOperator(ep *Endpoint) *Operator { return &Operator{ep: ep} }

// Call sends one operator call. Calls that answer with a body are decoded
// into a master.Response; 200/202 with an empty body give a nil response.
func (o *Operator) Call(ctx context.Context, call *master.Call) (*master.Response, error) {
	name := call.GetType().String()
	b, err := o.callRaw(ctx, call, 0)
	if err != nil || len(b) == 0 {
		return nil, err
	}
	var out master.Response
	if err := out.Unmarshal(b); err != nil {
		return nil, fmt.Errorf("Mesos %s: decode answer: %w", name, err)
	}
	return &out, nil
}

// callRaw sends one operator call and returns its protobuf answer (empty
// for 200/202 without a body).
func (o *Operator) callRaw(ctx context.Context, call *master.Call, sizeHint int64) ([]byte, error) {
	name := call.GetType().String()
	resp, err := o.ep.post(ctx, "/api/v1", name, call, protobufType, nil)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusAccepted {
		return nil, readError(resp, name)
	}
	b, err := readAnswer(resp.Body, resp.ContentLength, sizeHint)
	if err != nil {
		return nil, fmt.Errorf("Mesos %s: read answer: %w", name, err)
	}
	return b, nil
}

// maxAnswer bounds an operator API answer.
const maxAnswer = 64 << 20

// readAnswer reads an answer of at most maxAnswer bytes into one buffer
// sized by its Content-Length, or else by sizeHint (the size of a like
// answer before): io.ReadAll would grow it by copies, about twice its
// size in garbage, and a GET_AGENTS answer of 30,000 agents is megabytes.
func readAnswer(r io.Reader, contentLength, sizeHint int64) ([]byte, error) {
	size := sizeHint + sizeHint/16
	if contentLength >= 0 {
		size = contentLength
	}
	size = min(size, maxAnswer)
	var buf bytes.Buffer
	// ReadFrom wants bytes.MinRead free to read on (and to see the end).
	buf.Grow(int(size) + bytes.MinRead)
	if _, err := buf.ReadFrom(io.LimitReader(r, maxAnswer)); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Reserve asks the master to reserve resources on an agent. 202 only means
// the request was valid: confirm with GetAgents. A 409 (not enough
// unallocated resources) is reported as a *StatusError; see IsConflict.
func (o *Operator) Reserve(ctx context.Context, agentID string, res []mesos.Resource) error {
	_, err := o.Call(ctx, &master.Call{
		Type:             master.Call_RESERVE_RESOURCES,
		ReserveResources: &master.Call_ReserveResources{AgentID: mesos.AgentID{Value: agentID}, Resources: res},
	})
	if err != nil {
		return fmt.Errorf("reserve on agent %s: %w", agentID, err)
	}
	return nil
}

// Unreserve releases reserved resources on an agent (409 while tasks use them).
func (o *Operator) Unreserve(ctx context.Context, agentID string, res []mesos.Resource) error {
	_, err := o.Call(ctx, &master.Call{
		Type:               master.Call_UNRESERVE_RESOURCES,
		UnreserveResources: &master.Call_UnreserveResources{AgentID: mesos.AgentID{Value: agentID}, Resources: res},
	})
	if err != nil {
		return fmt.Errorf("unreserve on agent %s: %w", agentID, err)
	}
	return nil
}

// IsAgentUnknown reports the master's refusal of a call naming an agent it
// no longer knows (400 "No agent found with specified ID" to an
// (UN)RESERVE_RESOURCES, "Unknown agent" to DEACTIVATE_AGENT): the agent
// was removed, for example because its machine came back as a new agent
// after its work dir was wiped, and its reservations went with it.
func IsAgentUnknown(err error) bool {
	var se *StatusError
	return errors.As(err, &se) && se.Code == http.StatusBadRequest &&
		(strings.Contains(se.Body, "No agent found with specified ID") || strings.Contains(se.Body, "Unknown agent"))
}

// SetQuotaLimit caps a top-level role's cpus and memory. force lets the
// limit go below what the role already consumes.
func (o *Operator) SetQuotaLimit(ctx context.Context, role string, cpus, memMB float64, force bool) error {
	cfg := quota.QuotaConfig{
		Role: role,
		Limits: map[string]mesos.Value_Scalar{
			"cpus": {Value: cpus},
			"mem":  {Value: memMB},
		},
	}
	_, err := o.Call(ctx, &master.Call{
		Type:        master.Call_UPDATE_QUOTA,
		UpdateQuota: &master.Call_UpdateQuota{Force: &force, QuotaConfigs: []quota.QuotaConfig{cfg}},
	})
	if err != nil {
		return fmt.Errorf("set quota limit of role %s to %s cpus, %s MiB: %w", role, fmtF(cpus), fmtF(memMB), err)
	}
	return nil
}

// ClearQuota removes a role's quota (no limits, no guarantees).
func (o *Operator) ClearQuota(ctx context.Context, role string) error {
	force := true
	_, err := o.Call(ctx, &master.Call{
		Type:        master.Call_UPDATE_QUOTA,
		UpdateQuota: &master.Call_UpdateQuota{Force: &force, QuotaConfigs: []quota.QuotaConfig{{Role: role}}},
	})
	if err != nil {
		return fmt.Errorf("clear quota of role %s: %w", role, err)
	}
	return nil
}

// QuotaConfigs returns every role's configured quota.
func (o *Operator) QuotaConfigs(ctx context.Context) ([]quota.QuotaConfig, error) {
	r, err := o.Call(ctx, &master.Call{Type: master.Call_GET_QUOTA})
	if err != nil {
		return nil, err
	}
	if r == nil || r.GetQuota == nil {
		return nil, fmt.Errorf("Mesos GET_QUOTA: empty answer")
	}
	return r.GetQuota.Status.Configs, nil
}

// GetTasks lists the tasks the master knows.
func (o *Operator) GetTasks(ctx context.Context) (*master.Response_GetTasks, error) {
	r, err := o.Call(ctx, &master.Call{Type: master.Call_GET_TASKS})
	if err != nil {
		return nil, err
	}
	if r == nil || r.GetTasks == nil {
		return nil, fmt.Errorf("Mesos GET_TASKS: empty answer")
	}
	return r.GetTasks, nil
}

func fmtF(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// DeactivateAgent sends DEACTIVATE_AGENT: the master offers the agent's
// resources to no one (its outstanding offers are rescinded) and kills
// nothing. Power management uses it rather than DRAIN_AGENT: on an idle
// agent both stop new work, but DRAIN_AGENT would also kill a task that
// landed between the idle check and the call. Sending it again is
// harmless (200).
func (o *Operator) DeactivateAgent(ctx context.Context, agentID string) error {
	_, err := o.Call(ctx, &master.Call{
		Type:            master.Call_DEACTIVATE_AGENT,
		DeactivateAgent: &master.Call_DeactivateAgent{AgentID: mesos.AgentID{Value: agentID}},
	})
	if err != nil {
		return fmt.Errorf("deactivate agent %s: %w", agentID, err)
	}
	return nil
}

// ReactivateAgent sends REACTIVATE_AGENT. An agent that is not deactivated
// (Mesos answers 400 "Agent is not deactivated") counts as done.
func (o *Operator) ReactivateAgent(ctx context.Context, agentID string) error {
	_, err := o.Call(ctx, &master.Call{
		Type:            master.Call_REACTIVATE_AGENT,
		ReactivateAgent: &master.Call_ReactivateAgent{AgentID: mesos.AgentID{Value: agentID}},
	})
	var se *StatusError
	if errors.As(err, &se) && se.Code == http.StatusBadRequest && strings.Contains(se.Body, "not deactivated") {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reactivate agent %s: %w", agentID, err)
	}
	return nil
}
