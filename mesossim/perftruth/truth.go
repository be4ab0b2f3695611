package perftruth

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"sort"
	"strings"
)

// Cluster-wide constants of the truth (not per signature).
const (
	// LocalShuffleMBps and RemoteShuffleMBps are the per-core rates at
	// which a shuffle block is fetched from the same agent and over the
	// network.
	LocalShuffleMBps  = 100.0
	RemoteShuffleMBps = 25.0
	// Contention is the slowdown of fully CPU-bound work on a fully used
	// agent; it grows linearly from ContentionFrom utilisation.
	Contention     = 0.3
	ContentionFrom = 0.5
	// MaxCrowded caps the executors per agent that Crowding counts.
	MaxCrowded = 16
	// DefaultNoise is the log-normal spread of run times around the
	// formula when the file does not set one.
	DefaultNoise = 0.05
)

// Params are one signature's hidden performance parameters.
type Params struct {
	// StartupSeconds is the fixed cost of the application (driver,
	// executors registering, job planning).
	StartupSeconds float64 `json:"startupSeconds"`
	// SerialSecondsPerGB is work that does not parallelise (driver-side
	// steps, stage barriers), per GB of input and iteration.
	SerialSecondsPerGB float64 `json:"serialSecondsPerGB"`
	// CoreSecondsPerGB is the parallel work per GB of input and iteration
	// on one core.
	CoreSecondsPerGB float64 `json:"coreSecondsPerGB"`
	// Scaling in (0, 1]: the parallel part runs in work / cores^Scaling
	// (1 = perfect scaling).
	Scaling float64 `json:"scaling"`
	// ShuffleRatio is the shuffle per GB of input and iteration (GB).
	ShuffleRatio float64 `json:"shuffleRatio"`
	// CPUBound in [0, 1] scales the contention of a busy agent.
	CPUBound float64 `json:"cpuBound"`
	// Crowding is the slowdown per extra executor of the job on its most
	// crowded agent (they share its disks and memory bandwidth).
	Crowding float64 `json:"crowding"`
	// Noise is the log-normal spread of a run around the formula (0 =
	// exact). Negative means DefaultNoise.
	Noise float64 `json:"noise"`
}

// Ranges Derive draws a signature's parameters from (uniform unless said).
var (
	StartupRange  = [2]float64{5, 20}
	SerialRange   = [2]float64{0.2, 2}
	CoreSecRange  = [2]float64{20, 120}
	ScalingRange  = [2]float64{0.75, 1}
	ShuffleRange  = [2]float64{0, 2} // 2 x u^2: most jobs shuffle little
	CPUBoundRange = [2]float64{0.2, 1}
	CrowdingRange = [2]float64{0, 0.03}
)

// Signature is the key of a truth: an application resource and its main
// class.
func Signature(appResource, mainClass string) string {
	return appResource + "#" + mainClass
}

// Derive draws the parameters of a signature no file lists, from a hash of
// it: the same signature always gets the same parameters.
func Derive(sig string) Params {
	h := fnv.New64a()
	h.Write([]byte(sig))
	s := h.Sum64()
	// splitmix64 steps from the hash: independent uniforms in [0, 1).
	next := func() float64 {
		s += 0x9e3779b97f4a7c15
		z := s
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
		z = (z ^ (z >> 27)) * 0x94d049bb133111eb
		z ^= z >> 31
		return float64(z>>11) / (1 << 53)
	}
	in := func(r [2]float64, u float64) float64 { return r[0] + (r[1]-r[0])*u }
	u := next()
	return Params{
		StartupSeconds:     in(StartupRange, next()),
		SerialSecondsPerGB: in(SerialRange, next()),
		CoreSecondsPerGB:   in(CoreSecRange, next()),
		Scaling:            in(ScalingRange, next()),
		ShuffleRatio:       in(ShuffleRange, u*u),
		CPUBound:           in(CPUBoundRange, next()),
		Crowding:           in(CrowdingRange, next()),
		Noise:              -1,
	}
}

// Validate checks the parameters; the error names the field.
func (p Params) Validate() error {
	check := func(field string, v, lo, hi float64) error {
		if math.IsNaN(v) || v < lo || v > hi {
			return fmt.Errorf("%s: %v not in [%g, %g]", field, v, lo, hi)
		}
		return nil
	}
	for _, c := range []struct {
		f         string
		v, lo, hi float64
	}{
		{"startupSeconds", p.StartupSeconds, 0, 86400},
		{"serialSecondsPerGB", p.SerialSecondsPerGB, 0, 86400},
		{"coreSecondsPerGB", p.CoreSecondsPerGB, 0, 1e7},
		{"scaling", p.Scaling, 0.05, 1},
		{"shuffleRatio", p.ShuffleRatio, 0, 1000},
		{"cpuBound", p.CPUBound, 0, 1},
		{"crowding", p.Crowding, 0, 1},
		{"noise", p.Noise, -1, 2},
	} {
		if err := check(c.f, c.v, c.lo, c.hi); err != nil {
			return err
		}
	}
	return nil
}

