package probe

import (
	"bufio"
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestNormalizeReplacesIdsAndVolatileValues(t *testing.T) {
	n := &normalizer{masterID: "m-1", agents: map[string]string{"m-1-S0": "rm-a1"}, frameworks: map[string]string{"m-1-0000": "legacy"}}
	var in any
	if err := json.Unmarshal([]byte(`{"offers":[{"id":{"value":"m-1-O17"},"agent_id":{"value":"m-1-S0"},"framework_id":{"value":"m-1-0000"},
		"hostname":"rm-a1","url":{"address":{"port":5051}},"resources":[{"name":"cpus","scalar":{"value":4}}]}],
		"status":{"uuid":"abc","timestamp":1.5,"message":"Agent m-1-S0 disconnected","container_status":{"container_id":{"value":"x"}}},
		"master_info":{"id":"m-1","pid":"master@1.2.3.4:5050"}}`), &in); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(n.value(in)); err != nil {
		t.Fatal(err)
	}
	got := buf.Bytes()
	for _, want := range []string{`"id":{"value":"<offer>"}`, `"agent_id":{"value":"<agent:rm-a1>"}`, `"framework_id":{"value":"<framework:legacy>"}`,
		`"hostname":"rm-a1"`, `"port":"<port>"`, `"value":4`, `"uuid":"<uuid>"`, `"timestamp":"<time>"`, `"message":"Agent <agent:rm-a1> disconnected"`,
		`"container_id":"<container>"`, `"id":"<master>"`, `"pid":"<pid>"`} {
		if !strings.Contains(string(got), want) {
			t.Errorf("normalised %s lacks %s", got, want)
		}
	}
}

func TestCompareShowsTheDifferingLines(t *testing.T) {
	a := &Record{Steps: []Step{{Name: "s1", Events: []any{map[string]any{"a": 1, "b": 2}}}, {Name: "only-a"}}}
	b := &Record{Steps: []Step{{Name: "s1", Events: []any{map[string]any{"a": 1, "b": 3}}}, {Name: "only-b"}}}
	d := strings.Join(Compare(a, b), "\n")
	for _, want := range []string{`step "s1" differs`, `-  "b": 2`, `+  "b": 3`, `step "only-a": missing`, `step "only-b": not in the reference`} {
		if !strings.Contains(d, want) {
			t.Errorf("comparison lacks %q:\n%s", want, d)
		}
	}
	if d := Compare(a, a); len(d) != 0 {
		t.Errorf("a record differs from itself: %v", d)
	}
}

func TestCompareIgnoresTheOrderOfResources(t *testing.T) {
	r := func(key string, names ...string) *Record {
		var list []any
		for _, n := range names {
			list = append(list, map[string]any{"name": n})
		}
		return &Record{Steps: []Step{{Name: "s", Events: []any{map[string]any{key: list}}}}}
	}
	if d := Compare(r("total_resources", "cpus", "ports"), r("total_resources", "ports", "cpus")); len(d) != 0 {
		t.Errorf("the order of resources is compared: %v", d)
	}
	if d := Compare(r("attributes", "cpus", "ports"), r("attributes", "ports", "cpus")); len(d) != 1 {
		t.Errorf("the order of attributes is not compared: %v", d)
	}
}

// FuzzRecordIO: the event stream reader never panics and never returns
// an event that is not a JSON object.
func FuzzRecordIO(f *testing.F) {
	f.Add([]byte("20\n{\"type\":\"HEARTBEAT\"}"))
	f.Add([]byte("5\n{}{}x\n-1\n"))
	f.Add([]byte("99999999999\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		fw := &framework{name: "fuzz", notify: make(chan struct{}, 1)}
		fw.read(bufio.NewReader(bytes.NewReader(b)))
		for _, ev := range fw.queue {
			if ev == nil {
				t.Fatalf("nil event from %q", b)
			}
		}
		if fw.ended == nil {
			t.Fatalf("reading %q ended without an error", b)
		}
	})
}
