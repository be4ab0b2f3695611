package offers

import (
	"bytes"
	"io"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
)

// noRoleOffers is a RoleHandler that takes no offer.
type noRoleOffers struct{}

func (noRoleOffers) Offer(mesos.Offer) []mesos.Offer_Operation { return nil }
func (noRoleOffers) OperationStatus(mesos.OperationStatus)     {}

// heldUpdates passes scheduler calls on to the master, but holds the first
// UPDATE_FRAMEWORK call it is told to hold until another UPDATE_FRAMEWORK
// arrives (or a while has passed): the network reordering two updates.
type heldUpdates struct {
	next http.Handler
	mu   sync.Mutex
	hold bool // hold the next update
	// holding: an update has been held (later ones release it)
	holding bool
	held    chan struct{} // closed when the held call has arrived
	more    chan struct{} // closed when a later update arrives
	sent    [][]string    // the roles of each UPDATE_FRAMEWORK, in the order the master got them
}

func (h *heldUpdates) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	var c scheduler.Call
	if r.URL.Path != "/api/v1/scheduler" || c.Unmarshal(body) != nil || c.GetType() != scheduler.Call_UPDATE_FRAMEWORK {
		h.next.ServeHTTP(w, r)
		return
	}
	roles := c.UpdateFramework.FrameworkInfo.GetRoles()
	h.mu.Lock()
	hold := h.hold
	h.hold = false
	later := !hold && h.holding
	h.holding = h.holding || hold
	h.mu.Unlock()
	switch {
	case hold:
		close(h.held)
		select {
		case <-h.more:
		case <-time.After(300 * time.Millisecond): // serialised: no other update comes meanwhile
		}
	case later:
		select {
		case <-h.more:
		default:
			close(h.more)
		}
	}
	h.mu.Lock()
	h.sent = append(h.sent, roles)
	h.mu.Unlock()
	h.next.ServeHTTP(w, r)
}

// TestRoleUpdatesLeaveTheLastRoleSet: two job roles dropped at once (two
// jobs ending together in offer mode) each send UPDATE_FRAMEWORK; the
// first is held on its way to the master while the second is made. The
// master must end with the framework's own role only: the updates are
// made and sent one at a time, so no stale role set arrives last (it did:
// TestE2EOfferModeReservations found an ended job's role left on the
// framework).
func TestRoleUpdatesLeaveTheLastRoleSet(t *testing.T) {
	m, quiet := emulator(t)
	h := &heldUpdates{next: m.Handler(), held: make(chan struct{}), more: make(chan struct{})}
	_, addr := listenOn(t, h, "127.0.0.1:0")
	ep, err := NewEndpoint(addr, "", "", WithLogger(quiet))
	if err != nil {
		t.Fatal(err)
	}
	fw, _, obs, ctx := runFramework(t, ep, FrameworkConfig{Role: "sparkpack"}, quiet)
	waitUp(t, obs.ups, "http://"+addr)

	for _, r := range []string{"sparkpack-job-a", "sparkpack-job-b"} {
		if err := fw.AddRole(ctx, r, noRoleOffers{}); err != nil {
			t.Fatal(err)
		}
	}
	h.mu.Lock()
	h.hold = true
	h.mu.Unlock()
	errs := make(chan error, 2)
	go func() { errs <- fw.RemoveRole(ctx, "sparkpack-job-a") }()
	<-h.held // the first update (its role set read) is on its way
	go func() { errs <- fw.RemoveRole(ctx, "sparkpack-job-b") }()
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	h.mu.Lock()
	sent := h.sent
	h.mu.Unlock()
	if last := sent[len(sent)-1]; !slices.Equal(last, []string{"sparkpack"}) {
		t.Fatalf("updates reached the master with roles %v: the last is %v, want [sparkpack]", sent, last)
	}
	for _, f := range m.Frameworks() {
		if f.Name == fw.cfg.Name && !slices.Equal(f.Roles, []string{"sparkpack"}) {
			t.Fatalf("the master has the framework in roles %v, want [sparkpack]", f.Roles)
		}
	}
}
