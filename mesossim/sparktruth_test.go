package mesossim

import (
	"sort"
	"strings"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"

	"github.com/sparkpack/sparkpack/clusterspec"
	"github.com/sparkpack/sparkpack/mesossim/perftruth"
)

// TestSparkRunTimeFollowsTheTruthOfItsPlacement: with a performance truth
// the simulated Spark application runs for the time the truth gives its
// signature on the placement its executors actually got (read back from
// GET_TASKS), not for the duration label sparkpack wrote; two runs of one
// signature placed differently take different times.
func TestSparkRunTimeFollowsTheTruthOfItsPlacement(t *testing.T) {
	const (
		res   = "local:///jobs/sim.jar"
		class = "com.example.Sim"
		scale = 0.005 // 200 simulated seconds a wall second
	)
	truth, err := perftruth.Parse([]byte(`{"noise": 0, "signatures": [{"appResource": "` + res + `", "mainClass": "` + class + `",
		"startupSeconds": 10, "serialSecondsPerGB": 1, "coreSecondsPerGB": 60, "scaling": 0.9, "shuffleRatio": 1.5, "cpuBound": 0.8, "crowding": 0.02}]}`))
	if err != nil {
		t.Fatal(err)
	}
	var agents []clusterspec.Agent
	for i, rack := range []string{"r1", "r1", "r2"} {
		id := []string{"a0", "a1", "a2"}[i]
		agents = append(agents, clusterspec.Agent{ID: id, Hostname: id, CPUs: 4, MemMB: 16384, PricePerHour: 0.1, Attributes: map[string]string{"rack": rack}})
	}
	// SparkMaxWait: each application waits for all its executors (the
	// default 30 simulated seconds are 0.15 s of wall time here: on a busy
	// machine an application started with part of them, and its placement
	// was not the one the test asked for).
	m, base := testMaster(t, Config{Cluster: clusterspec.Cluster{Name: "three", Agents: agents}, TimeScale: scale, PerfTruth: truth,
		SparkMaxWait: 2 * time.Hour})
	f := subscribeRole(t, base, "drivers")

	// run launches a driver on a0 and returns its TASK_FINISHED timestamp.
	// While the driver runs this framework takes no offer (it suppresses
	// them and declines any it holds for an hour): the simulated Spark
	// must be offered every agent, or its executors go where this test's
	// framework happened not to hold an offer. Reviving clears both.
	run := func(name string, conf ...string) float64 {
		t.Helper()
		f.call(calls.Revive())
		ev := f.next(scheduler.Event_OFFERS, 10*time.Second)
		var o *mesos.Offer
		for i := range ev.Offers.Offers {
			if ev.Offers.Offers[i].AgentID.Value == "a0" {
				o = &ev.Offers.Offers[i]
			}
		}
		var ids []mesos.OfferID
		for _, x := range ev.Offers.Offers {
			if o == nil || x.ID != o.ID {
				ids = append(ids, x.ID)
			}
		}
		if len(ids) > 0 {
			f.call(calls.Decline(ids...).With(calls.RefuseSeconds(time.Hour)))
		}
		if o == nil {
			return -1
		}
		cmd := "/opt/spark/bin/spark-submit --master mesos://m:5050 --deploy-mode client --class " + class + " --name " + name +
			" --conf spark.mesos.role=" + name + " --conf spark.executor.cores=2 --conf spark.executor.memory=1024m" +
			" --conf " + SimInputGBConf + "=8"
		for _, c := range conf {
			cmd += " --conf " + c
		}
		cmd += " " + res + " hdfs:///in/" + name
		shell := true
		dur := "1" // sparkpack's label: the truth ignores it
		task := mesos.TaskInfo{Name: name, TaskID: mesos.TaskID{Value: name}, AgentID: o.AgentID,
			Resources: []mesos.Resource{scalarRes("cpus", 1, "drivers", nil), scalarRes("mem", 1024, "drivers", nil)},
			Command:   &mesos.CommandInfo{Shell: &shell, Value: &cmd},
			Labels:    &mesos.Labels{Labels: []mesos.Label{{Key: DurationLabel, Value: &dur}}}}
		f.call(calls.Accept(calls.OfferOperations{calls.OpLaunch(task)}.WithOffers(o.ID)))
		f.call(calls.Suppress())
		for deadline := time.After(120 * time.Second); ; {
			var ev *scheduler.Event
			select {
			case ev = <-f.events:
			case <-deadline:
				t.Fatalf("driver %s did not finish within 120 s", name)
			}
			if ev.GetType() == scheduler.Event_OFFERS {
				// Keep no offer: the simulated Spark needs the agents.
				var ids []mesos.OfferID
				for _, x := range ev.Offers.Offers {
					ids = append(ids, x.ID)
				}
				f.call(calls.Decline(ids...).With(calls.RefuseSeconds(time.Hour)))
			}
			if ev.GetType() != scheduler.Event_UPDATE {
				continue
			}
			st := ev.Update.Status
			if len(st.UUID) > 0 {
				f.call(calls.Acknowledge(st.AgentID.Value, st.TaskID.Value, st.UUID))
			}
			if st.TaskID.Value != name {
				continue
			}
			switch st.GetState() {
			case mesos.TASK_FINISHED:
				return st.GetTimestamp()
			case mesos.TASK_FAILED, mesos.TASK_LOST, mesos.TASK_KILLED, mesos.TASK_ERROR:
				t.Fatalf("driver %s: %s %s", name, st.GetState(), st.GetMessage())
			}
		}
	}
	var finished []float64
	for _, job := range []struct {
		name string
		conf []string
	}{
		{"spread", []string{"spark.cores.max=6"}},                                    // one executor on each agent
		{"packed", []string{"spark.cores.max=4", "spark.mesos.constraints=rack:r2"}}, // both on a2
	} {
		var at float64
		for at = -1; at < 0; {
			at = run(job.name, job.conf...)
		}
		finished = append(finished, at)
	}

	runs := m.SparkRuns()
	if len(runs) != 2 {
		t.Fatalf("%d runs timed by the truth, want 2: %+v", len(runs), runs)
	}
	tasks := operatorJSON(t, base, `{"type":"GET_TASKS"}`)["get_tasks"].(map[string]any)
	for i, r := range runs {
		name := []string{"spread", "packed"}[i]
		// The executors' agents, as GET_TASKS reports them.
		per := map[string]int{}
		for _, list := range []string{"tasks", "completed_tasks"} {
			l, _ := tasks[list].([]any)
			for _, x := range l {
				x := x.(map[string]any)
				if n, _ := x["name"].(string); n != name && len(n) > len(name) && n[:len(name)+1] == name+" " {
					per[x["agent_id"].(map[string]any)["value"].(string)]++
				}
			}
		}
		var ids []string
		for a := range per {
			ids = append(ids, a)
		}
		sort.Strings(ids)
		pl := perftruth.Placement{ExecutorCores: 2}
		for _, a := range ids {
			pl.PerAgent = append(pl.PerAgent, per[a])
			used := 2 * float64(per[a])
			if a == "a0" {
				used++ // the driver
			}
			pl.BusiestLoad = max(pl.BusiestLoad, used/4)
		}
		want := truth.For(res, class).Seconds(perftruth.Run{InputGB: 8, Iterations: 1, Placement: pl}).Total()
		if r.DriverTaskID != name || r.Signature != perftruth.Signature(res, class) || len(r.PerAgent) != len(per) || r.Seconds != want {
			t.Fatalf("run %s: %+v; GET_TASKS placement %v (load %.2f) gives %.3f s", name, r, per, pl.BusiestLoad, want)
		}
		// Timers never fire early: the driver ended no sooner than the
		// truth's time after the application started (the label said 1 s).
		if end := r.Started.Add(time.Duration(want * scale * float64(time.Second))); finished[i] < float64(end.UnixNano())/1e9-0.01 {
			t.Fatalf("run %s finished at %.3f, before its truth's end %.3f", name, finished[i], float64(end.UnixNano())/1e9)
		}
		t.Logf("%s: executors %v, busiest load %.2f: %.1f simulated seconds (%+v)", name, per, pl.BusiestLoad, r.Seconds, r.Truth)
	}
	if len(runs[0].PerAgent) != 3 || len(runs[1].PerAgent) != 1 || runs[0].Seconds == runs[1].Seconds {
		t.Fatalf("placements %v and %v, times %.1f and %.1f: want spread on 3 agents, packed on 1, different times",
			runs[0].PerAgent, runs[1].PerAgent, runs[0].Seconds, runs[1].Seconds)
	}
}

