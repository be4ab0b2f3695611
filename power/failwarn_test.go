package power

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
)

// TestFailedPowerProgramWarnsOnce: a failed run of the power program is
// one warning, not one from the program's runner and another from the
// manager's step: the warning names the agent, the program, its exit
// status and output, and what happens next and what to do (it is retried
// at the next tick: fix the power program; or, at the last failure
// allowed, that power management gives up). Each failure of a run of
// them is one warning.
func TestFailedPowerProgramWarnsOnce(t *testing.T) {
	for _, c := range []struct {
		name     string
		action   string // the program fails for it
		failures int    // runs that fail (MaxFailures is 2)
		last     string // the last warning says
	}{
		{"power-off fails once", "off", 1, "agent power: the power program failed; it is retried at the next tick: fix the power program"},
		{"power-on fails once", "on", 1, "agent power: the power program failed; it is retried at the next tick: fix the power program"},
		{"power-off fails at every try", "off", 2, "agent power: giving up powering it off; it stays on: fix the power provider"},
		{"power-on fails at every try", "on", 2, "agent power: giving up powering it on; it stays off, avoided by plans until avoid_until: fix the power provider"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, hook := newLoggedRig(t, Config{MaxFailures: 2})
			prog := script(t, fmt.Sprintf("[ \"$1\" = %s ] || exit 0\necho 'cloud: no credentials for zone eu-1' >&2\nexit 3\n", c.action))
			p, err := NewExecProvider(prog, nil, time.Minute, r.cfg.Log)
			if err != nil {
				t.Fatal(err)
			}
			r.cfg.Provider = p
			r.restart()
			a := idle("a1", 4)
			if c.action == "off" {
				r.tick(nil, a)
				r.now = r.now.Add(2 * time.Minute)
				r.tick(nil, a)
				for range c.failures {
					r.tick(nil, drained(a))
				}
			} else {
				r.offAfterIdle(a)
				if err := r.m.PowerOn(context.Background(), "a1"); err != nil {
					t.Fatal(err)
				}
				for range c.failures {
					r.tick(nil)
				}
			}
			var warns []*logrus.Entry
			for _, e := range hook.AllEntries() {
				if e.Level <= logrus.WarnLevel {
					warns = append(warns, e)
				}
			}
			if len(warns) != c.failures {
				var msgs []string
				for _, e := range warns {
					msgs = append(msgs, e.Message)
				}
				t.Fatalf("%d failed runs logged %d warnings %q, want one each", c.failures, len(warns), msgs)
			}
			for i, w := range warns {
				want := "agent power: the power program failed; it is retried at the next tick: fix the power program"
				if i == len(warns)-1 {
					want = c.last
				}
				out, _ := w.Data["output"].(string)
				if !strings.HasPrefix(w.Message, want) || w.Data["agent"] != "a1" || w.Data["hostname"] != "host-a1" ||
					w.Data["program"] != prog || w.Data["action"] != c.action || w.Data["exit"] != 3 ||
					!strings.Contains(out, "no credentials for zone eu-1") || w.Data[logrus.ErrorKey] == nil {
					t.Errorf("warning %d: %q %v, want %q naming agent a1, host-a1, the program, action %s, exit 3, its output and the error",
						i, w.Message, w.Data, want, c.action)
				}
				// The give-up counts the failures that led to it (MaxFailures),
				// though a power-on's count is reset as it gives up.
				if i == len(warns)-1 && c.failures == 2 && w.Data["failures"] != 2 {
					t.Errorf("give-up warning's failures %v, want 2", w.Data["failures"])
				}
			}
		})
	}
}

// TestFailedProviderWarnsOnce: a provider that is not a program (the
// webhook, the emulator) fails with one warning too, which says it is
// retried and what to fix.
func TestFailedProviderWarnsOnce(t *testing.T) {
	r, hook := newLoggedRig(t, Config{})
	r.prov.failures = 1
	a := idle("a1", 4)
	r.tick(nil, a)
	r.now = r.now.Add(2 * time.Minute)
	r.tick(nil, a)
	r.tick(nil, drained(a))
	var warns []*logrus.Entry
	for _, e := range hook.AllEntries() {
		if e.Level <= logrus.WarnLevel {
			warns = append(warns, e)
		}
	}
	if len(warns) != 1 || !strings.Contains(warns[0].Message, "retried at the next tick: fix") ||
		warns[0].Data["agent"] != "a1" || warns[0].Data["hostname"] != "host-a1" || warns[0].Data[logrus.ErrorKey] == nil {
		t.Fatalf("warnings %v, want one naming agent a1, host-a1, the error, the retry and what to fix", warns)
	}
}

