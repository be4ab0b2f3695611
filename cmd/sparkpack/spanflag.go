package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// spanFlag is a duration flag that also takes days ("7d", "1.5d"), the
// unit an operator asks in ("what did this week cost": --since 7d); Go's
// own duration flag refuses it with a bare "parse error".
type spanFlag time.Duration

func newSpanFlag(d time.Duration) *spanFlag { s := spanFlag(d); return &s }

func (s *spanFlag) String() string { return time.Duration(*s).String() }

func (s *spanFlag) Set(v string) error {
	d, err := parseSpan(v)
	if err != nil {
		return err
	}
	*s = spanFlag(d)
	return nil
}

func (s *spanFlag) get() time.Duration { return time.Duration(*s) }

// parseSpan reads a Go duration (90m, 36h) or a number of days (7d).
func parseSpan(v string) (time.Duration, error) {
	if days, ok := strings.CutSuffix(v, "d"); ok && days != "" {
		n, err := strconv.ParseFloat(days, 64)
		if err != nil || n < 0 || n > 100000 {
			return 0, fmt.Errorf("want a number of days such as 7d, or a duration such as 36h or 90m")
		}
		return time.Duration(n * float64(24*time.Hour)), nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, fmt.Errorf("want a duration such as 36h or 90m, or a number of days such as 7d")
	}
	return d, nil
}

// spanParam renders a span for a query string in the units the server
// reads (Go durations: "7d" goes as "168h0m0s").
func spanParam(v string) (string, error) {
	d, err := parseSpan(v)
	if err != nil {
		return "", err
	}
	return d.String(), nil
}