// Placement is where a run's executors are, as the truth sees it.
type Placement struct {
	// PerAgent is the job's executors on each agent that holds any.
	PerAgent []int
	// ExecutorCores is each executor's cores (>= 1 counted).
	ExecutorCores float64
	// BusiestLoad is the highest cpu utilisation (0 to 1) of an agent
	// holding the job, its own executors included.
	BusiestLoad float64
}

// Executors is the total of PerAgent.
func (pl Placement) Executors() int {
	n := 0
	for _, k := range pl.PerAgent {
		n += max(0, k)
	}
	return n
}

// CrossShare is the share of all-to-all shuffle blocks crossing agents:
// 1 - sum (n_i / E)^2.
func (pl Placement) CrossShare() float64 {
	e := pl.Executors()
	if e == 0 {
		return 0
	}
	same := 0.0
	for _, k := range pl.PerAgent {
		if k > 0 {
			f := float64(k) / float64(e)
			same += f * f
		}
	}
	return max(0, 1-same)
}

// Crowded is the most executors of the job on one agent.
func (pl Placement) Crowded() int {
	m := 0
	for _, k := range pl.PerAgent {
		m = max(m, k)
	}
	return m
}

// Run is one run: the job's data and where it ran.
type Run struct {
	// InputGB is the input the job reads (> 0); Iterations its passes
	// over it (>= 1).
	InputGB    float64
	Iterations int
	Placement
	// Seed picks the run's noise (e.g. a hash of the driver task id):
	// the same run always takes the same time.
	Seed uint64
}

// Breakdown is how Seconds arrived at its answer.
type Breakdown struct {
	Startup, Serial, Parallel, Shuffle float64
	// Slowdown is the contention factor on the parallel part, Crowd the
	// crowding factor on the parallel and shuffle parts, Noise the run's
	// noise factor on the total.
	Slowdown, Crowd, Noise float64
	CrossShare             float64
}

// Total is the run time in seconds.
func (b Breakdown) Total() float64 {
	return (b.Startup + b.Serial + b.Parallel + b.Shuffle) * b.Noise
}

// Seconds is the run's time: with I = input x iterations, C = executors x
// cores, r the crossing share, u the busiest agent's load and k the most
// executors on one agent,
//
//	startup  = StartupSeconds
//	serial   = SerialSecondsPerGB x I
//	parallel = CoreSecondsPerGB x I / C^Scaling x slowdown x crowd
//	shuffle  = ShuffleRatio x I x 1000 x ((1 - r) / LocalShuffleMBps + r / RemoteShuffleMBps) / C x crowd
//	slowdown = 1 + Contention x CPUBound x clamp((u - ContentionFrom) / (1 - ContentionFrom), 0, 1)
//	crowd    = 1 + Crowding x (min(k, MaxCrowded) - 1)
//	total    = (startup + serial + parallel + shuffle) x exp(Noise x z), z ~ N(0, 1) from the seed
//
// A run without executors counts as one executor on one idle agent.
func (p Params) Seconds(r Run) Breakdown {
	pl := r.Placement
	if pl.Executors() == 0 {
		pl.PerAgent = []int{1}
	}
	size := max(r.InputGB, 1e-6) * float64(max(1, r.Iterations))
	cores := float64(pl.Executors()) * max(1, pl.ExecutorCores)
	x := (pl.BusiestLoad - ContentionFrom) / (1 - ContentionFrom)
	b := Breakdown{
		Startup:    p.StartupSeconds,
		Serial:     p.SerialSecondsPerGB * size,
		Slowdown:   1 + Contention*p.CPUBound*min(1, max(0, x)),
		Crowd:      1 + p.Crowding*float64(min(pl.Crowded(), MaxCrowded)-1),
		CrossShare: pl.CrossShare(),
		Noise:      1,
	}
	b.Parallel = p.CoreSecondsPerGB * size / math.Pow(cores, max(0.05, p.Scaling)) * b.Slowdown * b.Crowd
	b.Shuffle = p.ShuffleRatio * size * 1000 * ((1-b.CrossShare)/LocalShuffleMBps + b.CrossShare/RemoteShuffleMBps) / cores * b.Crowd
	sigma := p.Noise
	if sigma < 0 {
		sigma = DefaultNoise
	}
	if sigma > 0 {
		b.Noise = math.Exp(sigma * normal(r.Seed))
	}
	return b
}

// normal is a standard normal deviate from a seed (Box-Muller on two
// splitmix64 draws), clamped to +-3.
func normal(seed uint64) float64 {
	next := func() float64 {
		seed += 0x9e3779b97f4a7c15
		z := seed
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
		z = (z ^ (z >> 27)) * 0x94d049bb133111eb
		z ^= z >> 31
		return (float64(z>>11) + 0.5) / (1 << 53)
	}
	u1, u2 := next(), next()
	z := math.Sqrt(-2*math.Log(u1)) * math.Cos(2*math.Pi*u2)
	return min(3, max(-3, z))
}

