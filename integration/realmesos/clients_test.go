package realmesos

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

var examples struct {
	once            sync.Once
	sched, executor string
	err             error
}

// TestThirdPartyFrameworksOnBoth runs mesos-go's example scheduler and
// Mesos' mesos-execute against the real master and the emulator: on both
// they must see the same task states and end the same way (the expected
// runs are kept in MesosExecuteCases, which the emulator's own tests
// check too).
func TestThirdPartyFrameworksOnBoth(t *testing.T) {
	bin := mesosBin(t)
	examples.once.Do(func() { examples.sched, examples.executor, examples.err = BuildMesosGoExamples(bins0(t)) })
	if examples.err != nil {
		t.Fatal(examples.err)
	}
	type outcome struct {
		ExampleScheduler map[string][]string
		ExampleDone      bool
		Execute          map[string]string
	}
	onBoth(t, func(t *testing.T, tg *target) outcome {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		var o outcome
		r, err := RunExampleScheduler(ctx, examples.sched, examples.executor, tg.url, 3)
		if err != nil {
			t.Fatalf("%s: example scheduler: %v\n%s", tg.name, err, tail(r.Output, 30))
		}
		o.ExampleScheduler, o.ExampleDone = r.Tasks, ExampleSchedulerSucceeded(r)
		if !o.ExampleDone {
			t.Errorf("%s: the example scheduler did not finish its tasks:\n%s", tg.name, tail(r.Output, 30))
		}
		o.Execute = map[string]string{}
		for _, tc := range MesosExecuteCases {
			r, err := RunMesosExecute(ctx, bin, strings.TrimPrefix(tg.url, "http://"), tc.Flags...)
			if err != nil {
				t.Fatalf("%s: mesos-execute %s: %v\n%s", tg.name, tc.Name, err, tail(r.Output, 30))
			}
			o.Execute[tc.Name] = fmt.Sprintf("%v exit %d", r.Updates, r.ExitCode)
			if want := fmt.Sprintf("%v exit %d", tc.Updates, tc.ExitCode); o.Execute[tc.Name] != want {
				t.Errorf("%s: mesos-execute %s: %s, want %s:\n%s", tg.name, tc.Name, o.Execute[tc.Name], want, tail(r.Output, 20))
			}
		}
		return o
	})
}
