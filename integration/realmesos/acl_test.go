package realmesos

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/sirupsen/logrus"

	"github.com/sparkpack/sparkpack/clusterspec"
	"github.com/sparkpack/sparkpack/offers"
)

// driverACLs are the register_frameworks ACLs under test, one driver
// principal per form of role value, each allowed its form and then
// refused every other role (ACLs match in order; NONE matches no role).
// permissive stays true so that sparkpack's own principal is unaffected.
const driverACLs = `{"permissive": true,
 "register_frameworks": [
  {"principals": {"values": ["exact"]},  "roles": {"values": ["sparkpack-job-j1"]}},
  {"principals": {"values": ["exact"]},  "roles": {"type": "NONE"}},
  {"principals": {"values": ["flat%"]},  "roles": {"values": ["sparkpack-job-%"]}},
  {"principals": {"values": ["flat%"]},  "roles": {"type": "NONE"}},
  {"principals": {"values": ["flat*"]},  "roles": {"values": ["sparkpack-job-*"]}},
  {"principals": {"values": ["flat*"]},  "roles": {"type": "NONE"}},
  {"principals": {"values": ["nested"]}, "roles": {"values": ["sparkpack-job/%"]}},
  {"principals": {"values": ["nested"]}, "roles": {"type": "NONE"}}
 ]}`

