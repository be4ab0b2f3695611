package placement

import (
	"fmt"
	"slices"
	"sync"
	"time"
)

// Options configure the policies. The zero value means "defaults".
type Options struct {
	// Alpha and Beta are bfd's Resource Unification Thresholds (alpha +
	// beta = 1). Zero for both means the defaults 0.8 / 0.2; if only one is
	// set the other is 1 minus it.
	Alpha, Beta float64
	// ILPMaxNodes is the ilp policy's work bound: CBC stops after this
	// many branch-and-bound nodes (default DefaultILPMaxNodes), so that a
	// plan does not depend on the machine's load.
	ILPMaxNodes int
	// ILPTimeLimit is CBC's wall-clock safety net per solve (default
	// DefaultILPTimeLimit); a solve it stops is reported as load-dependent
	// (Outcome "time-limit" or "time-limit-fallback-bfd").
	ILPTimeLimit time.Duration
	// ILPRatioGap is CBC's relative optimality gap (default 0.01 = 1%).
	ILPRatioGap float64
}

// Default values of Options.
const (
	DefaultAlpha        = 0.8
	DefaultBeta         = 0.2
	DefaultILPMaxNodes  = 100
	DefaultILPTimeLimit = 2 * time.Second
	DefaultILPRatioGap  = 0.01
)

// withDefaults fills in zero fields and validates.
func (o Options) withDefaults() (Options, error) {
	switch {
	case o.Alpha == 0 && o.Beta == 0:
		o.Alpha, o.Beta = DefaultAlpha, DefaultBeta
	case o.Beta == 0:
		o.Beta = 1 - o.Alpha
	case o.Alpha == 0:
		o.Alpha = 1 - o.Beta
	}
	if o.Alpha < 0 || o.Beta < 0 || o.Alpha+o.Beta < 1-1e-9 || o.Alpha+o.Beta > 1+1e-9 {
		return o, fmt.Errorf("placement: alpha %g + beta %g must be 1, both >= 0", o.Alpha, o.Beta)
	}
	if o.ILPMaxNodes == 0 {
		o.ILPMaxNodes = DefaultILPMaxNodes
	}
	if o.ILPMaxNodes < 0 {
		return o, fmt.Errorf("placement: negative ILP node limit %d", o.ILPMaxNodes)
	}
	if o.ILPTimeLimit == 0 {
		o.ILPTimeLimit = DefaultILPTimeLimit
	}
	if o.ILPTimeLimit < 0 {
		return o, fmt.Errorf("placement: negative ILP time limit %v", o.ILPTimeLimit)
	}
	if o.ILPRatioGap == 0 {
		o.ILPRatioGap = DefaultILPRatioGap
	}
	if o.ILPRatioGap < 0 || o.ILPRatioGap >= 1 {
		return o, fmt.Errorf("placement: ILP ratio gap %g not in [0, 1)", o.ILPRatioGap)
	}
	return o, nil
}

// Factory builds a policy from (already defaulted and validated) options.
type Factory func(Options) Policy

var (
	regMu    sync.RWMutex
	registry = map[string]Factory{}
)

// Register adds a policy under name. It panics if name is empty or taken;
// call it from init.
func Register(name string, f Factory) {
	regMu.Lock()
	defer regMu.Unlock()
	if name == "" || f == nil {
		panic("placement: Register with empty name or nil factory")
	}
	if _, dup := registry[name]; dup {
		panic("placement: policy registered twice: " + name)
	}
	registry[name] = f
}

// New builds the named policy with opts (zero fields take defaults).
func New(name string, opts Options) (Policy, error) {
	regMu.RLock()
	f, ok := registry[name]
	regMu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("placement: unknown policy %q (known: %v)", name, Names())
	}
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	return f(o), nil
}

// Get returns the named policy with default options.
func Get(name string) (Policy, bool) {
	p, err := New(name, Options{})
	return p, err == nil
}

// Names lists the registered policies, sorted.
func Names() []string {
	regMu.RLock()
	defer regMu.RUnlock()
	names := make([]string, 0, len(registry))
	for n := range registry {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}
