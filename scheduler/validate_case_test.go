package scheduler

import (
	"errors"
	"strings"
	"testing"
)

// Field names of the job JSON are exact: encoding/json alone would take
// "executorMemoryMb" for "executorMemoryMB" (issue 28, item 3).
func TestDecodeSpecFieldNamesAreCaseSensitive(t *testing.T) {
	cases := []struct{ from, to, field, want string }{
		{`"executorMemoryMB"`, `"executorMemoryMb"`, "executorMemoryMb", `"executorMemoryMB"`},
		{`"executors"`, `"Executors"`, "Executors", `"executors"`},
		{`"mainClass"`, `"MAINCLASS"`, "app.MAINCLASS", `"mainClass"`},
	}
	for _, tc := range cases {
		body := strings.Replace(validJob, tc.from, tc.to, 1)
		if body == validJob {
			t.Fatalf("%s is not in the test job", tc.from)
		}
		_, err := DecodeSpec(strings.NewReader(body))
		var fe *FieldError
		if !errors.As(err, &fe) {
			t.Fatalf("%s: want a FieldError, got %v", tc.to, err)
		}
		if fe.Field != tc.field || !strings.Contains(fe.Msg, tc.want) {
			t.Errorf("%s: got field %q, %q; want field %q naming %s", tc.to, fe.Field, fe.Msg, tc.field, tc.want)
		}
	}
	// The exact names still decode.
	if _, err := DecodeSpec(strings.NewReader(validJob)); err != nil {
		t.Fatalf("the valid job: %v", err)
	}
}
