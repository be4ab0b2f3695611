package main

import (
	"testing"

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
