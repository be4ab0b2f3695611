package power

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	logtest "github.com/sirupsen/logrus/hooks/test"
)

var snakeCase = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)

// TestPowerLogLinesAreFixed: every power step logs one fixed message per
// state, with the reason, agent and hostname in fields (a log search for
// "agent power: off" finds every power-off whatever its reason), and so
// does a boot that timed out.
func TestPowerLogLinesAreFixed(t *testing.T) {
	r := newRig(t, Config{PowerOnTimeout: 5 * time.Minute, AvoidFor: 30 * time.Minute})
	log, hook := logtest.NewNullLogger()
	r.cfg.Log = log
	r.restart()
	a := idle("a1", 4)
	r.tick(nil, a)
	r.now = r.now.Add(61 * time.Second)
	r.tick(nil, a)
	r.tick(nil, drained(a))
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
		{logrus.WarnLevel, "agent power: it did not register after its power-on; back to off", "did not register within 5m0s of the power-on"},
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
