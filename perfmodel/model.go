package perfmodel

import (
	"errors"
	"fmt"
	"math"
)

// Limits of the inputs: anything outside is an error, never a panic or an
// overflow.
const (
	MaxExecutors = 100_000
	MaxSize      = 1e12 // in the caller's unit of size (e.g. GB x iterations)
	MaxSeconds   = 10 * 365 * 24 * 3600.0
)

// Power is u * I^v + w, a power function of the job's size I.
type Power struct {
	U float64 `json:"u"`
	V float64 `json:"v"`
	W float64 `json:"w"`
}

// At is the function's value at size i (> 0).
func (p Power) At(i float64) float64 {
	if p.U == 0 {
		return p.W
	}
	return p.U*math.Pow(i, p.V) + p.W
}

// Curve is the dSpark model T(E, I) = alpha(I) * E^beta(I) + gamma(I).
type Curve struct {
	Alpha Power `json:"alpha"`
	Beta  Power `json:"beta"`
	Gamma Power `json:"gamma"`
}

// At is the curve's run time in seconds for e executors and size i.
func (c Curve) At(e, i float64) float64 {
	return c.Alpha.At(i)*math.Pow(e, c.Beta.At(i)) + c.Gamma.At(i)
}

// Placement is the shape of a plan as the model sees it.
type Placement struct {
	// CrossShare is the share of shuffle blocks crossing agents, 1 - sum
	// (n_i / E)^2 for n_i executors on agent i (0 when all on one agent).
	CrossShare float64 `json:"crossShare"`
	// BusiestLoad is the cpu load (0 to 1) of the busiest agent holding the
	// job, the job's own executors included.
	BusiestLoad float64 `json:"busiestLoad"`
}

// Contention is the busiest agent's load above half, scaled to 0..1 (the
// part of the load that slows CPU-bound work).
func (p Placement) Contention() float64 {
	return min(1, max(0, (p.BusiestLoad-0.5)/0.5))
}

// CrossShareOf is 1 - sum (n_i / E)^2 for executor counts n_i per agent.
func CrossShareOf(counts []int) float64 {
	e := 0
	for _, n := range counts {
		if n > 0 {
			e += n
		}
	}
	if e == 0 {
		return 0
	}
	same := 0.0
	for _, n := range counts {
		if n > 0 {
			f := float64(n) / float64(e)
			same += f * f
		}
	}
	return max(0, 1-same)
}

func (p Placement) validate() error {
	if !finite(p.CrossShare) || p.CrossShare < 0 || p.CrossShare > 1 {
		return &InputError{Field: "crossShare", Msg: fmt.Sprintf("%v not in [0, 1]", p.CrossShare)}
	}
	if !finite(p.BusiestLoad) || p.BusiestLoad < 0 || p.BusiestLoad > 1 {
		return &InputError{Field: "busiestLoad", Msg: fmt.Sprintf("%v not in [0, 1]", p.BusiestLoad)}
	}
	return nil
}

// Params is a fitted model: the curve and the placement sensitivities.
type Params struct {
	Curve
	// ShuffleCost: a plan whose whole shuffle crosses agents runs 1 +
	// ShuffleCost times as long as one on a single agent.
	ShuffleCost float64 `json:"shuffleCost"`
	// Contention: a plan on a fully loaded agent runs 1 + Contention times
	// as long (linearly from half load).
	Contention float64 `json:"contention"`
}

// Factor is the placement's slowdown relative to one uncontended agent.
func (p Params) Factor(pl Placement) float64 {
	return (1 + p.ShuffleCost*pl.CrossShare) * (1 + p.Contention*pl.Contention())
}

// Seconds is the predicted run time (before residual quantiles).
func (p Params) Seconds(e, i float64, pl Placement) float64 {
	return p.Curve.At(e, i) * p.Factor(pl)
}

// Run is one finished run of a job.
type Run struct {
	Executors int `json:"executors"`
	// Size is the job's size I: input size x iterations, in a unit the
	// caller keeps the same for a signature (e.g. GB). > 0.
	Size float64 `json:"size"`
	Placement
	// Seconds is the actual run time.
	Seconds float64 `json:"seconds"`
}

// InputError is a rejected input; Field names it.
type InputError struct {
	Field string
	Msg   string
}

func (e *InputError) Error() string { return e.Field + ": " + e.Msg }

// ErrNoModel: nothing to predict from (no runs and no usable prior).
var ErrNoModel = errors.New("perfmodel: no model")

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

func checkExecutors(e int) error {
	if e < 1 || e > MaxExecutors {
		return &InputError{Field: "executors", Msg: fmt.Sprintf("%d not in [1, %d]", e, MaxExecutors)}
	}
	return nil
}

func checkSize(i float64) error {
	if !finite(i) || i <= 0 || i > MaxSize {
		return &InputError{Field: "size", Msg: fmt.Sprintf("%v not in (0, %g]", i, MaxSize)}
	}
	return nil
}

func checkSeconds(field string, s float64, zeroOK bool) error {
	if !finite(s) || s < 0 || s > MaxSeconds || (!zeroOK && s == 0) {
		return &InputError{Field: field, Msg: fmt.Sprintf("%v not a run time in seconds (0, %g]", s, MaxSeconds)}
	}
	return nil
}

// Validate checks a run; errors are *InputError naming the field.
func (r Run) Validate() error {
	if err := checkExecutors(r.Executors); err != nil {
		return err
	}
	if err := checkSize(r.Size); err != nil {
		return err
	}
	if err := r.Placement.validate(); err != nil {
		return err
	}
	return checkSeconds("seconds", r.Seconds, false)
}
