package simulate

import (
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/sparkpack/sparkpack/workload"
)

// The replayed windows, seeds and the trace file of `sparkpack simulate`
// (moved from command.go unchanged).

// window is one replayed part of the trace.
type window struct {
	Label    string
	Hour     int // -1 when not one hour
	From, To time.Duration
}

func (f *flags) windows(fs *flag.FlagSet, set map[string]bool) ([]window, error) {
	if f.hours == "" {
		from, to, err := f.window(fs)
		if err != nil {
			return nil, err
		}
		w := window{Label: fmt.Sprintf("[%s, %s)", fmtOffset(from), fmtOffset(to)), Hour: -1, From: from, To: to}
		if set["hour"] {
			w.Label, w.Hour = fmt.Sprintf("hour %d", f.hour), f.hour
		}
		return []window{w}, nil
	}
	if set["hour"] || set["from"] || set["to"] {
		return nil, errors.New("use --hours or --hour/--from/--to, not both")
	}
	var out []window
	seen := map[int]bool{}
	for _, part := range strings.Split(f.hours, ",") {
		h, err := strconv.Atoi(strings.TrimSpace(part))
		if err != nil || h < 0 || h > 23 {
			return nil, fmt.Errorf("--hours: %q is not an hour 0..23", part)
		}
		if seen[h] {
			// As --seeds: twice would run it twice and aggregate the two
			// identical runs as if over two seeds ("seeds 1,1").
			return nil, fmt.Errorf("--hours: hour %d is given twice", h)
		}
		seen[h] = true
		out = append(out, window{Label: fmt.Sprintf("hour %d", h), Hour: h, From: time.Duration(h) * time.Hour, To: time.Duration(h+1) * time.Hour})
	}
	return out, nil
}

// parseSeeds reads "1-5", "1,2,7" or a mix ("1-3,9").
func parseSeeds(s string) ([]uint64, error) {
	var out []uint64
	seen := map[uint64]bool{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.ParseUint(lo, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not a seed or a range such as 1-5", part)
		}
		b := a
		if isRange {
			if b, err = strconv.ParseUint(hi, 10, 64); err != nil || b < a || b-a >= 1000 {
				return nil, fmt.Errorf("%q is not a range such as 1-5 (at most 1000 seeds)", part)
			}
		}
		for k := uint64(0); k <= b-a; k++ { // (not x <= b: it wraps at the largest uint64)
			if seen[a+k] {
				// Twice would weigh it twice in the mean and shrink the spread.
				return nil, fmt.Errorf("seed %d is given twice (in %q)", a+k, part)
			}
			seen[a+k] = true
			out = append(out, a+k)
		}
	}
	return out, nil
}

func (f *flags) window(fs *flag.FlagSet) (from, to time.Duration, err error) {
	to = time.Duration(math.MaxInt64)
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	if set["hour"] {
		if set["from"] || set["to"] {
			return 0, 0, errors.New("use --hour or --from/--to, not both")
		}
		if f.hour < 0 || f.hour > 23 {
			return 0, 0, fmt.Errorf("--hour %d not in 0..23", f.hour)
		}
		return time.Duration(f.hour) * time.Hour, time.Duration(f.hour+1) * time.Hour, nil
	}
	if f.from != "" {
		if from, err = parseOffset(f.from); err != nil {
			return 0, 0, fmt.Errorf("--from: %w", err)
		}
	}
	if f.to != "" {
		if to, err = parseOffset(f.to); err != nil {
			return 0, 0, fmt.Errorf("--to: %w", err)
		}
	}
	if to <= from {
		return 0, 0, fmt.Errorf("--to %s is not after --from %s", f.to, f.from)
	}
	return from, to, nil
}

// parseOffset reads seconds ("3600", "90.5") or a Go duration ("1h30m").
func parseOffset(s string) (time.Duration, error) {
	if v, err := strconv.ParseFloat(s, 64); err == nil {
		if v < 0 || v > workload.MaxTraceSeconds || math.IsNaN(v) {
			return 0, fmt.Errorf("%q out of range: want seconds from 0 to %d into the trace, or a duration such as 1h", s, workload.MaxTraceSeconds)
		}
		return time.Duration(v * float64(time.Second)), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%q is neither seconds nor a duration such as 1h", s)
	}
	return d, nil
}

func fmtOffset(d time.Duration) string {
	if d == time.Duration(math.MaxInt64) {
		return "end"
	}
	d = d.Round(time.Second)
	return fmt.Sprintf("%02d:%02d:%02d", int(d.Hours()), int(d.Minutes())%60, int(d.Seconds())%60)
}

// resolveTrace finds the trace: the given path, or DefaultTrace relative
// to the working directory or to the repository root above it.
func resolveTrace(p string) (string, error) {
	if p != "" {
		return p, nil
	}
	if _, err := os.Stat(DefaultTrace); err == nil {
		return DefaultTrace, nil
	}
	dir, err := os.Getwd()
	if err == nil {
		for {
			if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
				c := filepath.Join(dir, filepath.FromSlash(DefaultTrace))
				if _, err := os.Stat(c); err == nil {
					return c, nil
				}
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				break
			}
			dir = parent
		}
	}
	return "", fmt.Errorf("trace %s not found (relative to the working directory or the repository root); use --trace", DefaultTrace)
}
