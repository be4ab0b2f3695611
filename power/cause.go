package power

import (
	"context"

	"github.com/sparkpack/sparkpack/scheduler"
)

// to moves r to state s (persisted first); why is logged and recorded.
func (m *Manager) to(ctx context.Context, r *Record, s State, why string) error {
	return m.toFor(ctx, r, s, why, "")
}

// causeOf is why PowerOn's caller asks for the agent, and the job whose
// plan needs it ("" for none): the scheduler core and the warm pool say
// it in the context (scheduler.PowerOnCause), so that the "agent power:
// booting" line answers "why did this agent power on?".
func causeOf(ctx context.Context) (why, job string) {
	if c, ok := scheduler.PowerOnCauseOf(ctx); ok && c.Reason != "" {
		return c.Reason, c.Job
	}
	return "a plan needs it", ""
}
