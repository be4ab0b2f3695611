package sparkrest

import (
	"strings"
	"testing"
	"time"
)

// TestNotBeforeProperty: spark.sparkpack.notBefore (or sparkpack.notBefore)
// sets the job's earliest start time; a value that is not an RFC 3339 time
// is refused with the property named.
func TestNotBeforeProperty(t *testing.T) {
	req := func(k, v string) CreateSubmissionRequest {
		return CreateSubmissionRequest{Action: ActionCreateRequest, ClientSparkVersion: "3.5.8",
			AppResource: "local:///app.jar", MainClass: "a.B", SparkProperties: map[string]string{k: v}}
	}
	for _, k := range []string{PropNotBefore, "sparkpack.notBefore"} {
		s, _, err := ToSpec(req(k, "2026-11-22T02:40:00+01:00"), 1)
		if err != nil {
			t.Fatalf("%s: %v", k, err)
		}
		if want := time.Date(2026, 11, 22, 1, 40, 0, 0, time.UTC); s.NotBefore == nil || !s.NotBefore.Equal(want) {
			t.Fatalf("%s: notBefore %v, want %s", k, s.NotBefore, want)
		}
		if err := s.Validate(); err != nil {
			t.Fatalf("validate: %v", err)
		}
	}
	_, _, err := ToSpec(req(PropNotBefore, "in two hours"), 1)
	if err == nil || !strings.Contains(err.Error(), PropNotBefore) {
		t.Fatalf("a bad time: %v; want an error naming %s", err, PropNotBefore)
	}
}

// TestNotBeforeAfterDeadlineNamesTheProperty: a notBefore not before the
// deadline is refused, as the create handler words it, naming the Spark
// property the user set (it said "notBefore", the native field).
func TestNotBeforeAfterDeadlineNamesTheProperty(t *testing.T) {
	s, _, err := ToSpec(CreateSubmissionRequest{Action: ActionCreateRequest, ClientSparkVersion: "3.5.8",
		AppResource: "local:///app.jar", MainClass: "a.B", SparkProperties: map[string]string{
			PropNotBefore: "2030-01-02T00:00:00Z", PropDeadline: "2030-01-01T00:00:00Z"}}, 1)
	if err != nil {
		t.Fatal(err)
	}
	err = s.Validate()
	if err == nil {
		t.Fatal("a notBefore after the deadline was accepted")
	}
	if msg := describeFieldError(err); !strings.HasPrefix(msg, PropNotBefore+": ") {
		t.Fatalf("%q; want it to name %s", msg, PropNotBefore)
	}
}
