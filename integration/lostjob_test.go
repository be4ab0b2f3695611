package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/sparkpack/sparkpack/clusterspec"
	"github.com/sparkpack/sparkpack/mesossim"
	"github.com/sparkpack/sparkpack/scheduler"
	"github.com/sparkpack/sparkpack/store"
)

// TestE2ELostNotificationIsFoundByTheRescan: a job is stored while the
// leader's notification of it is lost (here: stored by a quiet group
// commit, which never notifies, while the listening connection stays up,
// so no resync happens). The leader's rescan finds it, queues it, and it
// runs to the end; nothing leaks.
func TestE2ELostNotificationIsFoundByTheRescan(t *testing.T) {
	emu := startEmulator(t, mesossim.Config{Cluster: clusterspec.Thesis14()})
	db := e2eDB(t)
	sp := startSparkpack(t, emu.URL, db, "--lost-job-rescan", "500ms")
	// A job through the API first: the leader is up and listening.
	first := submit(t, sp.API, sparkJob("heard", 1, 1, 1024, 1))
	waitState(t, sp.API, first, 2*time.Minute, "FINISHED")

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st, err := store.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	st.SetDirectIntake(func() bool { return true }) // quiet: no NOTIFY
	body, _ := json.Marshal(sparkJob("unheard", 2, 1, 1024, 1))
	spec, err := scheduler.DecodeSpec(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	spec.ID = uuid.NewString()
	if _, _, err := st.CreateJob(ctx, scheduler.Job{Spec: spec, SubmittedAt: time.Now()}, ""); err != nil {
		t.Fatalf("store the job quietly: %v", err)
	}
	waitState(t, sp.API, spec.ID, 2*time.Minute, "FINISHED")
	if !strings.Contains(sp.logText(), "found stored jobs whose notification was lost") {
		t.Errorf("the job ran, but the rescan did not say it found it")
	}
	if got := sum(scrape(t, sp.API), "sparkpack_lost_jobs_found_total"); got != 1 {
		t.Errorf("sparkpack_lost_jobs_found_total %g, want 1", got)
	}
	waitNoLeftovers(t, emu.Master, 30*time.Second)
}
