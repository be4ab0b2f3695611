package clusterspec

import (
	"fmt"
	"strings"
	"testing"
)

func TestThesis14(t *testing.T) {
	c := Thesis14()
	if len(c.Agents) != 14 {
		t.Fatalf("thesis14 has %d agents, want 14", len(c.Agents))
	}
	var cpus, mem, price float64
	for _, a := range c.Agents {
		cpus += a.CPUs
		mem += a.MemMB
		price += a.PricePerHour
	}
	if cpus != 6*4+5*8+3*12 || mem != (6*16+5*32+3*48)*1024 {
		t.Errorf("totals %g cpus %g MiB", cpus, mem)
	}
	if PriceMicroUSD(price) != PriceMicroUSD(6*0.24+5*0.48+3*0.72) {
		t.Errorf("price %g", price)
	}
	if got := c.Agents[13].AllAttributes(); got["instance_type"] != "m.3xlarge" || got["price"] != "0.72" || got["location"] != "cloud" {
		t.Errorf("attributes %v", got)
	}
}

func TestParse(t *testing.T) {
	cases := []struct {
		name, in, wantErr string
		agents            int
	}{
		{"groups", `{"name":"x","groups":[{"count":2,"cpus":4,"memMB":1024,"pricePerHour":0.1,"instanceType":"a"}]}`, "", 2},
		{"mixed", `{"agents":[{"id":"a1","cpus":2,"memMB":512,"pricePerHour":0,"location":"local"}],"groups":[{"count":1,"cpus":4,"memMB":1024,"pricePerHour":0.1,"instanceType":"a"}]}`, "", 2},
		{"empty", `{"name":"x"}`, "at least one agent", 0},
		{"unknown field", `{"agentz":[]}`, "unknown field", 0},
		// Named where it is, with the keys known there: `unknown field
		// "name"` alone read as wrong beside the top level's name.
		{"unknown agent field", `{"name":"x","agents":[{"id":"a","cpus":1,"memMB":1},{"name":"b","cpus":1,"memMB":1}]}`, "agents[1].name: unknown field (known here: id, hostname, cpus,", 0},
		{"wrong type", `{"agents":[{"id":"a","cpus":1,"memMB":1},{"id":"b","cpus":"4","memMB":1}]}`, "agents[1].cpus: want a float64, got a JSON string", 0},
		{"unknown group field", `{"groups":[{"count":1,"cpus":4,"memMB":1,"price":1}]}`, "groups[0].price: unknown field (known here: count,", 0},
		{"zero count", `{"groups":[{"count":0,"cpus":4,"memMB":1}]}`, "count", 0},
		{"huge count", `{"groups":[{"count":100000000,"cpus":4,"memMB":1}]}`, "count", 0},
		{"negative cpus", `{"agents":[{"cpus":-1,"memMB":1}]}`, "cpus", 0},
		{"bad location", `{"agents":[{"cpus":1,"memMB":1,"location":"mars"}]}`, "location", 0},
		{"dup id", `{"agents":[{"id":"a","cpus":1,"memMB":1},{"id":"a","cpus":1,"memMB":1}]}`, "used twice", 0},
		{"trailing", `{"agents":[{"cpus":1,"memMB":1}]} {}`, "trailing", 0},
		{"not json", `cpus=4`, "decode", 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := ParseBytes([]byte(tc.in))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want it to mention %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(c.Agents) != tc.agents {
				t.Fatalf("%d agents, want %d", len(c.Agents), tc.agents)
			}
		})
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"groups":[{"count":2,"cpus":4,"memMB":1024,"pricePerHour":0.1,"instanceType":"a"}]}`))
	f.Add([]byte(`{"agents":[{"id":"a1","cpus":2,"memMB":512}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := ParseBytes(b)
		if err != nil {
			return
		}
		if len(c.Agents) == 0 || len(c.Agents) > MaxAgents {
			t.Fatalf("accepted a cluster of %d agents", len(c.Agents))
		}
		for _, a := range c.Agents {
			if a.CPUs < 1 || a.MemMB < 1 || a.ID == "" {
				t.Fatalf("accepted a bad agent %+v", a)
			}
		}
	})
}

// TestAttributesBounded: a group's attributes are copied to each of its
// agents, so their number is bounded per agent and in all (a 4 KB file of
// 300 attributes x 100000 agents took 2 GB and 14 s).
func TestAttributesBounded(t *testing.T) {
	attrs := func(n int) string {
		var b strings.Builder
		for i := 0; i < n; i++ {
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, `"k%d":"v"`, i)
		}
		return "{" + b.String() + "}"
	}
	for _, c := range []struct {
		in   string
		want string // "" accepted
	}{
		{`{"groups":[{"count":100000,"cpus":1,"memMB":1,"attributes":` + attrs(300) + `}]}`, "groups[0].attributes: at most 64"},
		{`{"groups":[{"count":100000,"cpus":1,"memMB":1,"attributes":` + attrs(11) + `}]}`, "more than 1000000 attributes"},
		{`{"agents":[{"cpus":1,"memMB":1,"attributes":` + attrs(65) + `}]}`, "agents[0].attributes: at most 64"},
		{`{"groups":[{"count":1000,"cpus":1,"memMB":1,"attributes":` + attrs(64) + `}]}`, ""},
	} {
		_, err := ParseBytes([]byte(c.in))
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%.80s: %v, want %q", c.in, err, c.want)
		}
	}
}