// HashSeed is a run seed from a string (e.g. a driver task id).
func HashSeed(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}

// Truth is a set of signatures' parameters, the rest derived.
type Truth struct {
	// Signatures by Signature(appResource, mainClass).
	Signatures map[string]Params
	// Noise, if >= 0, overrides the noise of derived signatures.
	Noise float64
}

// Default is the truth without a file: every signature derived.
func Default() *Truth { return &Truth{Noise: -1} }

// For is the parameters of a signature: the file's, else derived.
func (t *Truth) For(appResource, mainClass string) Params {
	sig := Signature(appResource, mainClass)
	if p, ok := t.Signatures[sig]; ok {
		return p
	}
	p := Derive(sig)
	if t.Noise >= 0 {
		p.Noise = t.Noise
	}
	return p
}

// File is the JSON truth file:
//
//	{"noise": 0.05,
//	 "signatures": [{"appResource": "local:///jobs/etl.jar", "mainClass": "com.example.ETL",
//	                 "startupSeconds": 10, "serialSecondsPerGB": 1, "coreSecondsPerGB": 60,
//	                 "scaling": 0.9, "shuffleRatio": 0.5, "cpuBound": 0.7, "crowding": 0.01}]}
//
// A listed signature's fields left out take the values Derive draws for
// it; "noise" (optional) is the default noise of every signature.
type File struct {
	Noise      *float64        `json:"noise,omitempty"`
	Signatures []FileSignature `json:"signatures"`
}

// FileSignature is one signature of a truth file.
type FileSignature struct {
	AppResource        string   `json:"appResource"`
	MainClass          string   `json:"mainClass"`
	StartupSeconds     *float64 `json:"startupSeconds,omitempty"`
	SerialSecondsPerGB *float64 `json:"serialSecondsPerGB,omitempty"`
	CoreSecondsPerGB   *float64 `json:"coreSecondsPerGB,omitempty"`
	Scaling            *float64 `json:"scaling,omitempty"`
	ShuffleRatio       *float64 `json:"shuffleRatio,omitempty"`
	CPUBound           *float64 `json:"cpuBound,omitempty"`
	Crowding           *float64 `json:"crowding,omitempty"`
	Noise              *float64 `json:"noise,omitempty"`
}

// Parse reads a truth file; errors name the field (e.g.
// "signatures[1].scaling").
func Parse(b []byte) (*Truth, error) {
	var f File
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("perf truth: %w", err)
	}
	if len(bytes.TrimSpace(b[dec.InputOffset():])) > 0 {
		return nil, fmt.Errorf("perf truth: more after the JSON object; the file holds one object")
	}
	t := &Truth{Signatures: map[string]Params{}, Noise: -1}
	if f.Noise != nil {
		if v := *f.Noise; math.IsNaN(v) || v < 0 || v > 2 {
			return nil, fmt.Errorf("perf truth: noise: %v not in [0, 2]", v)
		}
		t.Noise = *f.Noise
	}
	for i, s := range f.Signatures {
		if s.AppResource == "" && s.MainClass == "" {
			return nil, fmt.Errorf("perf truth: signatures[%d]: appResource and mainClass empty", i)
		}
		if strings.Contains(s.MainClass, "#") {
			// No Java class name holds one, and the signature joins the two
			// with it: "a#b" + "c" and "a" + "b#c" would be one signature.
			return nil, fmt.Errorf("perf truth: signatures[%d].mainClass: %q holds '#', which no Java class name does", i, s.MainClass)
		}
		sig := Signature(s.AppResource, s.MainClass)
		if _, dup := t.Signatures[sig]; dup {
			return nil, fmt.Errorf("perf truth: signatures[%d]: %s listed twice", i, sig)
		}
		p := Derive(sig)
		p.Noise = t.Noise
		set := func(dst *float64, v *float64) {
			if v != nil {
				*dst = *v
			}
		}
		set(&p.StartupSeconds, s.StartupSeconds)
		set(&p.SerialSecondsPerGB, s.SerialSecondsPerGB)
		set(&p.CoreSecondsPerGB, s.CoreSecondsPerGB)
		set(&p.Scaling, s.Scaling)
		set(&p.ShuffleRatio, s.ShuffleRatio)
		set(&p.CPUBound, s.CPUBound)
		set(&p.Crowding, s.Crowding)
		set(&p.Noise, s.Noise)
		if err := p.Validate(); err != nil {
			return nil, fmt.Errorf("perf truth: signatures[%d].%w", i, err)
		}
		t.Signatures[sig] = p
	}
	return t, nil
}

// Names lists the file's signatures, sorted.
func (t *Truth) Names() []string {
	out := make([]string, 0, len(t.Signatures))
	for s := range t.Signatures {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}
