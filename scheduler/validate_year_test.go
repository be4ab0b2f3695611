package scheduler

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// TestDeadlineYearInUTC: a deadline whose year is within range in its
// own offset but not in UTC (9999-12-31T23:59:59-23:00 is 10000-01-01 UTC)
// is refused naming the field: accepted, the job's deadlineAt could not be
// written as JSON and its stored spec could not be read back, so every
// read of the job (and every list page holding it) failed.
func TestDeadlineYearInUTC(t *testing.T) {
	for _, dl := range []string{"9999-12-31T23:59:59-23:00", "9999-12-31T12:00:00-12:00"} {
		body := `{"app":{"appResource":"local:///x.jar","mainClass":"X"},"executors":1,"executorCores":1,"executorMemoryMB":1024,"deadline":"` + dl + `"}`
		_, err := DecodeSpec(strings.NewReader(body))
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != "deadline" {
			t.Errorf("deadline %s: got %v, want a deadline field error", dl, err)
		}
	}
	// The last deadline accepted still reads back.
	body := `{"app":{"appResource":"local:///x.jar","mainClass":"X"},"executors":1,"executorCores":1,"executorMemoryMB":1024,"deadline":"9999-12-31T23:59:59Z"}`
	s, err := DecodeSpec(strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(&s)
	if err != nil {
		t.Fatal(err)
	}
	var back Spec
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatalf("stored spec %s does not read back: %v", b, err)
	}
}
