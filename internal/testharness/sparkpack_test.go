package testharness

import "testing"

func TestServingAt(t *testing.T) {
	for _, c := range []struct {
		line string
		want string
		ok   bool
	}{
		{`{"level":"info","listen":"127.0.0.1:4242","msg":"sparkpack is serving"}`, "127.0.0.1:4242", true},
		{`{"level":"info","listen":"127.0.0.1:4242","msg":"spark REST listener"}`, "", false},
		{`{"level":"info","msg":"sparkpack is serving"}`, "", false},
		{`sparkpack is serving on 127.0.0.1:4242`, "", false},
	} {
		got, ok := servingAt(c.line)
		if ok != c.ok || (ok && got != c.want) {
			t.Errorf("servingAt(%s) = %q %v, want %q %v", c.line, got, ok, c.want, c.ok)
		}
	}
}

func TestLogFilters(t *testing.T) {
	log := `{"level":"info","msg":"request"}
{"level":"warning","msg":"slow"}
{"level":"info","msg":"started"}
{"level":"error","msg":"failed"}
`
	if got, want := WithoutRequests(log), "{\"level\":\"warning\",\"msg\":\"slow\"}\n{\"level\":\"info\",\"msg\":\"started\"}\n{\"level\":\"error\",\"msg\":\"failed\"}\n"; got != want {
		t.Errorf("WithoutRequests:\n%s", got)
	}
	if got, want := Warnings(log), "{\"level\":\"warning\",\"msg\":\"slow\"}\n{\"level\":\"error\",\"msg\":\"failed\"}"; got != want {
		t.Errorf("Warnings:\n%s", got)
	}
	if got := Tail("a\nb\nc\n", 2); got != "b\nc" {
		t.Errorf("Tail = %q", got)
	}
	if got := Tail("a\n", 5); got != "a" {
		t.Errorf("Tail of a short log = %q", got)
	}
}
