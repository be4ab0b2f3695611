package strictjson

import "testing"

func TestCheckFields(t *testing.T) {
	fields := func(path string) []string {
		switch path {
		case "":
			return []string{"executorMemoryMB", "app"}
		case "app":
			return []string{"mainClass"}
		}
		return nil
	}
	cases := []struct {
		body, path string // path "" with ok: no error
		ok         bool
	}{
		{`{"executorMemoryMB":1,"app":{"mainClass":"x"}}`, "", true},
		{`{"executorMemoryMb":1}`, "executorMemoryMb", false},
		{`{"app":{"MainClass":"x"}}`, "app.MainClass", false},
		{`{"labels":{"Team":"a","team":"b"}}`, "", true}, // a map: keys are data
		{`{"unknown":1}`, "", true},                      // left to the decoder
		{`{"executorMemoryMB":1,"EXECUTORMEMORYMB":2}`, "EXECUTORMEMORYMB", false},
	}
	for _, tc := range cases {
		e := CheckFields([]byte(tc.body), fields)
		if tc.ok {
			if e != nil {
				t.Errorf("%s: unexpected error %v", tc.body, e)
			}
			continue
		}
		if e == nil || e.Path != tc.path {
			t.Errorf("%s: got %v, want an error at %q", tc.body, e, tc.path)
		}
	}
}
