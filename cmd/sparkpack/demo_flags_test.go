package main

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
	"time"
)

// TestDemoRefusesBadFlags: the demo checks its flags before it starts
// anything, and the error names the flag. An unknown --policy used to pass
// here (only serve checked it); the demo then started and its scheduler
// stepped down as leader for ever, scheduling nothing.
func TestDemoRefusesBadFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--policy", "nonsense"}, `--policy "nonsense" is unknown`},
		{[]string{"--sim-speed", "0"}, "--sim-speed"},
		{[]string{"--sim-speed", "NaN"}, "--sim-speed"},
		{[]string{"--sim-speed", "+Inf"}, "--sim-speed"},
		{[]string{"--sim-speed", "1e-300"}, "--sim-speed"},
		{[]string{"--sim-speed", "1e6"}, "--sim-speed"},
		{[]string{"--sample-hour", "24"}, "--sample-hour"},
		{[]string{"--listen", "nowhere"}, "--listen"},
	} {
		var stderr bytes.Buffer
		// A flag that passes starts the whole demo: the deadline ends it.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		err := runDemo(ctx, tc.args, io.Discard, &stderr)
		cancel()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("demo %v: %v; want an error naming %s", tc.args, err, tc.want)
		}
	}
}