// TestGiveUpNamesTheFailedStep: the give-up warning after repeated
// failures to power an agent off names the step that failed and what to do
// for it: when deactivating the agent in Mesos (the operator API) is what
// failed, it says so and points at the Mesos master, not at the power
// provider, which was never called; when the provider's power-off failed,
// it points at the provider.
func TestGiveUpNamesTheFailedStep(t *testing.T) {
	for _, c := range []struct {
		name      string
		mesosFail bool
		step      string
		want      []string // the warning says
		not       string   // and never
	}{
		{"deactivating in Mesos fails", true, "deactivate_agent",
			[]string{"giving up powering it off", "deactivating the agent in Mesos", "Mesos master"}, "power provider"},
		{"the provider's power-off fails", false, "power_off",
			[]string{"giving up powering it off", "fix the power provider"}, "Mesos master"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, hook := newLoggedRig(t, Config{MaxFailures: 2})
			a := idle("a1", 4)
			r.tick(nil, a)
			r.now = r.now.Add(2 * time.Minute)
			if c.mesosFail {
				r.mesos.fail = fmt.Errorf("operator API: DEACTIVATE_AGENT: 403 Forbidden")
				r.tick(nil, a) // draining: the deactivation fails
				r.tick(nil, a) // again: the second failure gives up
			} else {
				r.prov.failures = 2
				r.tick(nil, a)
				r.tick(nil, drained(a)) // the power-off fails
				r.tick(nil, drained(a)) // again: the second failure gives up
			}
			if got := r.prov.took(); c.mesosFail && len(got) != 0 {
				t.Fatalf("provider called %v, want never (Mesos failed first)", got)
			}
			var giveUp *logrus.Entry
			for _, e := range hook.AllEntries() {
				if e.Level <= logrus.WarnLevel && strings.Contains(e.Message, "giving up") {
					giveUp = e
				}
			}
			if giveUp == nil {
				t.Fatalf("no give-up warning in %d entries", len(hook.AllEntries()))
			}
			for _, w := range c.want {
				if !strings.Contains(giveUp.Message, w) {
					t.Errorf("give-up warning %q, want it to say %q", giveUp.Message, w)
				}
			}
			if strings.Contains(giveUp.Message, c.not) {
				t.Errorf("give-up warning %q, want no %q", giveUp.Message, c.not)
			}
			if giveUp.Data["step"] != c.step || giveUp.Data["agent"] != "a1" || giveUp.Data[logrus.ErrorKey] == nil {
				t.Errorf("give-up fields %v, want step %s, agent a1 and the error", giveUp.Data, c.step)
			}
		})
	}
}

// TestStepWarningHostname: a failed step's warning names the agent's
// hostname when it is known, and has no hostname field (not an empty one)
// for an agent Mesos listed without one.
func TestStepWarningHostname(t *testing.T) {
	for _, host := range []string{"host-a1", ""} {
		t.Run("hostname "+strconv.Quote(host), func(t *testing.T) {
			r, hook := newLoggedRig(t, Config{})
			r.prov.failures = 1
			a := idle("a1", 4)
			a.Hostname = host
			r.tick(nil, a)
			r.now = r.now.Add(2 * time.Minute)
			r.tick(nil, a)
			r.tick(nil, drained(a))
			var warns []*logrus.Entry
			for _, e := range hook.AllEntries() {
				if e.Level <= logrus.WarnLevel {
					warns = append(warns, e)
				}
			}
			if len(warns) != 1 {
				t.Fatalf("%d warnings, want the failed step's", len(warns))
			}
			got, has := warns[0].Data["hostname"]
			if has != (host != "") || (has && got != host) {
				t.Errorf("warning fields %v: hostname %q (present %v), want %q only when known", warns[0].Data, got, has, host)
			}
		})
	}
}

