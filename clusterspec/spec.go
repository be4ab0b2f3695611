package clusterspec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"reflect"
	"strings"

	"github.com/sparkpack/sparkpack/internal/strictjson"
)

// Agent is one agent of a cluster spec.
type Agent struct {
	ID           string            `json:"id"`
	Hostname     string            `json:"hostname"`
	CPUs         float64           `json:"cpus"`
	MemMB        float64           `json:"memMB"`
	DiskMB       float64           `json:"diskMB,omitempty"`
	PricePerHour float64           `json:"pricePerHour"`
	InstanceType string            `json:"instanceType,omitempty"`
	Location     string            `json:"location,omitempty"` // "local" or "cloud" (default)
	Attributes   map[string]string `json:"attributes,omitempty"`
}

// Cluster is a named list of agents.
type Cluster struct {
	Name   string  `json:"name"`
	Agents []Agent `json:"agents"`
}

// Group is a shorthand in cluster files: Count identical agents.
type Group struct {
	Count        int               `json:"count"`
	CPUs         float64           `json:"cpus"`
	MemMB        float64           `json:"memMB"`
	DiskMB       float64           `json:"diskMB,omitempty"`
	PricePerHour float64           `json:"pricePerHour"`
	InstanceType string            `json:"instanceType"`
	Location     string            `json:"location,omitempty"`
	Attributes   map[string]string `json:"attributes,omitempty"`
}

type file struct {
	Name   string  `json:"name"`
	Agents []Agent `json:"agents"`
	Groups []Group `json:"groups"`
}

// MaxAgents bounds a cluster file, so that a typo cannot ask for a billion agents.
const MaxAgents = 100000

// MaxAttributes bounds an agent's attributes, and MaxClusterAttributes
// those of the whole cluster: a group copies its attributes to each of its
// agents, so a 4 KB file (300 attributes, count 100000) would otherwise
// ask for 30 million map entries (2 GB, 14 s).
const (
	MaxAttributes        = 64
	MaxClusterAttributes = 1_000_000
)

// Thesis14 is the 14-agent cluster of the thesis' experiments:
// 6 x (4 cpu, 16 GiB, $0.24/h), 5 x (8 cpu, 32 GiB, $0.48/h),
// 3 x (12 cpu, 48 GiB, $0.72/h), all in the cloud.
func Thesis14() Cluster {
	c, err := fromGroups("thesis14", []Group{
		{Count: 6, CPUs: 4, MemMB: 16384, DiskMB: 100000, PricePerHour: 0.24, InstanceType: "m.xlarge"},
		{Count: 5, CPUs: 8, MemMB: 32768, DiskMB: 100000, PricePerHour: 0.48, InstanceType: "m.2xlarge"},
		{Count: 3, CPUs: 12, MemMB: 49152, DiskMB: 100000, PricePerHour: 0.72, InstanceType: "m.3xlarge"},
	}, nil)
	if err != nil {
		panic(err) // the built-in spec is valid by construction
	}
	return c
}

// Named returns a built-in cluster by name, or loads a JSON file when name
// is a path. The empty name means thesis14.
func Named(name string) (Cluster, error) {
	switch name {
	case "", "thesis14":
		return Thesis14(), nil
	}
	f, err := os.Open(name)
	if err != nil {
		return Cluster{}, fmt.Errorf("cluster %q is neither a built-in cluster (thesis14) nor a readable file: %w", name, err)
	}
	defer f.Close()
	c, err := Parse(io.LimitReader(f, 16<<20))
	if err != nil {
		return Cluster{}, fmt.Errorf("cluster file %s: %w", name, err)
	}
	if c.Name == "" {
		c.Name = name
	}
	return c, nil
}

// Parse reads a cluster file: {"name": ..., "agents": [...], "groups": [...]}.
// Agents listed one by one and groups of identical agents may be mixed.
// Unknown fields are errors.
func Parse(r io.Reader) (Cluster, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return Cluster{}, fmt.Errorf("read cluster JSON: %w", err)
	}
	var f file
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		// encoding/json names a wrong type's field without the element:
		// say which.
		var ute *json.UnmarshalTypeError
		if errors.As(err, &ute) {
			if p := strictjson.TypePath(data, ute.Field, ute.Value); p != "" {
				return Cluster{}, fmt.Errorf("decode cluster JSON: %s: want a %s, got a JSON %s", p, ute.Type, ute.Value)
			}
		}
		// encoding/json names an unknown key alone: say where it is.
		if path, known := strictjson.UnknownField(data, reflect.TypeFor[file]()); path != "" && strings.HasPrefix(err.Error(), "json: unknown field ") {
			return Cluster{}, fmt.Errorf("decode cluster JSON: %s: unknown field (known here: %s)", path, strings.Join(known, ", "))
		}
		return Cluster{}, fmt.Errorf("decode cluster JSON: %w", err)
	}
	if dec.More() {
		return Cluster{}, fmt.Errorf("decode cluster JSON: trailing data after the object")
	}
	return fromGroups(f.Name, f.Groups, f.Agents)
}

