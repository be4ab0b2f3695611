package offers

import (
	"reflect"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/master"
)

// TestDriverlessFrameworks: only frameworks whose one role is the job's
// and that are not connected are torn down (disconnected, or recovered
// after a master failover, in the frameworks list or, from an old
// master, in recovered_frameworks); connected ones (a live driver),
// frameworks of other roles or of several roles (sparkpack's own in
// offer mode), frameworks without a role and completed ones are kept.
func TestDriverlessFrameworks(t *testing.T) {
	const role = "sparkpack-job-11111111-1111-1111-1111-111111111111"
	legacy := func(id, r string) mesos.FrameworkInfo {
		return mesos.FrameworkInfo{ID: &mesos.FrameworkID{Value: id}, Name: "spark-" + id, Role: &r}
	}
	multi := func(id string, roles ...string) mesos.FrameworkInfo {
		return mesos.FrameworkInfo{ID: &mesos.FrameworkID{Value: id}, Name: "fw-" + id, Roles: roles}
	}
	fw := func(fi mesos.FrameworkInfo, active, connected, recovered bool) master.Response_GetFrameworks_Framework {
		return master.Response_GetFrameworks_Framework{FrameworkInfo: fi, Active: active, Connected: connected, Recovered: recovered}
	}
	for _, tc := range []struct {
		name string
		gf   *master.Response_GetFrameworks
		want []Orphaned
	}{
		{"no answer", nil, nil},
		{"nothing", &master.Response_GetFrameworks{}, nil},
		{"a connected driver is kept", &master.Response_GetFrameworks{Frameworks: []master.Response_GetFrameworks_Framework{
			fw(legacy("A", role), true, true, false)}}, nil},
		{"connected but inactive (deactivated) is kept", &master.Response_GetFrameworks{Frameworks: []master.Response_GetFrameworks_Framework{
			fw(legacy("A", role), false, true, false)}}, nil},
		{"recovered after a master restart (as a real 1.12 master shows it)", &master.Response_GetFrameworks{Frameworks: []master.Response_GetFrameworks_Framework{
			fw(legacy("A", role), false, false, true)}}, []Orphaned{{ID: "A", Name: "spark-A", Recovered: true}}},
		{"disconnected (within its failover timeout)", &master.Response_GetFrameworks{Frameworks: []master.Response_GetFrameworks_Framework{
			fw(legacy("A", role), false, false, false)}}, []Orphaned{{ID: "A", Name: "spark-A"}}},
		{"MULTI_ROLE in the job's role only", &master.Response_GetFrameworks{Frameworks: []master.Response_GetFrameworks_Framework{
			fw(multi("M", role), false, false, true)}}, []Orphaned{{ID: "M", Name: "fw-M", Recovered: true}}},
		{"other roles are kept", &master.Response_GetFrameworks{Frameworks: []master.Response_GetFrameworks_Framework{
			fw(legacy("B", "sparkpack-job-22222222-2222-2222-2222-222222222222"), false, false, true),
			fw(legacy("C", "sparkpack"), false, false, true),
			fw(legacy("D", role+"x"), false, false, true),
			fw(multi("E"), false, false, true),
			fw(mesos.FrameworkInfo{ID: &mesos.FrameworkID{Value: "F"}}, false, false, true)}}, nil},
		{"a framework holding the job's role beside another is kept (sparkpack's own)", &master.Response_GetFrameworks{Frameworks: []master.Response_GetFrameworks_Framework{
			fw(multi("S", "sparkpack", role), false, false, true)}}, nil},
		{"completed frameworks are kept", &master.Response_GetFrameworks{CompletedFrameworks: []master.Response_GetFrameworks_Framework{
			fw(legacy("A", role), false, false, false)}}, nil},
		{"recovered_frameworks of an old master", &master.Response_GetFrameworks{RecoveredFrameworks: []mesos.FrameworkInfo{
			legacy("R", role), legacy("O", "other")}}, []Orphaned{{ID: "R", Name: "spark-R", Recovered: true}}},
		{"mixed: only the job's unconnected ones, once each, in order", &master.Response_GetFrameworks{
			Frameworks: []master.Response_GetFrameworks_Framework{
				fw(legacy("live", role), true, true, false),
				fw(legacy("gone1", role), false, false, true),
				fw(legacy("other", "sparkpack-job-x"), false, false, true),
				fw(legacy("gone2", role), true, false, false),
			},
			RecoveredFrameworks: []mesos.FrameworkInfo{legacy("gone1", role)},
		}, []Orphaned{{ID: "gone1", Name: "spark-gone1", Recovered: true}, {ID: "gone2", Name: "spark-gone2", Active: true}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := DriverlessFrameworks(tc.gf, role); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("DriverlessFrameworks = %+v, want %+v", got, tc.want)
			}
		})
	}
	if got := DriverlessFrameworks(&master.Response_GetFrameworks{Frameworks: []master.Response_GetFrameworks_Framework{
		fw(mesos.FrameworkInfo{ID: &mesos.FrameworkID{Value: "F"}}, false, false, true)}}, ""); got != nil {
		t.Errorf("no role: %+v, want nothing", got)
	}
}

// TestTeardownGraceDefaults: TeardownGrace defaults to 15 s and is at
// most half of ConfirmTimeout (so that one Release gets to the teardown);
// a value set below that is kept.
func TestTeardownGraceDefaults(t *testing.T) {
	for _, tc := range []struct {
		r    Reserver
		want time.Duration
	}{
		{Reserver{}, 15 * time.Second},
		{Reserver{ConfirmTimeout: 10 * time.Second}, 5 * time.Second},
		{Reserver{TeardownGrace: 2 * time.Second}, 2 * time.Second},
		{Reserver{TeardownGrace: time.Minute, ConfirmTimeout: time.Hour}, time.Minute},
		{Reserver{TeardownGrace: time.Minute, ConfirmTimeout: 30 * time.Second}, 15 * time.Second},
	} {
		if got := tc.r.teardownGrace(); got != tc.want {
			t.Errorf("TeardownGrace %v, ConfirmTimeout %v: grace %v, want %v", tc.r.TeardownGrace, tc.r.ConfirmTimeout, got, tc.want)
		}
	}
}
