package main

import (
	"errors"
	"fmt"
	"math"
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

// maxSpan bounds every span: 100000 days (some 270 years) is far past any
// window an operator asks and still well inside time.Duration (about
// 106751 days), so a day count times 24h cannot overflow.
const maxSpanDays = 100000

const maxSpan = maxSpanDays * 24 * time.Hour

// spanHint says what a valid span looks like; every refusal ends with it.
const spanHint = "want a positive duration such as 36h or 90m, or a number of days such as 7d (at most 100000d)"

// parseSpan reads a Go duration (90m, 36h) or a number of days (7d). Every
// caller asks a window's length or a step's width, so only a positive,
// finite span up to maxSpan is one: NaN, Inf, negative, zero and
// overflowing values are refused (the flag package names the flag).
func parseSpan(v string) (time.Duration, error) {
	var d time.Duration
	if days, ok := strings.CutSuffix(v, "d"); ok && days != "" {
		n, err := strconv.ParseFloat(days, 64)
		switch {
		case err != nil && !errors.Is(err, strconv.ErrRange), math.IsNaN(n):
			return 0, fmt.Errorf("not a number of days: %s", spanHint)
		// ParseFloat's ErrRange (1e400) gives ±Inf: caught by the bounds
		case n <= 0:
			return 0, fmt.Errorf("a span must be more than 0: %s", spanHint)
		case n > maxSpanDays:
			return 0, fmt.Errorf("too long a span: %s", spanHint)
		}
		d = time.Duration(n * float64(24*time.Hour))
	} else {
		var err error
		if d, err = time.ParseDuration(v); err != nil {
			return 0, fmt.Errorf("not a duration: %s", spanHint)
		}
	}
	switch {
	case d > maxSpan:
		return 0, fmt.Errorf("too long a span: %s", spanHint)
	case d <= 0:
		return 0, fmt.Errorf("a span must be more than 0: %s", spanHint)
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
