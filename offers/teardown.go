package offers

import (
	"context"
	"fmt"
	"slices"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/master"
)

// A job's executors belong to its driver's framework, subscribed in the
// job's role (scheduler.Role) and in no other: only that job's driver
// uses the role. When the driver is gone without stopping its executors
// (it lost the master and exited: seen on a real Mesos 1.12 master, see
// docs/deploy.md), the master keeps the framework, disconnected or
// recovered, with its executors running on the job's reservations, and
// unreserving them is refused (409) for ever. Release then tears that
// framework down (Operator.Teardown), which kills its executors.

// Orphaned is a framework chosen for teardown, with what GET_FRAMEWORKS
// said of it (for the log).
type Orphaned struct {
	ID        string
	Name      string
	Active    bool
	Connected bool
	Recovered bool
}

// DriverlessFrameworks decides which frameworks of a GET_FRAMEWORKS answer
// to tear down so that a job's reservations can be released: those whose
// only role is the job's role and that are not connected (disconnected,
// or recovered after a master failover and never subscribed again: their
// driver is gone). A connected framework (a live driver) is never chosen,
// nor one holding any other role (sparkpack's own framework takes job
// roles in offer mode), nor a completed one.
func DriverlessFrameworks(gf *master.Response_GetFrameworks, role string) []Orphaned {
	if gf == nil || role == "" {
		return nil
	}
	var out []Orphaned
	seen := map[string]bool{}
	add := func(o Orphaned) {
		if o.ID != "" && !seen[o.ID] {
			seen[o.ID] = true
			out = append(out, o)
		}
	}
	for _, f := range gf.Frameworks {
		if f.Connected || !onlyRole(f.FrameworkInfo, role) {
			continue
		}
		add(Orphaned{ID: f.FrameworkInfo.ID.GetValue(), Name: f.FrameworkInfo.Name, Active: f.Active, Recovered: f.Recovered})
	}
	// Masters before 1.2 listed recovered frameworks apart (no longer
	// filled since: they are in Frameworks with recovered set).
	for _, fi := range gf.RecoveredFrameworks {
		if onlyRole(fi, role) {
			add(Orphaned{ID: fi.ID.GetValue(), Name: fi.Name, Recovered: true})
		}
	}
	return out
}

// onlyRole reports whether the framework subscribed in role and in no
// other (the legacy role field, or the MULTI_ROLE roles).
func onlyRole(fi mesos.FrameworkInfo, role string) bool {
	roles := fi.Roles
	if len(roles) == 0 && fi.Role != nil {
		roles = []string{*fi.Role}
	}
	return len(roles) > 0 && !slices.ContainsFunc(roles, func(r string) bool { return r != role })
}

// GetFrameworks lists the frameworks the master knows.
func (o *Operator) GetFrameworks(ctx context.Context) (*master.Response_GetFrameworks, error) {
	r, err := o.Call(ctx, &master.Call{Type: master.Call_GET_FRAMEWORKS})
	if err != nil {
		return nil, err
	}
	if r == nil || r.GetFrameworks == nil {
		return nil, fmt.Errorf("Mesos GET_FRAMEWORKS: empty answer")
	}
	return r.GetFrameworks, nil
}

// Teardown sends TEARDOWN: the master removes the framework and kills its
// tasks and executors.
func (o *Operator) Teardown(ctx context.Context, frameworkID string) error {
	_, err := o.Call(ctx, &master.Call{
		Type:     master.Call_TEARDOWN,
		Teardown: &master.Call_Teardown{FrameworkID: mesos.FrameworkID{Value: frameworkID}},
	})
	if err != nil {
		return fmt.Errorf("tear down framework %s: %w", frameworkID, err)
	}
	return nil
}
