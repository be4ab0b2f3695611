package jsontext

import (
	"encoding/json"
	"testing"
)

// AppendString writes exactly what encoding/json writes for the string,
// after what the buffer held.
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "plain", `q"uote`, `back\slash`, "tab\t", "\x00", "\x7f", "ünï ✓", "<&>", "\xff\xfe", "\u2028"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		got := AppendString([]byte("x:"), s)
		if string(got) != "x:"+string(want) {
			t.Fatalf("AppendString(%q) = %s, want x:%s", s, got, want)
		}
	})
}
