package workload

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"math/rand/v2"
	"reflect"
	"regexp"
	"strings"

	"github.com/sparkpack/sparkpack/internal/strictjson"
)

// Mix is an operator's job mix (`sparkpack simulate --mix FILE`): kinds of
// applications with their shares of the arrivals, input ranges,
// iterations and shuffle ratios. docs/simulation.md documents the format.
type Mix struct {
	Name        string    `json:"name"`
	Description string    `json:"description,omitempty"`
	Kinds       []MixKind `json:"kinds"`
}

// MixKind is one kind of application of a mix. Its name is its signature
// (the job's application resource); the scheduler is told neither its
// figures nor, with hidden application types, its type.
type MixKind struct {
	Name string `json:"name"`
	// App is the application type whose figures (compute rate, CPU-boundness,
	// heap) the kind starts from: wordcount, sort or pagerank.
	App string `json:"app"`
	// Share of the arrivals (all shares sum to 1).
	Share float64 `json:"share"`
	// InputGB is the range of the input size (uniform, GB of 1e9 bytes).
	InputGB Range `json:"inputGB"`
	// Iterations is the range of passes over the input (uniform,
	// inclusive; default 1 to 1).
	Iterations *IntRange `json:"iterations,omitempty"`
	// ShuffleRatio is the shuffle per input byte in every iteration;
	// OutputRatio the output per input byte.
	ShuffleRatio *float64 `json:"shuffleRatio"`
	OutputRatio  *float64 `json:"outputRatio"`
	// ComputeMBps (per core) and CPUBound override the app type's figures.
	ComputeMBps *float64 `json:"computeMBps,omitempty"`
	CPUBound    *float64 `json:"cpuBound,omitempty"`
}

// Range is a closed interval of numbers.
type Range struct {
	Min float64 `json:"min"`
	Max float64 `json:"max"`
}

// IntRange is a closed interval of integers.
type IntRange struct {
	Min int `json:"min"`
	Max int `json:"max"`
}

// Limits of a mix.
const (
	MaxMixBytes     = 1 << 20
	MaxMixKinds     = 64
	MaxMixInputGB   = 10_000
	MaxMixIters     = 1000
	MaxMixRatio     = 1000
	MaxMixComputeMB = 1e6
)

// MixError is an invalid mix; Field names the offending field as a JSON
// path (e.g. "kinds[1].inputGB.max").
type MixError struct {
	Field string
	Msg   string
}

func (e *MixError) Error() string {
	if e.Field == "" {
		return "mix: " + e.Msg
	}
	return "mix: " + e.Field + ": " + e.Msg
}

var kindName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// ParseMix reads and validates a mix strictly: one JSON object of at most
// MaxMixBytes, no unknown fields, every field in range; errors are
// *MixError naming the field.
func ParseMix(r io.Reader) (Mix, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxMixBytes+1))
	if err != nil {
		return Mix{}, fmt.Errorf("mix: read: %w", err)
	}
	if len(data) > MaxMixBytes {
		return Mix{}, &MixError{Msg: fmt.Sprintf("longer than %d bytes", MaxMixBytes)}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var m Mix
	if err := dec.Decode(&m); err != nil {
		var ute *json.UnmarshalTypeError
		if errors.As(err, &ute) {
			field := ute.Field
			if p := strictjson.TypePath(data, ute.Field, ute.Value); p != "" {
				field = p // with the kind's index: encoding/json leaves it out
			}
			return Mix{}, &MixError{Field: field, Msg: fmt.Sprintf("want a %s, got a JSON %s", ute.Type, ute.Value)}
		}
		msg := err.Error()
		if f, ok := strings.CutPrefix(msg, "json: unknown field "); ok {
			// encoding/json names the key alone: find where it is (which
			// kind) and say which keys are known there.
			if path, known := strictjson.UnknownField(data, reflect.TypeFor[Mix]()); path != "" {
				return Mix{}, &MixError{Field: path, Msg: "unknown field (known here: " + strings.Join(known, ", ") + ")"}
			}
			return Mix{}, &MixError{Field: strings.Trim(f, `"`), Msg: "unknown field"}
		}
		return Mix{}, &MixError{Msg: "not a JSON object: " + msg}
	}
	if dec.More() {
		return Mix{}, &MixError{Msg: "trailing data after the JSON object"}
	}
	if err := m.Validate(); err != nil {
		return Mix{}, err
	}
	return m, nil
}

