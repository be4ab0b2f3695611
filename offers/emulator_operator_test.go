package offers

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/sparkpack/sparkpack/mesossim"
)

// operatorOnEmulator serves an emulated master over HTTP for the test and
// returns it, its URL, its quiet logger, an operator API client, a context
// that ends after timeout (or with the test) and the agents it starts with.
func operatorOnEmulator(t *testing.T, timeout time.Duration) (*mesossim.Master, string, *logrus.Logger, *Operator, context.Context, []Agent) {
	t.Helper()
	m, quiet := emulator(t)
	srv := httptest.NewServer(m.Handler())
	t.Cleanup(srv.Close)
	ep, err := NewEndpoint(srv.URL, "", "")
	if err != nil {
		t.Fatal(err)
	}
	op := NewOperator(ep)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	t.Cleanup(cancel)
	raw, err := op.GetAgents(ctx)
	if err != nil {
		t.Fatal(err)
	}
	agents, _ := AgentsFromMesos(raw, nil)
	return m, srv.URL, quiet, op, ctx, agents
}

// heldFor is what Mesos shows reserved with jobID's label now, per agent
// (cpus, MiB).
func heldFor(t *testing.T, ctx context.Context, op *Operator, jobID string) map[string][2]float64 {
	t.Helper()
	raw, err := op.GetAgents(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return labelledFor(raw, jobID)
}

// pinModes are the two ways of reserving (--reserve-mode): the operator
// API's Reserver and the OfferReserver, from offers in the job's role.
var pinModes = []string{"operator", "offers"}

// inPinModes runs f as a subtest in each reservation mode.
func inPinModes(t *testing.T, f func(t *testing.T, mode string)) {
	for _, mode := range pinModes {
		t.Run(mode, func(t *testing.T) { f(t, mode) })
	}
}

// pinnerOnEmulator is operatorOnEmulator (for 3 minutes) with a Pinner of
// the given mode on the master, journalling into the returned memJournal;
// in offer mode a framework in role "sparkpack" is subscribed to the
// master first. It returns the ids of the first n agents, each with cpus
// free (else the test fails).
func pinnerOnEmulator(t *testing.T, mode string, n int, cpus float64) (*mesossim.Master, *logrus.Logger, *Operator, context.Context, []string, Pinner, *memJournal) {
	t.Helper()
	m, url, quiet, op, ctx, agents := operatorOnEmulator(t, 3*time.Minute)
	var ids []string
	for _, a := range agents {
		if len(ids) < n && a.FreeCPUs >= cpus {
			ids = append(ids, a.ID)
		}
	}
	if len(ids) < n {
		t.Fatalf("the emulator's agents %+v: want %d with %g cpus free", agents, n, cpus)
	}
	jr := &memJournal{}
	if mode == "operator" {
		return m, quiet, op, ctx, ids, &Reserver{Op: op, Journal: jr, Log: quiet, Poll: 20 * time.Millisecond, ConfirmTimeout: time.Minute}, jr
	}
	ep, err := NewEndpoint(url, "", "", WithLogger(quiet))
	if err != nil {
		t.Fatal(err)
	}
	fw, _, obs, _ := runFramework(t, ep, FrameworkConfig{Role: "sparkpack"}, quiet)
	waitUp(t, obs.ups, url)
	return m, quiet, op, ctx, ids, &OfferReserver{Framework: fw, Op: op, Journal: jr, Log: quiet, Timeout: time.Minute}, jr
}
