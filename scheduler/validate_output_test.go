package scheduler

import (
	"errors"
	"strings"
	"testing"
)

// TestDecodeOutputFields: a field sparkpack sets (a job read back and
// posted again) or the team (shown in a job's JSON, set from the token or
// the team label) is refused naming the field and what to do instead, not
// as an unknown field; a misspelt field stays unknown.
func TestDecodeOutputFields(t *testing.T) {
	const base = `"app":{"appResource":"local:///a.jar","mainClass":"a.B"},"executors":1,"executorCores":1,"executorMemoryMB":1024`
	for _, c := range []struct{ extra, field, want string }{
		{`"team":"analytics"`, "team", `"team" label`},
		{`"state":"QUEUED"`, "state", "set by sparkpack"},
		{`"submittedAt":"2026-01-01T00:00:00Z"`, "submittedAt", "set by sparkpack"},
		{`"executorz":1`, "executorz", "unknown field"},
	} {
		_, err := DecodeSpec(strings.NewReader("{" + base + "," + c.extra + "}"))
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != c.field || !strings.Contains(fe.Msg, c.want) {
			t.Errorf("%s: %v; want field %s saying %q", c.extra, err, c.field, c.want)
		}
	}
}
