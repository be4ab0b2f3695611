package power

import (
	"context"
	"time"
)

// State is where power management is with one agent.
type State string

const (
	// StateOn: the agent runs and may be used (the default of every agent).
	StateOn State = "on"
	// StateDraining: DEACTIVATE_AGENT was (or is about to be) sent so that
	// nothing new lands there; the agent is powered off once Mesos shows
	// it deactivated and still idle.
	StateDraining State = "draining"
	// StatePoweringOff: drained and idle; the provider is (being) asked to
	// power it off.
	StatePoweringOff State = "powering-off"
	// StateOff: the provider powered it off.
	StateOff State = "off"
	// StateBooting: a plan needs it; the provider is (being) asked to power
	// it on, and sparkpack waits for it to register with Mesos again.
	StateBooting State = "booting"
)

// Record is what the store keeps of one agent.
type Record struct {
	AgentID      string
	Hostname     string
	Attributes   map[string]string
	CPUs, MemMB  float64
	PricePerHour float64
	State        State
	// Since is when the agent entered State.
	Since time.Time
	// Requested: in StateBooting, the provider accepted the power-on.
	Requested bool
	// Failures counts failed provider or Mesos calls in the current state.
	Failures  int
	LastError string
	// AvoidUntil: a power-on that did not bring the agent back makes plans
	// avoid it until then.
	AvoidUntil time.Time
	// RegisteredAt is the agent's last registration seen before it was
	// powered off: a later one means it is back.
	RegisteredAt time.Time
	// ReplacedBy, when set, is the new agent id the agent's machine came
	// back under (newid.go): the record is then no agent's any more, only
	// what a restarted (or newly leading) sparkpack needs to know of the
	// old id until nothing can refer to it (RegisteredAt is the old id's
	// last registration seen). Load keeps such records apart.
	ReplacedBy string
}

// Store keeps the records (package store implements it with PostgreSQL).
type Store interface {
	PowerRecords(ctx context.Context) ([]Record, error)
	PutPowerRecord(ctx context.Context, r Record) error
}

// RecordDeleter is what a Store may also do: forget the record of an agent
// id that Mesos will never show again (its machine came back as a new
// agent, see replacements) once nothing can refer to it (forgettable). A
// store without it keeps those records; each run drops them from memory
// in turn.
type RecordDeleter interface {
	DeletePowerRecord(ctx context.Context, agentID string) error
}

// Mesos is what power management asks of the Mesos master (package
// offers implements it with the operator API).
type Mesos interface {
	// DeactivateAgent sends DEACTIVATE_AGENT: the master offers the
	// agent's resources to no one (outstanding offers are rescinded) and
	// kills nothing. Sending it again is harmless.
	DeactivateAgent(ctx context.Context, agentID string) error
	// ReactivateAgent sends REACTIVATE_AGENT; an agent that is not
	// deactivated is not an error.
	ReactivateAgent(ctx context.Context, agentID string) error
	// Their errors name the call and the agent (offers.Operator's do):
	// the manager does not wrap them again.
}

// Agent is what Mesos (and sparkpack's own plans) show of one agent at a
// Tick.
type Agent struct {
	ID           string
	Hostname     string
	Attributes   map[string]string
	CPUs, MemMB  float64
	PricePerHour float64
	// Listed: GET_AGENTS lists it. A real master keeps listing an agent
	// that went away (as inactive) until it is marked unreachable
	// (75 s by default), so being listed does not mean it runs.
	Listed bool
	// Active: connected and not deactivated (GET_AGENTS' active).
	Active bool
	// Deactivated: GET_AGENTS' deactivated (by DEACTIVATE_AGENT or
	// DRAIN_AGENT).
	Deactivated bool
	// Busy: any task of any framework, any reservation of any role, or a
	// plan of sparkpack's not yet reserved: never power it off.
	Busy bool
	// RegisteredAt is the master's time of its last (re-)registration: an
	// agent powered on again registers anew.
	RegisteredAt time.Time
}
