package offers

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"

	"github.com/sparkpack/sparkpack/mesossim"
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

// frameworkBehind subscribes a framework in role "sparkpack" to an
// emulated master reached through the handler front makes of it (a proxy
// that holds or refuses calls), and returns the master, the framework and
// the framework's context.
func frameworkBehind(t *testing.T, front func(master http.Handler) http.Handler) (*mesossim.Master, *Framework, context.Context) {
	t.Helper()
	m, quiet := emulator(t)
	_, addr := listenOn(t, front(m.Handler()), "127.0.0.1:0")
	ep, err := NewEndpoint(addr, "", "", WithLogger(quiet))
	if err != nil {
		t.Fatal(err)
	}
	fw, _, obs, ctx := runFramework(t, ep, FrameworkConfig{Role: "sparkpack"}, quiet)
	waitUp(t, obs.ups, "http://"+addr)
	return m, fw, ctx
}

// TestRoleUpdatesLeaveTheLastRoleSet: two job roles dropped at once (two
// jobs ending together in offer mode) each send UPDATE_FRAMEWORK; the
// first is held on its way to the master while the second is made. The
// master must end with the framework's own role only: the updates are
// made and sent one at a time, so no stale role set arrives last (it did:
// TestE2EOfferModeReservations found an ended job's role left on the
// framework).
func TestRoleUpdatesLeaveTheLastRoleSet(t *testing.T) {
	var h *heldUpdates
	m, fw, ctx := frameworkBehind(t, func(master http.Handler) http.Handler {
		h = &heldUpdates{next: master, held: make(chan struct{}), more: make(chan struct{})}
		return h
	})

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

// refusedOnce passes scheduler calls on to the master, but answers 400 to
// the next call of type refuse (once), as a master refusing it would;
// with accept set, the call reaches the master first and only its answer
// is a refusal (taken, but the answer says otherwise: a lost answer).
type refusedOnce struct {
	next   http.Handler
	mu     sync.Mutex
	refuse scheduler.Call_Type
	armed  bool
	accept bool
}

func (h *refusedOnce) arm(t scheduler.Call_Type, accept bool) {
	h.mu.Lock()
	h.refuse, h.armed, h.accept = t, true, accept
	h.mu.Unlock()
}

func (h *refusedOnce) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	var c scheduler.Call
	h.mu.Lock()
	refuse := h.armed && r.URL.Path == "/api/v1/scheduler" && c.Unmarshal(body) == nil && c.GetType() == h.refuse
	accept := h.accept
	if refuse {
		h.armed = false
	}
	h.mu.Unlock()
	if !refuse {
		h.next.ServeHTTP(w, r)
		return
	}
	if accept {
		h.next.ServeHTTP(httptest.NewRecorder(), r)
	}
	http.Error(w, "refused by the test", http.StatusBadRequest)
}

// TestAFailedAddRoleDoesNotRideAlong: on the emulator, taking on a job
// role fails, its UPDATE_FRAMEWORK refused, or taken but its REVIVE
// refused (the role then reached the master). Either way the role is
// not the framework's: it is not on the master, and the next update
// (another job's role taken on) does not carry it, nor is its handler
// kept. Before, the handler stayed registered and the role rode along in
// every update until the next operation on it.
func TestAFailedAddRoleDoesNotRideAlong(t *testing.T) {
	for _, tc := range []struct {
		name   string
		refuse scheduler.Call_Type
		accept bool
	}{
		{"update refused", scheduler.Call_UPDATE_FRAMEWORK, false},
		{"revive refused", scheduler.Call_REVIVE, false},
		{"update taken, answer lost", scheduler.Call_UPDATE_FRAMEWORK, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var h *refusedOnce
			m, fw, ctx := frameworkBehind(t, func(master http.Handler) http.Handler { h = &refusedOnce{next: master}; return h })
			onMaster := func() []string {
				for _, f := range m.Frameworks() {
					if f.Name == fw.cfg.Name {
						return f.Roles
					}
				}
				return nil
			}

			h.arm(tc.refuse, tc.accept)
			if err := fw.AddRole(ctx, "sparkpack-job-a", noRoleOffers{}); err == nil {
				t.Fatal("AddRole with its call refused: no error")
			}
			if got := fw.roles(); !slices.Equal(got, []string{"sparkpack"}) {
				t.Errorf("after the failed AddRole the framework holds roles %v; want [sparkpack]", got)
			}
			if got := onMaster(); !slices.Equal(got, []string{"sparkpack"}) {
				t.Errorf("after the failed AddRole the master has the framework in roles %v; want [sparkpack]", got)
			}
			if err := fw.AddRole(ctx, "sparkpack-job-b", noRoleOffers{}); err != nil {
				t.Fatal(err)
			}
			if got := onMaster(); !slices.Equal(got, []string{"sparkpack", "sparkpack-job-b"}) {
				t.Errorf("after another job's role was taken on the master has the framework in roles %v; want [sparkpack sparkpack-job-b]: the failed role rode along", got)
			}
		})
	}
}
