package api

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// wrapped is a middleware's ResponseWriter that exposes the one under it.
type wrapped struct{ http.ResponseWriter }

func (w wrapped) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// TestNoteErrorCut: the access log keeps an error message of up to 300
// bytes whole and cuts a longer one to its first 300 bytes plus "...",
// dropping a character the cut splits; the recorder is found under other
// wrappers, and a writer without one is left alone.
func TestNoteErrorCut(t *testing.T) {
	a300 := strings.Repeat("a", 300)
	for _, tc := range []struct {
		name, msg, want string
	}{
		{"short", "bad executors", "bad executors"},
		{"exactly 300", a300, a300},
		{"301", a300 + "b", a300 + "..."},
		// 299 bytes then "é" (2 bytes, cut after its first): 299 a's.
		{"split rune", a300[:299] + "é" + "zz", a300[:299] + "..."},
	} {
		rec := &statusRecorder{ResponseWriter: httptest.NewRecorder()}
		noteError(wrapped{wrapped{rec}}, "executors", tc.msg)
		if rec.errMsg != tc.want || rec.errField != "executors" {
			t.Errorf("%s: noted %q (%d bytes), field %q; want %q (%d bytes)", tc.name, rec.errMsg, len(rec.errMsg), rec.errField, tc.want, len(tc.want))
		}
	}
	noteError(httptest.NewRecorder(), "f", "no recorder") // must not panic
	noteError(nil, "f", "nil writer")
}
