package main

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/sparkpack/sparkpack/offers"
)

// TestCountingPinnerKeepsTheReserveMode (#32.1): the metrics wrapper that
// serve puts around the reserver passes on whether it reserves from
// offers; the adapter's order of reserving and announcing the driver's
// offers depends on it.
func TestCountingPinnerKeepsTheReserveMode(t *testing.T) {
	if !(countingPinner{Pinner: &offers.OfferReserver{}}).FromOffers() {
		t.Error("wrapped offer-mode reserver: FromOffers false")
	}
	if (countingPinner{Pinner: &offers.Reserver{}}).FromOffers() {
		t.Error("wrapped operator-mode reserver: FromOffers true")
	}
}

// TestReserveTimeoutFlag: --reserve-timeout (env SPARKPACK_RESERVE_TIMEOUT,
// default 30 s) bounds the reserver of either --reserve-mode; a negative
// one is refused, naming the flag.
func TestReserveTimeoutFlag(t *testing.T) {
	parse := func(args ...string) (serveConfig, error) {
		t.Helper()
		var c serveConfig
		if err := parseFlags(serveFlags("serve", io.Discard, &c), append([]string{"--database-url", "postgres://x/y"}, args...)); err != nil {
			t.Fatal(err)
		}
		return c, c.validate()
	}
	if c, err := parse(); err != nil || c.mesos.confirm != 30*time.Second {
		t.Fatalf("by default: %s (%v); want 30s", c.mesos.confirm, err)
	}
	t.Setenv("SPARKPACK_RESERVE_TIMEOUT", "90s")
	if c, err := parse(); err != nil || c.mesos.confirm != 90*time.Second {
		t.Fatalf("with SPARKPACK_RESERVE_TIMEOUT=90s: %s (%v); want 90s", c.mesos.confirm, err)
	}
	c, err := parse("--reserve-timeout", "2m")
	if err != nil || c.mesos.confirm != 2*time.Minute {
		t.Fatalf("--reserve-timeout 2m: %s (%v); want 2m", c.mesos.confirm, err)
	}
	if r, ok := newPinner(c.mesos, nil, nil, nil, logrus.New()).(*offers.Reserver); !ok || r.ConfirmTimeout != 2*time.Minute {
		t.Errorf("operator mode: %#v; want a Reserver with ConfirmTimeout 2m", r)
	}
	c.mesos.reserveMode = "offers"
	if r, ok := newPinner(c.mesos, nil, nil, nil, logrus.New()).(*offers.OfferReserver); !ok || r.Timeout != 2*time.Minute {
		t.Errorf("offer mode: %#v; want an OfferReserver with Timeout 2m", r)
	}
	if _, err := parse("--reserve-timeout", "-1s"); err == nil || !strings.Contains(err.Error(), "--reserve-timeout") {
		t.Errorf("--reserve-timeout -1s: %v; want refused, naming the flag", err)
	}
}