// TestParseSparkSubmitApplication: the application, its main class and its
// data are read from a spark-submit as sparkpack launches it (no shell:
// the program repeated as argv[0]) and as a shell line.
func TestParseSparkSubmitApplication(t *testing.T) {
	argv := []string{"/opt/spark/bin/spark-submit", "/opt/spark/bin/spark-submit", "--master", "mesos://m:5050", "--deploy-mode", "client",
		"--class", "com.example.ETL", "--driver-memory", "1024m", "--name", "etl", "--conf", SimInputGBConf + "=12.5",
		"--conf", SimIterationsConf + "=3", "--conf", "spark.mesos.role=r", "local:///jobs/etl.jar", "--conf", "spark.mesos.role=not-mine"}
	for _, words := range [][]string{argv, shellWords(strings.Join(argv[1:], " "))} {
		c, ok := ParseSparkSubmit(words)
		if !ok || c.AppResource != "local:///jobs/etl.jar" || c.MainClass != "com.example.ETL" || c.InputGB != 12.5 || c.Iterations != 3 ||
			c.Role != "r" || c.AppName != "etl" {
			t.Fatalf("%q: %+v %v", words, c, ok)
		}
	}
	c, ok := ParseSparkSubmit([]string{"spark-submit", "--conf", "spark.mesos.role=r", "--conf", SimInputGBConf + "=-1", "app.jar"})
	if !ok || c.InputGB != 1 || c.Iterations != 1 || c.AppResource != "app.jar" {
		t.Fatalf("defaults: %+v %v", c, ok)
	}
}
