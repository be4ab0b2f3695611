package scheduler

import "context"

// PowerOnCause says why an agent is powered on: the job whose plan needs
// it and the reason, for power management's log line and record ("why did
// agent-03 power on at 02:40?"). The core puts it in the context it hands
// Provisioner.PowerOn, which keeps its signature; a Provisioner that logs
// reads it with PowerOnCauseOf.
type PowerOnCause struct {
	Job    string // the job whose plan needs the agent; "" when no job asks (the warm pool)
	Reason string // "a plan needs it: job ... starts on it"
}

type powerOnCauseKey struct{}

// WithPowerOnCause returns ctx carrying c.
func WithPowerOnCause(ctx context.Context, c PowerOnCause) context.Context {
	return context.WithValue(ctx, powerOnCauseKey{}, c)
}

// PowerOnCauseOf returns the cause ctx carries, if any.
func PowerOnCauseOf(ctx context.Context) (PowerOnCause, bool) {
	c, ok := ctx.Value(powerOnCauseKey{}).(PowerOnCause)
	return c, ok
}

// powerOnFor hands the Provisioner an agent the plan of job needs, with
// the cause in the context.
func (c *Core) powerOnFor(ctx context.Context, agentID, job, why string) error {
	return c.cfg.Provisioner.PowerOn(WithPowerOnCause(ctx, PowerOnCause{Job: job, Reason: "a plan needs it: job " + job + " " + why}), agentID)
}
