package plural

import "testing"

func TestPlural(t *testing.T) {
	cases := []struct{ got, want string }{
		{N(0, "executor"), "0 executors"},
		{N(1, "executor"), "1 executor"},
		{N(2, "agent"), "2 agents"},
		{G(1, "cpu"), "1 cpu"},
		{G(0.5, "cpu"), "0.5 cpus"},
		{G(2, "cpu"), "2 cpus"},
		{G(1.5, "cpu"), "1.5 cpus"},
	}
	for _, tc := range cases {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}
