package integration

import (
	"strings"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/mesossim"
)

// TestE2EFailingDriverIsRetriedWithANewTaskID: a job whose driver fails
// (the emulated Spark exits with $FAKESPARK_EXIT_CODE, as the stand-in
// does on real agents) is retried once as attempt 2 with a new driver task
// id, then ends FAILED. (Each retry used to start again at attempt 1 with
// the same task id and was retried for ever; integration/realmesos found
// it, and the reliability work numbers launches from the stored record.)
func TestE2EFailingDriverIsRetriedWithANewTaskID(t *testing.T) {
	emu := startEmulator(t, mesossim.Config{Cluster: smallCluster(2)})
	sp := startSparkpack(t, emu.URL, e2eDB(t))
	body := sparkJob("failing", 2, 1, 1024, 20)
	body["retries"] = 1
	body["app"].(map[string]any)["environment"] = map[string]string{"FAKESPARK_EXIT_CODE": "3"}
	id := submit(t, sp.API, body)
	v := waitState(t, sp.API, id, 60*time.Second, "FAILED", "FINISHED", "KILLED")
	if v.State != "FAILED" {
		t.Fatalf("job ended %s, want FAILED: %+v", v.State, v.Events)
	}
	var reasons []string
	for _, e := range v.Events {
		reasons = append(reasons, e.Reason)
	}
	all := strings.Join(reasons, "\n")
	if n := strings.Count(all, "retry 1 of 1"); n != 1 {
		t.Errorf("%d retries in the timeline, want 1:\n%s", n, all)
	}
	for _, task := range []string{"sparkpack-driver-" + id + "-1", "sparkpack-driver-" + id + "-2"} {
		if !strings.Contains(all, task+": TASK_FAILED Command exited with status 3") {
			t.Errorf("no failure of driver task %s in the timeline:\n%s", task, all)
		}
	}
	waitNoLeftovers(t, emu.Master, 20*time.Second)
}
