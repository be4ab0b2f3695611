package offers

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/sirupsen/logrus"
)

// An OFFERS event from a master with tens of thousands of agents is
// megabytes: the stream reads it (mesos-go's default limit of 4 MiB cut
// it, and the framework re-subscribed forever).
func TestStreamReadsLargeOffersEvent(t *testing.T) {
	const agents = 40000
	offers := &scheduler.Event_Offers{}
	host := "agent"
	for i := 0; i < agents; i++ {
		v := 0.72
		offers.Offers = append(offers.Offers, mesos.Offer{
			ID: mesos.OfferID{Value: fmt.Sprintf("O%d", i)}, FrameworkID: mesos.FrameworkID{Value: "F"},
			AgentID: mesos.AgentID{Value: fmt.Sprintf("S%d", i)}, Hostname: fmt.Sprintf("%s-%d", host, i),
			Resources: []mesos.Resource{{Name: "cpus", Type: mesos.SCALAR.Enum(), Scalar: &mesos.Value_Scalar{Value: 12}},
				{Name: "mem", Type: mesos.SCALAR.Enum(), Scalar: &mesos.Value_Scalar{Value: 49152}}},
			Attributes: []mesos.Attribute{{Name: "instance_type", Type: mesos.TEXT, Text: &mesos.Value_Text{Value: "m.3xlarge"}},
				{Name: "price", Type: mesos.SCALAR, Scalar: &mesos.Value_Scalar{Value: v}}},
		})
	}
	big, err := (&scheduler.Event{Type: scheduler.Event_OFFERS, Offers: offers}).Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if len(big) <= 4<<20 {
		t.Fatalf("the event is %d bytes; the test needs one above 4 MiB", len(big))
	}
	hb := 15.0
	sub, _ := (&scheduler.Event{Type: scheduler.Event_SUBSCRIBED, Subscribed: &scheduler.Event_Subscribed{
		FrameworkID: &mesos.FrameworkID{Value: "F"}, HeartbeatIntervalSeconds: &hb}}).Marshal()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.Header().Set("Mesos-Stream-Id", "stream-1")
		for _, rec := range [][]byte{sub, big} {
			fmt.Fprintf(w, "%d\n", len(rec))
			_, _ = w.Write(rec)
		}
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	defer srv.Close()
	ep, err := NewEndpoint(srv.URL, "", "")
	if err != nil {
		t.Fatal(err)
	}
	log := logrus.New()
	s, err := NewSchedClient(ep, log).Subscribe(context.Background(), mesos.FrameworkInfo{User: "root", Name: "t"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ev, err := s.Next()
	if err != nil {
		t.Fatalf("reading an OFFERS event of %d bytes: %v", len(big), err)
	}
	if ev.GetType() != scheduler.Event_OFFERS || len(ev.Offers.Offers) != agents {
		t.Fatalf("got %s with %d offers", ev.GetType(), len(ev.GetOffers().GetOffers()))
	}
}

// TestProbeWorthy: only a master that could not be reached or was not
// ready (5xx) is probed to end the backoff early; one that refused the
// subscription is not asked again at once.
func TestProbeWorthy(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{fmt.Errorf("Mesos event stream: %w", io.ErrUnexpectedEOF), true},
		{&StatusError{Code: http.StatusServiceUnavailable, Call: "SUBSCRIBE"}, true},
		{&StatusError{Code: http.StatusUnauthorized, Call: "SUBSCRIBE"}, false},
		{fmt.Errorf("SUBSCRIBE %w: Framework has been removed", errRefused), false},
		{nil, false},
	} {
		if got := probeWorthy(c.err); got != c.want {
			t.Errorf("probeWorthy(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}
