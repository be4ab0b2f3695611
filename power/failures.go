package power

import (
	"context"
	"errors"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/sparkpack/sparkpack/internal/failurelog"
)

// Failed steps: counting them, giving up, and the one warning each.

// fail counts a failed call in the current state; after MaxFailures the
// agent goes back on.
func (m *Manager) fail(ctx context.Context, r *Record, err error) error {
	old := *r
	r.Failures++
	r.LastError = err.Error()
	var warned error
	if r.Failures >= m.cfg.MaxFailures && (r.State == StateDraining || r.State == StatePoweringOff) {
		step, msg := giveUpOff(r.State)
		fields := failFields(err, logrus.Fields{"agent": r.AgentID, "hostname": r.Hostname, "failures": r.Failures, "step": step})
		// The agent is reactivated first, so that one warning says all
		// (a failed reactivation was a second warning, which blamed the
		// power program for what Mesos refused).
		rerr := m.mesos.ReactivateAgent(ctx, r.AgentID)
		if rerr != nil {
			fields["reactivate_error"] = rerr.Error()
			msg += "; reactivating the agent in Mesos failed too, so it gets no offers until Mesos answers again: check the Mesos master (reactivate_error says why)"
			// Retried at every tick while Mesos is down: warned about the
			// first time, then once a period (every tick, it was one
			// warning per idle agent every 2 s for the whole outage).
			if v := m.stepUnreactivated(r.AgentID, true); v.Kind != failurelog.Silent {
				if v.Kind == failurelog.Still {
					fields["reactivate_failures"] = v.Failures
					fields["failing_for"] = m.cfg.Now().Sub(v.Since).Round(time.Second).String()
				}
				m.log.WithError(err).WithFields(fields).Warn(msg)
			}
			return warnedError{errors.Join(err, rerr)}
		}
		if v := m.stepUnreactivated(r.AgentID, false); v.Kind == failurelog.Recovered {
			fields["reactivate_failures"] = v.Failures
		}
		m.log.WithError(err).WithFields(fields).Warn(msg)
		warned = warnedError{err}
		r.State, r.Since, r.Failures = StateOn, m.cfg.Now(), 0
	}
	if perr := m.put(ctx, r, old); perr != nil {
		return errors.Join(err, perr)
	}
	if warned != nil {
		return warned
	}
	return err
}

// stepUnreactivated records whether the reactivation of a given-up
// agent failed and says what to log.
func (m *Manager) stepUnreactivated(id string, failed bool) failurelog.Verdict {
	m.mu.Lock()
	defer m.mu.Unlock()
	st, v := m.unreactivated[id].Step(m.cfg.Now(), failed)
	if st.Failing() {
		m.unreactivated[id] = st
	} else {
		delete(m.unreactivated, id)
	}
	return v
}

// giveUpOff is the step of a power-off that failed in state (a draining
// agent's deactivation in Mesos, or the provider's power-off) and the
// give-up warning, which names it and what to do for it.
func giveUpOff(state State) (step, msg string) {
	if state == StateDraining {
		return "deactivate_agent", "agent power: giving up powering it off: deactivating the agent in Mesos (the operator API's DEACTIVATE_AGENT) kept failing, and the provider was not called; it stays on: check that the Mesos master is reachable and accepts sparkpack's operator calls (its address, credentials and ACLs; the error says why)"
	}
	return "power_off", "agent power: giving up powering it off; it stays on: fix the power provider (the error says why)"
}

// warnedError is a failed step whose warning was logged where it failed
// (a give-up, which says what happens instead of a retry): Tick does not
// warn again.
type warnedError struct{ error }

func (e warnedError) Unwrap() error { return e.error }

// warnStep logs a failed step of agent id once: with the power program's
// run (exit, output) when that is what failed. The step is retried at the
// next tick.
func (m *Manager) warnStep(err error, id string) {
	if _, ok := err.(warnedError); ok || err == nil {
		return
	}
	f := logrus.Fields{"agent": id}
	m.mu.Lock()
	if r := m.recs[id]; r != nil && r.Hostname != "" {
		f["hostname"] = r.Hostname
	}
	m.mu.Unlock()
	var pe *ProgramError
	if errors.As(err, &pe) {
		m.log.WithError(err).WithFields(failFields(err, f)).
			Warn("agent power: the power program failed; it is retried at the next tick: fix the power program (its exit status and output are in the fields)")
		return
	}
	m.log.WithError(err).WithFields(f).Warn("power management step failed; it is retried at the next tick: fix what the error names (the power provider, Mesos or the database)")
}

// failFields adds to f the power program's run when err is one.
func failFields(err error, f logrus.Fields) logrus.Fields {
	var pe *ProgramError
	if errors.As(err, &pe) {
		for k, v := range pe.Fields() {
			f[k] = v
		}
	}
	return f
}
