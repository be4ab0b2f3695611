package offers

import (
	"reflect"
	"testing"
)

// FuzzDecodeAgents: a GET_AGENTS answer (the master's bytes) never panics
// the incremental decoder, and decoding it again with the first decode's
// agents to reuse gives the same agents.
func FuzzDecodeAgents(f *testing.F) {
	resp := generatedGetAgents()
	b, err := resp.Marshal()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add(b[:len(b)/2])
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		first, sums, prev, err := decodeAgentsReusing(b, nil)
		if err != nil {
			return
		}
		if len(sums) != len(first) {
			t.Fatalf("%d agents, %d sums", len(first), len(sums))
		}
		again, _, _, err := decodeAgentsReusing(b, prev)
		if err != nil || !reflect.DeepEqual(again, first) {
			t.Fatalf("second decode differs: %v", err)
		}
	})
}