// Validate checks every field of the mix.
func (m Mix) Validate() error {
	if strings.TrimSpace(m.Name) == "" {
		return &MixError{Field: "name", Msg: "missing"}
	}
	if len(m.Kinds) == 0 || len(m.Kinds) > MaxMixKinds {
		return &MixError{Field: "kinds", Msg: fmt.Sprintf("want 1 to %d kinds, got %d", MaxMixKinds, len(m.Kinds))}
	}
	seen := map[string]bool{}
	sum := 0.0
	for i, k := range m.Kinds {
		at := func(f string) string { return fmt.Sprintf("kinds[%d].%s", i, f) }
		bad := func(f, format string, a ...any) error { return &MixError{Field: at(f), Msg: fmt.Sprintf(format, a...)} }
		if !kindName.MatchString(k.Name) {
			return bad("name", "%q: want 1-64 letters, digits, '.', '_' or '-'", k.Name)
		}
		if seen[k.Name] {
			return bad("name", "%q twice", k.Name)
		}
		seen[k.Name] = true
		switch AppType(k.App) {
		case WordCount, Sort, PageRank:
		default:
			return bad("app", "%q: want wordcount, sort or pagerank", k.App)
		}
		if !(k.Share > 0) || k.Share > 1 {
			return bad("share", "%v not in (0, 1]", k.Share)
		}
		sum += k.Share
		if !(k.InputGB.Min >= 0.001) || k.InputGB.Min > MaxMixInputGB {
			return bad("inputGB.min", "%v not in [0.001, %d]", k.InputGB.Min, MaxMixInputGB)
		}
		if !(k.InputGB.Max >= k.InputGB.Min) || k.InputGB.Max > MaxMixInputGB {
			return bad("inputGB.max", "%v not in [inputGB.min, %d]", k.InputGB.Max, MaxMixInputGB)
		}
		if it := k.Iterations; it != nil {
			if it.Min < 1 || it.Min > MaxMixIters {
				return bad("iterations.min", "%d not in [1, %d]", it.Min, MaxMixIters)
			}
			if it.Max < it.Min || it.Max > MaxMixIters {
				return bad("iterations.max", "%d not in [iterations.min, %d]", it.Max, MaxMixIters)
			}
		}
		for _, r := range []struct {
			name string
			v    *float64
		}{{"shuffleRatio", k.ShuffleRatio}, {"outputRatio", k.OutputRatio}} {
			if r.v == nil {
				return bad(r.name, "missing")
			}
			if !(*r.v >= 0) || *r.v > MaxMixRatio {
				return bad(r.name, "%v not in [0, %d]", *r.v, MaxMixRatio)
			}
		}
		if v := k.ComputeMBps; v != nil && (!(*v > 0) || *v > MaxMixComputeMB) {
			return bad("computeMBps", "%v not in (0, %g]", *v, float64(MaxMixComputeMB))
		}
		if v := k.CPUBound; v != nil && (!(*v >= 0) || *v > 1) {
			return bad("cpuBound", "%v not in [0, 1]", *v)
		}
	}
	if math.Abs(sum-1) > 1e-6 {
		return &MixError{Field: "kinds[].share", Msg: fmt.Sprintf("shares sum to %v, want 1", sum)}
	}
	return nil
}

// bytesOf rounds b to whole bytes, saturating at the largest int64.
func bytesOf(b float64) int64 {
	if b >= math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(math.Round(b))
}

// FromMix builds a workload from a mix as Thesis does from ThesisMix: one
// job per arrival (its id and submission time kept), of a kind drawn by the
// shares, its input and iterations drawn uniformly from the kind's ranges,
// shuffle = input x shuffleRatio x iterations, output = input x
// outputRatio, executors from the input as in Thesis. Deterministic for a
// seed and the window's first arrival. mix must be valid (Validate).
func (m Model) FromMix(arrivals []TraceJob, mix Mix, seed uint64) []Job {
	h := fnv.New64a()
	h.Write([]byte(mix.Name))
	if len(arrivals) > 0 {
		h.Write([]byte(arrivals[0].ID))
	}
	rng := rand.New(rand.NewPCG(seed, 0x313c^h.Sum64()))
	out := make([]Job, len(arrivals))
	for i, t := range arrivals {
		x := rng.Float64()
		k := mix.Kinds[len(mix.Kinds)-1]
		for _, c := range mix.Kinds {
			if x < c.Share {
				k = c
				break
			}
			x -= c.Share
		}
		app := AppType(k.App)
		p := Profile{JobID: t.ID, App: app, Kind: k.Name, ExecutorCores: max(1, m.ExecutorCores), ExecutorMemoryMB: m.Apps[app].ExecutorMemoryMB}
		v := k.InputGB.Min
		if k.InputGB.Max > k.InputGB.Min {
			v += rng.Float64() * (k.InputGB.Max - k.InputGB.Min)
		}
		p.InputBytes = int64(math.Round(v*1000)) * 1_000_000
		p.Iterations = 1
		if it := k.Iterations; it != nil {
			p.Iterations = it.Min
			if it.Max > it.Min {
				p.Iterations += rng.IntN(it.Max - it.Min + 1)
			}
		}
		p.ShuffleBytes = bytesOf(float64(p.InputBytes) * *k.ShuffleRatio * float64(p.Iterations))
		p.OutputBytes = bytesOf(float64(p.InputBytes) * *k.OutputRatio)
		if k.ComputeMBps != nil || k.CPUBound != nil {
			ap := m.Apps[app]
			if k.ComputeMBps != nil {
				ap.ComputeMBps = *k.ComputeMBps
			}
			if k.CPUBound != nil {
				ap.CPUBound = *k.CPUBound
			}
			p.Perf = &ap
		}
		p.Executors = m.ExecutorsFor(p.InputBytes)
		out[i] = Job{Submit: t.Submit, Profile: p}
	}
	return out
}