// ParseBytes is Parse on a byte slice.
func ParseBytes(b []byte) (Cluster, error) { return Parse(bytes.NewReader(b)) }

func fromGroups(name string, groups []Group, agents []Agent) (Cluster, error) {
	c := Cluster{Name: name}
	total, attrs := len(agents), 0
	for i, a := range agents {
		if len(a.Attributes) > MaxAttributes {
			return Cluster{}, fmt.Errorf("agents[%d].attributes: at most %d, got %d", i, MaxAttributes, len(a.Attributes))
		}
		attrs += len(a.Attributes)
	}
	for i, g := range groups {
		if g.Count < 1 || g.Count > MaxAgents {
			return Cluster{}, fmt.Errorf("groups[%d].count must be between 1 and %d, got %d", i, MaxAgents, g.Count)
		}
		total += g.Count
		if total > MaxAgents {
			return Cluster{}, fmt.Errorf("a cluster may have at most %d agents", MaxAgents)
		}
		if len(g.Attributes) > MaxAttributes {
			return Cluster{}, fmt.Errorf("groups[%d].attributes: at most %d, got %d", i, MaxAttributes, len(g.Attributes))
		}
		attrs += g.Count * len(g.Attributes)
		if attrs > MaxClusterAttributes {
			return Cluster{}, fmt.Errorf("groups[%d]: count x attributes makes more than %d attributes in the cluster; give fewer attributes or fewer agents", i, MaxClusterAttributes)
		}
	}
	c.Agents = append(c.Agents, agents...)
	n := len(c.Agents)
	for _, g := range groups {
		for k := 0; k < g.Count; k++ {
			n++
			c.Agents = append(c.Agents, Agent{
				ID:           fmt.Sprintf("%s-S%d", name, n-1),
				Hostname:     fmt.Sprintf("agent-%02d", n),
				CPUs:         g.CPUs,
				MemMB:        g.MemMB,
				DiskMB:       g.DiskMB,
				PricePerHour: g.PricePerHour,
				InstanceType: g.InstanceType,
				Location:     g.Location,
				Attributes:   copyMap(g.Attributes),
			})
		}
	}
	if len(c.Agents) == 0 {
		return Cluster{}, fmt.Errorf("a cluster needs at least one agent (agents or groups)")
	}
	seenID := map[string]bool{}
	seenHost := map[string]bool{}
	for i := range c.Agents {
		a := &c.Agents[i]
		if a.ID == "" {
			a.ID = fmt.Sprintf("%s-S%d", name, i)
		}
		if a.Hostname == "" {
			a.Hostname = fmt.Sprintf("agent-%02d", i+1)
		}
		if a.Location == "" {
			a.Location = "cloud"
		}
		if err := a.validate(); err != nil {
			return Cluster{}, fmt.Errorf("agents[%d]: %w", i, err)
		}
		if seenID[a.ID] {
			return Cluster{}, fmt.Errorf("agents[%d].id %q is used twice", i, a.ID)
		}
		if seenHost[a.Hostname] {
			return Cluster{}, fmt.Errorf("agents[%d].hostname %q is used twice", i, a.Hostname)
		}
		seenID[a.ID], seenHost[a.Hostname] = true, true
	}
	return c, nil
}

func (a Agent) validate() error {
	if strings.ContainsAny(a.ID, " \t\n/") || len(a.ID) > 200 {
		return fmt.Errorf("id %q must be at most 200 characters without spaces or slashes", a.ID)
	}
	for _, q := range []struct {
		name string
		v    float64
		max  float64
	}{{"cpus", a.CPUs, 1e5}, {"memMB", a.MemMB, 1e9}, {"diskMB", a.DiskMB, 1e12}, {"pricePerHour", a.PricePerHour, 1e6}} {
		if math.IsNaN(q.v) || q.v < 0 || q.v > q.max {
			return fmt.Errorf("%s must be between 0 and %g, got %g", q.name, q.max, q.v)
		}
	}
	if a.CPUs < 1 || a.MemMB < 1 {
		return fmt.Errorf("cpus and memMB must be at least 1 (got %g cpus, %g MiB)", a.CPUs, a.MemMB)
	}
	if a.Location != "local" && a.Location != "cloud" {
		return fmt.Errorf("location must be \"local\" or \"cloud\", got %q", a.Location)
	}
	return nil
}

// PriceMicroUSD converts a price per hour in dollars to integer micro-dollars.
func PriceMicroUSD(perHour float64) int64 { return int64(math.Round(perHour * 1e6)) }

// AllAttributes returns the agent's Mesos attributes: its own plus
// instance_type, price and location.
func (a Agent) AllAttributes() map[string]string {
	m := copyMap(a.Attributes)
	if m == nil {
		m = map[string]string{}
	}
	if a.InstanceType != "" {
		m["instance_type"] = a.InstanceType
	}
	m["price"] = fmt.Sprintf("%g", a.PricePerHour)
	m["location"] = a.Location
	return m
}

func copyMap(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