// TestGiveUpWithReactivationFailingWarnsOnce: when power management gives
// up powering an agent off and reactivating it in Mesos fails too, the
// give-up is one warning that says so (it was followed by a second one
// that blamed the power program or a generic step).
func TestGiveUpWithReactivationFailingWarnsOnce(t *testing.T) {
	r, hook := newLoggedRig(t, Config{MaxFailures: 2})
	a := idle("a1", 4)
	r.tick(nil, a)
	r.now = r.now.Add(2 * time.Minute)
	r.mesos.fail = fmt.Errorf("operator API: 503 Service Unavailable")
	r.tick(nil, a) // draining: the deactivation fails
	hook.Reset()
	r.tick(nil, a) // again: the give-up, whose reactivation fails too
	var warns []string
	for _, e := range hook.AllEntries() {
		if e.Level <= logrus.WarnLevel {
			warns = append(warns, e.Message)
			if e.Data["reactivate_error"] == nil {
				t.Errorf("give-up warning fields %v, want reactivate_error", e.Data)
			}
		}
	}
	if len(warns) != 1 || !strings.Contains(warns[0], "giving up powering it off") || !strings.Contains(warns[0], "reactivating the agent in Mesos failed too") {
		t.Fatalf("give-up tick warned %q; want one give-up warning saying the reactivation failed too", warns)
	}
}

// TestMesosOutageGiveUpWarnsOncePerPeriod: while the Mesos master does not
// answer, a given-up agent's reactivation is retried at every tick, and
// warned about the first time, then once a period with how long and how
// often it failed: every tick (2 s in serve) it was one warning per idle
// agent for the whole outage (seen: 5 agents, 150 lines a minute). When
// Mesos answers again the agent is reactivated, on, with one warning that
// says how many reactivations failed before.
func TestMesosOutageGiveUpWarnsOncePerPeriod(t *testing.T) {
	r, hook := newLoggedRig(t, Config{MaxFailures: 2})
	a := idle("a1", 4)
	r.tick(nil, a)
	r.now = r.now.Add(2 * time.Minute)
	r.mesos.fail = fmt.Errorf("Mesos DEACTIVATE_AGENT: connection refused")
	r.tick(nil, a) // draining: the deactivation fails
	hook.Reset()
	const ticks = 45 // 90 s of a 2 s tick, within the drain timeout
	for range ticks {
		r.now = r.now.Add(2 * time.Second)
		r.tick(nil, a)
	}
	var giveUps []*logrus.Entry
	for _, e := range hook.AllEntries() {
		if e.Level <= logrus.WarnLevel {
			if !strings.Contains(e.Message, "giving up powering it off") {
				t.Errorf("warning %q, want only give-ups", e.Message)
			}
			giveUps = append(giveUps, e)
		}
	}
	// The first, then one each 30 s (failurelog.DefaultEvery) of the 90 s.
	if len(giveUps) < 2 || len(giveUps) > 4 {
		t.Fatalf("%d ticks with Mesos down logged %d give-up warnings, want the first and one a period (2-4)", ticks, len(giveUps))
	}
	if last := giveUps[len(giveUps)-1]; last.Data["reactivate_failures"] == nil || last.Data["failing_for"] == nil || last.Data["reactivate_error"] == nil {
		t.Errorf("reminder fields %v, want reactivate_failures, failing_for and reactivate_error", last.Data)
	}
	if got := r.store.state("a1"); got != StateDraining {
		t.Fatalf("state %s while Mesos is down, want draining (retried)", got)
	}
	hook.Reset()
	r.mesos.fail = nil
	r.now = r.now.Add(2 * time.Second)
	r.tick(nil, a) // Mesos answers: the deactivation goes through
	r.tick(nil, drained(a))
	if got := r.store.state("a1"); got == StateDraining {
		t.Fatalf("state %s after Mesos answered, want it moving on", got)
	}
}

// TestMesosErrorNamedOnce: a failed DEACTIVATE_AGENT is warned about with
// the error as the Mesos client words it (offers.Operator names the call
// and the agent), not wrapped in the same words again: the warning read
// "deactivate agent S0: deactivate agent S0: Mesos DEACTIVATE_AGENT ...".
func TestMesosErrorNamedOnce(t *testing.T) {
	r, hook := newLoggedRig(t, Config{})
	a := idle("a1", 4)
	r.tick(nil, a)
	r.now = r.now.Add(2 * time.Minute)
	r.mesos.fail = fmt.Errorf("deactivate agent a1: Mesos DEACTIVATE_AGENT to http://m:5050/api/v1: connection refused")
	r.tick(nil, a) // draining: the deactivation fails
	var warned int
	for _, e := range hook.AllEntries() {
		if e.Level > logrus.WarnLevel {
			continue
		}
		warned++
		msg := fmt.Sprint(e.Data[logrus.ErrorKey])
		if n := strings.Count(msg, "deactivate agent a1"); n != 1 {
			t.Errorf("warning error %q names the call %d times, want once", msg, n)
		}
	}
	if warned == 0 {
		t.Fatal("no warning for the failed deactivation")
	}
}
