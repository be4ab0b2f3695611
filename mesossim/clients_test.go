package mesossim

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/integration/realmesos"
)

// Third-party frameworks against the emulator: mesos-go v0.0.11's own
// example scheduler (protobuf, no MULTI_ROLE: it launched nothing while
// the emulator put allocation_info into its offers) and Mesos' own
// mesos-execute (the C++ v1 scheduler library; it needs a Mesos build, see
// realmesos.Find). integration/realmesos runs the same programs against a
// real master and requires the same results.

func TestMesosGoExampleSchedulerRunsItsTasks(t *testing.T) {
	sched, exec, err := realmesos.BuildMesosGoExamples(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	_, base := testMaster(t, Config{Cluster: realmesos.ThreeAgents(), OfferInterval: 100 * time.Millisecond,
		DefaultTaskDuration: 300 * time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	r, err := realmesos.RunExampleScheduler(ctx, sched, exec, base, 5)
	if err != nil || !realmesos.ExampleSchedulerSucceeded(r) {
		t.Fatalf("mesos-go's example scheduler against the emulator: %v; its output ends:\n%s", err, tailLines(r.Output, 30))
	}
	// As on a real master (TestThirdPartyFrameworksOnBoth): the example
	// executor reports TASK_RUNNING then TASK_FINISHED for each task.
	if len(r.Tasks) != 5 {
		t.Errorf("updates for %d tasks, want 5: %v", len(r.Tasks), r.Tasks)
	}
	for task, states := range r.Tasks {
		if fmt.Sprint(states) != "[TASK_RUNNING TASK_FINISHED]" {
			t.Errorf("task %s: updates %v, want [TASK_RUNNING TASK_FINISHED]", task, states)
		}
	}
}

func TestMesosExecuteAgainstTheEmulator(t *testing.T) {
	bin, skip, err := realmesos.Find()
	if err != nil {
		t.Fatal(err)
	}
	if skip != "" {
		t.Skip(skip)
	}
	_, base := testMaster(t, Config{Cluster: realmesos.ThreeAgents(), OfferInterval: 100 * time.Millisecond,
		DefaultTaskDuration: time.Second})
	host := strings.TrimPrefix(base, "http://")
	for _, tc := range realmesos.MesosExecuteCases {
		t.Run(tc.Name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			defer cancel()
			r, err := realmesos.RunMesosExecute(ctx, bin, host, tc.Flags...)
			if err != nil {
				t.Fatalf("mesos-execute: %v; output:\n%s", err, tailLines(r.Output, 30))
			}
			if got := fmt.Sprint(r.Updates); got != fmt.Sprint(tc.Updates) || r.ExitCode != tc.ExitCode {
				t.Fatalf("mesos-execute %v: updates %s exit %d, want %v exit %d (as on a real master); output:\n%s",
					tc.Flags, got, r.ExitCode, tc.Updates, tc.ExitCode, tailLines(r.Output, 30))
			}
		})
	}
}

func tailLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