// TestRealMesosDriverACLs (#34) records what a real Mesos 1.12 master
// does with framework ACLs that would confine Spark drivers' frameworks to
// job roles, and with nested (hierarchical) job roles. It asserts what
// was observed, so a Mesos that behaves otherwise fails it (see
// docs/deploy-cluster.md, "Confining the drivers' frameworks"):
//
//   - register_frameworks role values match exactly, except x/% which
//     matches every role below x (any depth) but not x itself: flat
//     sparkpack-job-<id> roles cannot be matched by a pattern
//     (sparkpack-job-% and sparkpack-job-* match nothing but themselves),
//     and sparkpack-job/% lets a driver in any job's role, or a made-up
//     one below sparkpack-job, but not in *, the parent or another role;
//   - quota cannot be set on a nested role ("not supported yet"), and a
//     quota limit on the parent does not cap what its children are
//     offered: a driver's framework in a nested role is offered every
//     unreserved resource, where today's flat job role with its quota
//     limit is offered only its job's reservations;
//   - resources reserved to the parent role are offered to every child;
//   - what works with flat roles: a zero quota limit on * keeps a
//     framework in * from unreserved resources, not one in a made-up role.
func TestRealMesosDriverACLs(t *testing.T) {
	bin := mesosBin(t)
	dir := t.TempDir()
	creds := `{"credentials": [{"principal": "sparkpack", "secret": "s"}, {"principal": "exact", "secret": "d"},
	  {"principal": "flat%", "secret": "d"}, {"principal": "flat*", "secret": "d"}, {"principal": "nested", "secret": "d"}]}`
	for name, text := range map[string]string{"credentials.json": creds, "acls.json": driverACLs} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	one := clusterspec.Cluster{Name: "acl", Agents: []clusterspec.Agent{
		{ID: "acl-S0", Hostname: "acl-a1", CPUs: 4, MemMB: 4096, PricePerHour: 0.24, InstanceType: "m1.large", Location: "local"}}}
	c, err := Start(ctx, Options{Bin: bin, Cluster: one, Logf: t.Logf, MasterFlags: []string{
		"--authenticate_frameworks", "--authenticate_http_frameworks", "--http_framework_authenticators=basic",
		"--credentials=" + filepath.Join(dir, "credentials.json"), "--acls=" + filepath.Join(dir, "acls.json")}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Close(context.Background()); err != nil {
			t.Errorf("closing the cluster: %v", err)
		}
	})
	quiet := logrus.New()
	quiet.SetOutput(io.Discard)
	subscribe := func(principal, secret, role string) (*offers.Stream, error) {
		ep, err := offers.NewEndpoint(c.URL, principal, secret, offers.WithLogger(quiet))
		if err != nil {
			t.Fatal(err)
		}
		return offers.NewSchedClient(ep, quiet).Subscribe(ctx, mesos.FrameworkInfo{User: "root", Name: "acl-probe", Principal: &principal,
			Roles: []string{role}, Capabilities: []mesos.FrameworkInfo_Capability{{Type: mesos.FrameworkInfo_Capability_MULTI_ROLE},
				{Type: mesos.FrameworkInfo_Capability_RESERVATION_REFINEMENT}}})
	}

	// Without credentials no framework subscribes.
	if s, err := subscribe("", "", "sparkpack-job-j1"); err == nil {
		s.Close()
		t.Fatal("a framework without credentials subscribed")
	}
	roles := []string{"*", "sparkpack", "sparkpack-job", "sparkpack-job-j1", "sparkpack-job-j2", "sparkpack-job/j1", "sparkpack-job/j2", "sparkpack-job/j1/x"}
	allowed := map[string][]string{
		"exact":  {"sparkpack-job-j1"},
		"flat%":  nil,
		"flat*":  nil,
		"nested": {"sparkpack-job/j1", "sparkpack-job/j2", "sparkpack-job/j1/x"},
	}
	for _, p := range []string{"exact", "flat%", "flat*", "nested"} {
		var got []string
		for _, r := range roles {
			s, err := subscribe(p, "d", r)
			switch {
			case err == nil:
				got = append(got, r)
				s.Close()
			case !strings.Contains(err.Error(), "Not authorized to register framework"):
				t.Fatalf("principal %s, role %s: %v", p, r, err)
			}
		}
		if strings.Join(got, " ") != strings.Join(allowed[p], " ") {
			t.Errorf("principal %s may subscribe in %q, want %q", p, got, allowed[p])
		} else {
			t.Logf("ACL for principal %s: may subscribe in %q of %q", p, got, roles)
		}
	}

	ep, err := offers.NewEndpoint(c.URL, "sparkpack", "s", offers.WithLogger(quiet))
	if err != nil {
		t.Fatal(err)
	}
	op := offers.NewOperator(ep)
	if err := op.SetQuotaLimit(ctx, "sparkpack-job-j1", 1, 256, false); err != nil {
		t.Fatalf("quota on a flat job role: %v", err)
	}
	err = op.SetQuotaLimit(ctx, "sparkpack-job/j1", 1, 256, false)
	if err == nil || !strings.Contains(err.Error(), "nested role") || !strings.Contains(err.Error(), "not supported") {
		t.Fatalf("quota on a nested role: %v; want Mesos 1.12's refusal", err)
	}
	t.Logf("quota on a nested role: %v", err)
	if err := op.SetQuotaLimit(ctx, "sparkpack-job", 1, 256, false); err != nil {
		t.Fatalf("quota on the parent role: %v", err)
	}

	// What a framework is offered first (cpus, unreserved and reserved).
	// It is torn down after, so that its offers go back before the next.
	offered := func(principal, secret, role string) (unreserved, reserved float64) {
		t.Helper()
		// Every earlier framework gone (and its offers with it).
		if err := c.waitFor(ctx, time.Minute, "the earlier frameworks to be removed", func() (bool, error) {
			fws, err := c.Observer().Frameworks(ctx)
			for _, f := range fws {
				if !f.Completed {
					return false, nil
				}
			}
			return err == nil, nil
		}); err != nil {
			t.Fatal(err)
		}
		s, err := subscribe(principal, secret, role)
		if err != nil {
			t.Fatalf("subscribe %s in %s: %v", principal, role, err)
		}
		defer func() {
			s.Close()
			// Usually gone already: a framework without failover timeout
			// is removed when its connection closes.
			if err := c.Observer().Teardown(ctx, s.Subscribed.FrameworkID.Value); err != nil && !strings.Contains(err.Error(), "No framework found") {
				t.Fatalf("teardown: %v", err)
			}
		}()
		// The first OFFERS event, or none within 10 s (the master
		// allocates every second): nothing is offered.
		first := make(chan *scheduler.Event, 1)
		go func() {
			defer close(first)
			for {
				ev, err := s.Next()
				if err != nil {
					return
				}
				if ev.GetType() == scheduler.Event_OFFERS {
					first <- ev
					return
				}
			}
		}()
		var ev *scheduler.Event
		select {
		case ev = <-first:
		case <-time.After(10 * time.Second):
		}
		if ev == nil {
			t.Logf("%s in %s: no offer within 10 s", principal, role)
			return 0, 0
		}
		for _, o := range ev.GetOffers().GetOffers() {
			for _, r := range o.Resources {
				if r.Name != "cpus" {
					continue
				}
				if len(r.Reservations) > 0 || r.Reservation != nil {
					reserved += r.GetScalar().GetValue()
				} else {
					unreserved += r.GetScalar().GetValue()
				}
			}
		}
		return unreserved, reserved
	}
	// The parent's limit (1 cpu) does not cap a child: offered all 4.
	if u, _ := offered("nested", "d", "sparkpack-job/j2"); u != 4 {
		t.Fatalf("a framework in sparkpack-job/j2 under the parent's 1-cpu limit was offered %g unreserved cpus, want all 4 (as observed on 1.12)", u)
	}
	// The flat job role with its 1-cpu limit is offered 1 cpu at most.
	if u, _ := offered("sparkpack", "s", "sparkpack-job-j1"); u != 1 {
		t.Fatalf("a framework in sparkpack-job-j1 under its 1-cpu limit was offered %g cpus", u)
	}
	// A reservation to the parent is offered to a child.
	agents, err := op.GetAgents(ctx)
	if err != nil || len(agents) != 1 {
		t.Fatalf("agents: %v %v", agents, err)
	}
	principal := "sparkpack"
	res := []mesos.Resource{{Name: "cpus", Type: mesos.SCALAR.Enum(), Scalar: &mesos.Value_Scalar{Value: 1},
		Reservations: []mesos.Resource_ReservationInfo{{Type: mesos.Resource_ReservationInfo_DYNAMIC.Enum(), Role: ptr("sparkpack-job"), Principal: &principal}}}}
	if err := op.Reserve(ctx, agents[0].AgentInfo.ID.GetValue(), res); err != nil {
		t.Fatalf("reserve to the parent: %v", err)
	}
	if err := c.waitFor(ctx, time.Minute, "the reservation to the parent", func() (bool, error) {
		rs, err := c.Observer().Reservations(ctx)
		for _, r := range rs {
			if r.Role == "sparkpack-job" && r.CPUs == 1 {
				return true, nil
			}
		}
		return false, err
	}); err != nil {
		t.Fatal(err)
	}
	if u, r := offered("nested", "d", "sparkpack-job/j9"); r != 1 {
		t.Fatalf("a framework in sparkpack-job/j9 was offered %g reserved cpus (and %g unreserved), want the parent's 1", r, u)
	}

	// What an operator can do with flat roles: a zero quota limit on *
	// keeps frameworks in * (spark.mesos.role=*) from unreserved cpus;
	// a made-up role is still offered them.
	if u, _ := offered("sparkpack", "s", "*"); u == 0 {
		t.Fatal("a framework in * was offered no unreserved cpus before any quota on *")
	}
	if err := op.SetQuotaLimit(ctx, "*", 0, 0, true); err != nil {
		t.Fatalf("quota limit on *: %v", err)
	}
	if u, _ := offered("sparkpack", "s", "*"); u != 0 {
		t.Fatalf("a framework in * under a zero limit was offered %g unreserved cpus", u)
	}
	if u, _ := offered("sparkpack", "s", "made-up"); u != 3 {
		t.Fatalf("a framework in a made-up role was offered %g unreserved cpus, want the 3 left", u)
	}
}

func ptr[T any](v T) *T { return &v }
