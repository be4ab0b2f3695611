package main

import (
	"fmt"
	"time"

	"github.com/sparkpack/sparkpack/scheduler"
)

func init() { fieldFlags["notBefore"] = "--not-before" }

// parseNotBeforeFlag reads --not-before: an RFC 3339 time or a Go
// duration from now such as 30m or 2h.
func parseNotBeforeFlag(v string, now time.Time) (*scheduler.NotBefore, error) {
	if d, err := time.ParseDuration(v); err == nil {
		return &scheduler.NotBefore{Time: now.Add(d).UTC().Truncate(time.Second)}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return nil, fmt.Errorf("--not-before %q: want an RFC 3339 time (2026-11-22T02:40:00Z) or a duration from now (2h)", v)
	}
	return &scheduler.NotBefore{Time: t.UTC()}, nil
}
