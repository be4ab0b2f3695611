package mesossim

import (
	"net/http"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/clusterspec"
)

// TestActiveBill: the active bill counts an agent only while it holds a
// dynamic reservation: nothing before, growing while reserved, frozen
// after the unreserve.
func TestActiveBill(t *testing.T) {
	m, base := testMaster(t, Config{Cluster: clusterspec.Cluster{Name: "one", Agents: []clusterspec.Agent{{ID: "a1", Hostname: "a1", CPUs: 4, MemMB: 8192, PricePerHour: 3600}}}})
	time.Sleep(20 * time.Millisecond)
	if b := m.Bill(); b.ActiveUSD != 0 || b.TotalUSD <= 0 {
		t.Fatalf("before any reservation: active $%v (want 0), powered on $%v", b.ActiveUSD, b.TotalUSD)
	}
	res := `"resources":[{"name":"cpus","type":"SCALAR","scalar":{"value":2},"reservations":[{"type":"DYNAMIC","role":"r1"}]}]`
	if st := postOperator(t, base, `{"type":"RESERVE_RESOURCES","reserve_resources":{"agent_id":{"value":"a1"},`+res+`}}`); st != http.StatusAccepted {
		t.Fatalf("reserve: %d", st)
	}
	time.Sleep(20 * time.Millisecond)
	held := m.Bill().ActiveUSD
	if held <= 0 {
		t.Fatalf("while reserved: active $%v", held)
	}
	if st := postOperator(t, base, `{"type":"UNRESERVE_RESOURCES","unreserve_resources":{"agent_id":{"value":"a1"},`+res+`}}`); st != http.StatusAccepted {
		t.Fatalf("unreserve: %d", st)
	}
	after := m.Bill().ActiveUSD
	time.Sleep(20 * time.Millisecond)
	if again := m.Bill().ActiveUSD; again != after || after < held {
		t.Fatalf("after the unreserve the active bill went from $%v to $%v (while reserved $%v)", after, again, held)
	}
}
