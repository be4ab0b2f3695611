package offers

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mesos/mesos-go/api/v1/lib/master"
)

// keepAgents is how long the last GET_AGENTS answer is kept for callers
// that accept a view that old (AgentsSince with t in the past).
const keepAgents = 2 * time.Second

// agentsFetch is one GET_AGENTS call, shared by every caller that can use
// its answer.
type agentsFetch struct {
	start  time.Time // when the call was sent
	done   chan struct{}
	agents []master.Response_GetAgents_Agent
	sums   []uint64 // per agent: the same sum, the same agent (decodeAgentsReusing)
	// recovered: the ids in recovered_agents (a master that failed over,
	// before they re-register; decodeRecovered).
	recovered []string
	err       error
}

// GetAgents lists the agents with their total, allocated and offered
// resources (reservations are visible in each resource's reservations), as
// a GET_AGENTS call sent after this one began shows them. The answer is
// shared with concurrent callers and must not be modified.
func (o *Operator) GetAgents(ctx context.Context) ([]master.Response_GetAgents_Agent, error) {
	agents, _, err := o.AgentsSince(ctx, time.Now())
	return agents, err
}

// AgentsSince returns the agents as listed by a GET_AGENTS call sent at or
// after t, and when that call was sent. Concurrent callers share calls: at
// most one GET_AGENTS is in flight, and its answer serves every caller
// that asked for a view no older than it. On a large cluster GET_AGENTS is
// megabytes, costly for the master to build and for sparkpack to decode;
// without sharing, every job confirming its reservations would poll it on
// its own. A poller asks for a newer view than the one it saw with
// AgentsSince(ctx, seen.Add(time.Nanosecond)). The answer must not be
// modified.
func (o *Operator) AgentsSince(ctx context.Context, t time.Time) ([]master.Response_GetAgents_Agent, time.Time, error) {
	f, err := o.agentsSince(ctx, t)
	if f == nil {
		return nil, time.Time{}, err
	}
	if err != nil {
		return nil, f.start, err
	}
	return f.agents, f.start, nil
}

// agentsSince is AgentsSince's answer as it was fetched.
func (o *Operator) agentsSince(ctx context.Context, t time.Time) (*agentsFetch, error) {
	for {
		o.agentsMu.Lock()
		if l := o.lastAgents; l != nil && !l.start.Before(t) {
			o.agentsMu.Unlock()
			return l, nil
		}
		if f := o.agentsInFlight; f != nil {
			o.agentsMu.Unlock()
			select {
			case <-f.done:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			if !f.start.Before(t) {
				if f.err == nil {
					return f, nil
				}
				if !errors.Is(f.err, context.Canceled) && !errors.Is(f.err, context.DeadlineExceeded) {
					return f, f.err
				}
			}
			continue // its answer is too old for us, or its caller gave up: go again
		}
		f := &agentsFetch{start: time.Now(), done: make(chan struct{})}
		o.agentsInFlight = f
		o.agentsMu.Unlock()
		f.agents, f.sums, f.recovered, f.err = o.getAgents(ctx)
		o.agentsMu.Lock()
		o.agentsInFlight = nil
		if f.err == nil {
			// Kept briefly for callers that accept a slightly older view
			// (a view is megabytes on a large cluster).
			o.lastAgents = f
			o.lastSeq++
			seq := o.lastSeq // not f: the timer must not keep the answer alive
			time.AfterFunc(keepAgents, func() {
				o.agentsMu.Lock()
				if o.lastSeq == seq {
					o.lastAgents = nil
				}
				o.agentsMu.Unlock()
			})
		}
		o.agentsMu.Unlock()
		close(f.done)
		return f, f.err
	}
}

// getAgents sends one GET_AGENTS and decodes the fields sparkpack reads
// (agentsdecode.go), and the ids of the recovered agents.
// Only the agents that changed since the last answer are decoded again.
func (o *Operator) getAgents(ctx context.Context) ([]master.Response_GetAgents_Agent, []uint64, []string, error) {
	b, err := o.callRaw(ctx, &master.Call{Type: master.Call_GET_AGENTS}, o.agentsSize.Load())
	if err != nil {
		return nil, nil, nil, err
	}
	o.agentsSize.Store(int64(len(b)))
	if len(b) == 0 {
		return nil, nil, nil, fmt.Errorf("Mesos GET_AGENTS: empty answer")
	}
	recovered, err := decodeRecovered(b)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("Mesos GET_AGENTS: decode answer's recovered_agents: %w", err)
	}
	o.decodeMu.Lock()
	defer o.decodeMu.Unlock()
	agents, sums, next, err := decodeAgentsReusing(b, o.decoded)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("Mesos GET_AGENTS: decode answer: %w", err)
	}
	o.decoded = next
	return agents, sums, recovered, nil
}
