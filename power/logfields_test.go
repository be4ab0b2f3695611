package power

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/sparkpack/sparkpack/scheduler"
)

var snakeCase = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)

// TestPowerLogLinesAreFixed: every power step logs one fixed message per
// state, with the reason, agent and hostname in fields (a log search for
// "agent power: off" finds every power-off whatever its reason), and so
// does a boot that timed out.
func TestPowerLogLinesAreFixed(t *testing.T) {
	r, hook := newLoggedRig(t, Config{PowerOnTimeout: 5 * time.Minute, AvoidFor: 30 * time.Minute})
	a := idle("a1", 4)
	r.offAfterIdle(a)
	if err := r.m.PowerOn(context.Background(), "a1"); err != nil {
		t.Fatal(err)
	}
	r.tick(nil)
	r.now = r.now.Add(6 * time.Minute)
	r.tick(nil)

	want := []struct {
		level  logrus.Level
		msg    string
		reason string
	}{
		{logrus.InfoLevel, "agent power: draining", "idle for 1m1s"},
		{logrus.InfoLevel, "agent power: powering-off", "deactivated and idle"},
		{logrus.InfoLevel, "agent power: off", "powered off by fake"},
		{logrus.InfoLevel, "agent power: booting", "a plan needs it"},
		{logrus.WarnLevel, "agent power: it did not register after its power-on; back to off, avoided by plans until avoid_until: check the machine and its Mesos agent", "did not register within 5m0s of the power-on"},
	}
	var got []*logrus.Entry
	for _, e := range hook.AllEntries() {
		if strings.HasPrefix(e.Message, "agent power:") {
			got = append(got, e)
		}
	}
	if len(got) != len(want) {
		var msgs []string
		for _, e := range got {
			msgs = append(msgs, e.Message)
		}
		t.Fatalf("power log lines %q, want %d", msgs, len(want))
	}
	// Field names are snake_case like every other field of the product
	// (a log search for avoid_until found nothing: it was avoidUntil).
	for _, e := range hook.AllEntries() {
		for k := range e.Data {
			if !snakeCase.MatchString(k) {
				t.Errorf("%q logs the field %q, want snake_case", e.Message, k)
			}
		}
	}
	if e := got[len(got)-1]; e.Data["avoid_until"] != r.now.Add(30*time.Minute).Format(time.RFC3339) {
		t.Errorf("the boot timeout logs avoid_until %v, want 30m after the timeout", e.Data["avoid_until"])
	}
	for i, w := range want {
		e := got[i]
		reason, _ := e.Data["reason"].(string)
		if e.Level != w.level || e.Message != w.msg || !strings.HasPrefix(reason, w.reason) || e.Data["agent"] != "a1" || e.Data["hostname"] != "host-a1" {
			t.Errorf("line %d: %s %q %v, want %s %q with reason %q, agent a1, hostname host-a1", i, e.Level, e.Message, e.Data, w.level, w.msg, w.reason)
		}
	}
}

// TestPowerOnLogsWhy: the "agent power: booting" line names the job whose
// plan needs the agent and why (scheduler.PowerOnCause in the context), or
// the warm pool's reason, so that an operator reading the log can answer
// "why did agent a1 power on?"; with no cause it says a plan needs it.
func TestPowerOnLogsWhy(t *testing.T) {
	for _, tc := range []struct {
		cause    *scheduler.PowerOnCause
		job, why string
	}{
		{&scheduler.PowerOnCause{Job: "job-7", Reason: "a plan needs it: job job-7 starts on it"}, "job-7", "a plan needs it: job job-7 starts on it"},
		{&scheduler.PowerOnCause{Reason: "warm pool: forecast 2 jobs"}, "", "warm pool: forecast 2 jobs"},
		{nil, "", "a plan needs it"},
	} {
		r, hook := newLoggedRig(t, Config{})
		r.offAfterIdle(idle("a1", 4))
		ctx := context.Background()
		if tc.cause != nil {
			ctx = scheduler.WithPowerOnCause(ctx, *tc.cause)
		}
		if err := r.m.PowerOn(ctx, "a1"); err != nil {
			t.Fatal(err)
		}
		var booting *logrus.Entry
		for _, e := range hook.AllEntries() {
			if e.Message == "agent power: booting" {
				booting = e
			}
		}
		if booting == nil {
			t.Fatalf("%+v: no booting line", tc.cause)
		}
		job, hasJob := booting.Data["job"]
		if booting.Data["agent"] != "a1" || booting.Data["reason"] != tc.why || (tc.job == "") == hasJob || (hasJob && job != tc.job) {
			t.Errorf("%+v: booting line %v, want agent a1, job %q, reason %q", tc.cause, booting.Data, tc.job, tc.why)
		}
		if rec := r.m.Records()[0]; rec.LastError != tc.why {
			t.Errorf("%+v: the record says %q, want %q", tc.cause, rec.LastError, tc.why)
		}
	}
}

// TestGiveUpPowerOffSaysWhatToDo: the warning that power management gives
// up powering an agent off names the machine and says what to fix.
func TestGiveUpPowerOffSaysWhatToDo(t *testing.T) {
	r, hook := newLoggedRig(t, Config{MaxFailures: 2})
	r.prov.failures = 10
	a := idle("a1", 4)
	r.tick(nil, a)
	r.now = r.now.Add(2 * time.Minute)
	r.tick(nil, a)
	r.tick(nil, drained(a))
	r.tick(nil, drained(a))
	if st := r.store.state("a1"); st != StateOn {
		t.Fatalf("after 2 failed power-offs: %s, want on", st)
	}
	var warn *logrus.Entry
	for _, e := range hook.AllEntries() {
		if strings.HasPrefix(e.Message, "agent power: giving up") {
			warn = e
		}
	}
	if warn == nil || warn.Level != logrus.WarnLevel || !strings.Contains(warn.Message, "fix the power provider") ||
		warn.Data["agent"] != "a1" || warn.Data["hostname"] != "host-a1" || warn.Data[logrus.ErrorKey] == nil {
		t.Fatalf("give-up line %+v, want a warning naming agent a1, host-a1, the error and what to fix", warn)
	}
}
