package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/sparkpack/sparkpack/scheduler"
	"github.com/sparkpack/sparkpack/sparksubmit"
)

// The arguments sparkpack builds (package sparksubmit) parse into the
// settings sparkpack derived them from.
func TestParsesWhatSparkpackBuilds(t *testing.T) {
	job := scheduler.Job{Spec: scheduler.Spec{ID: "6f1d2c1e-8a7b-4c1d-9e2f-3a4b5c6d7e8f", Name: "pi; rm -rf /",
		App: scheduler.App{AppResource: "local:///opt/spark/examples/jars/spark-examples.jar", MainClass: "org.apache.spark.examples.SparkPi",
			Args: []string{"100", "--conf", "not=spark"}, SparkConf: map[string]string{"spark.eventLog.enabled": "true"}},
		Executors: 4, ExecutorCores: 2, ExecutorMemoryMB: 4096}}
	argv, err := sparksubmit.Command(job, sparksubmit.Options{Master: "127.0.0.1:5050", SparkSubmit: "/x/spark-submit"})
	if err != nil {
		t.Fatal(err)
	}
	s, err := ParseSubmit(argv[1:])
	if err != nil {
		t.Fatal(err)
	}
	if s.Master != "mesos://127.0.0.1:5050" || s.MasterHostPort() != "127.0.0.1:5050" || s.Name != job.Name ||
		s.MainClass != job.App.MainClass || s.PrimaryResource != job.App.AppResource || fmt.Sprint(s.AppArgs) != fmt.Sprint(job.App.Args) {
		t.Fatalf("parsed %+v", s)
	}
	st, err := s.Settings()
	if err != nil {
		t.Fatal(err)
	}
	if st.Role != scheduler.Role(job.ID) || st.MaxCores != 8 || st.ExecutorCores != 2 || st.ExecutorMemMB != 4096+job.OverheadMB() ||
		st.RejectReachedMax != 5*time.Second || st.RejectUnmetConstr != 5*time.Second || st.ShutdownTimeout != 10*time.Second {
		t.Fatalf("settings %+v", st)
	}
	if s.Conf["spark.eventLog.enabled"] != "true" {
		t.Errorf("the job's own conf is lost: %v", s.Conf)
	}
}

func TestParseSubmitErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--class", "X", "a.jar"}, "--master must be set"},
		{[]string{"--master", "yarn", "--class", "X", "a.jar"}, "only runs on Mesos"},
		{[]string{"--master", "mesos://zk://h:2181/mesos", "--class", "X", "a.jar"}, "ZooKeeper"},
		{[]string{"--master", "mesos://h:5050", "--deploy-mode", "cluster", "--class", "X", "a.jar"}, "client mode only"},
		{[]string{"--master", "mesos://h:5050", "a.jar"}, "no main class"},
		{[]string{"--master", "mesos://h:5050", "--class", "X"}, "primary resource"},
		{[]string{"--master", "mesos://h:5050", "--conf", "novalue", "--class", "X", "a.jar"}, "without '='"},
		{[]string{"--master", "mesos://h:5050", "--bogus", "--class", "X", "a.jar"}, "unrecognized option"},
		{[]string{"--master"}, "missing argument"},
		{[]string{"--master", "mesos://h:5050", "--verbose=1", "--class", "X", "a.jar"}, "takes no value"},
	} {
		if _, err := ParseSubmit(tc.args); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseSubmit(%q) = %v, want an error containing %q", tc.args, err, tc.want)
		}
	}
}

func TestSettingsDefaultsAndOverrides(t *testing.T) {
	base := []string{"--master=mesos://h:5050", "--class", "X"}
	for _, tc := range []struct {
		extra []string
		check func(*Settings) bool
		want  string
	}{
		{nil, func(s *Settings) bool {
			return s.ExecutorMemMB == 1024+384 && s.ExecutorCores == 0 && s.MaxCores > 1<<30 && s.RejectReachedMax == 120*time.Second && s.Role == ""
		}, "Spark's defaults"},
		{[]string{"--executor-memory", "8g", "--conf", "spark.executor.memory=1g"}, func(s *Settings) bool { return s.ExecutorMemMB == 8192+819 }, "--executor-memory wins over --conf, 10% overhead"},
		{[]string{"--total-executor-cores", "7", "--executor-cores", "2"}, func(s *Settings) bool { return s.MaxCores == 6 }, "cores.max rounded down to whole executors"},
		{[]string{"--conf", "spark.mesos.rejectOfferDuration=2min", "--conf", "spark.mesos.rejectOfferDurationForUnmetConstraints=7s"},
			func(s *Settings) bool {
				return s.RejectReachedMax == 2*time.Minute && s.RejectUnmetConstr == 7*time.Second
			}, "reject durations"},
		{[]string{"--conf", "spark.mesos.constraints=location:cloud;price:0.2,0.4;gpu"},
			func(s *Settings) bool {
				return fmt.Sprint(s.Constraints) == "map[gpu:[] location:[cloud] price:[0.2 0.4]]"
			}, "constraints"},
		{[]string{"--conf", "spark.mesos.task.labels=a:1,b:2"}, func(s *Settings) bool { return s.TaskLabels["b"] == "2" }, "task labels"},
	} {
		args := append(append(append([]string{}, base...), tc.extra...), "a.jar")
		sub, err := ParseSubmit(args)
		if err != nil {
			t.Fatalf("%s: %v", tc.want, err)
		}
		st, err := sub.Settings()
		if err != nil || !tc.check(st) {
			t.Errorf("%s: %+v, %v", tc.want, st, err)
		}
	}
	for _, bad := range [][]string{{"--executor-cores", "two"}, {"--executor-memory", "lots"}, {"--conf", "spark.mesos.executor.memoryOverhead=384m"},
		{"--conf", "spark.mesos.rejectOfferDuration=soon"}, {"--conf", "spark.dynamicAllocation.enabled=true"}, {"--conf", "spark.mesos.task.labels=x"}} {
		sub, err := ParseSubmit(append(append(append([]string{}, base...), bad...), "a.jar"))
		if err != nil {
			continue
		}
		if _, err := sub.Settings(); err == nil {
			t.Errorf("Settings accepted %q", bad)
		}
	}
}

func offer(id, agent string, attrs []mesos.Attribute, res ...mesos.Resource) mesos.Offer {
	return mesos.Offer{ID: mesos.OfferID{Value: id}, AgentID: mesos.AgentID{Value: agent}, Hostname: agent, Resources: res, Attributes: attrs}
}

func res(name string, v float64, role string) mesos.Resource {
	r := mesos.Resource{Name: name, Type: mesos.SCALAR.Enum(), Scalar: &mesos.Value_Scalar{Value: v}, Role: &role}
	if role != "*" {
		r.Reservation = &mesos.Resource_ReservationInfo{}
	}
	return r
}

// Executors are built round-robin over the offers, one per offer per
// round, from an offer's resources in their order, up to cores.max.
func TestBuildTasksRoundRobin(t *testing.T) {
	b := &backend{st: &Settings{MaxCores: 8, ExecutorCores: 2, ExecutorMemMB: 2432}, appName: "app", log: func(string, ...any) {},
		coresByTask: map[string]int{}, agents: map[string]*agentState{}}
	offers := []mesos.Offer{
		offer("o1", "a1", nil, res("cpus", 4, "r"), res("mem", 8192, "r"), res("cpus", 4, "*"), res("mem", 8192, "*")),
		offer("o2", "a2", nil, res("cpus", 8, "*"), res("mem", 32768, "*")),
		offer("o3", "a3", nil, res("cpus", 1, "*"), res("mem", 32768, "*")),
	}
	tasks := b.buildTasks(offers)
	if len(tasks["o1"]) != 2 || len(tasks["o2"]) != 2 || len(tasks["o3"]) != 0 || b.acquired != 8 {
		t.Fatalf("executors per offer: o1 %d o2 %d o3 %d (acquired %d), want 2 2 0 (8)", len(tasks["o1"]), len(tasks["o2"]), len(tasks["o3"]), b.acquired)
	}
	for _, ti := range tasks["o1"] {
		for _, r := range ti.Resources {
			if r.GetRole() != "r" {
				t.Errorf("executor %s on o1 uses %s of role %q; the reservation comes first in the offer", ti.TaskID.Value, r.Name, r.GetRole())
			}
		}
	}
	if got := tasks["o1"][0].Name; got != "app 0" {
		t.Errorf("first executor is named %q, want %q", got, "app 0")
	}
	// cores.max reached: nothing more, however big the offer.
	if more := b.buildTasks([]mesos.Offer{offer("o4", "a4", nil, res("cpus", 16, "*"), res("mem", 65536, "*"))}); len(more["o4"]) != 0 {
		t.Errorf("launched beyond spark.cores.max: %v", more)
	}
}

func TestConstraintsAndFailures(t *testing.T) {
	text := func(n, v string) mesos.Attribute {
		return mesos.Attribute{Name: n, Type: mesos.TEXT, Text: &mesos.Value_Text{Value: v}}
	}
	scalarAttr := func(n string, v float64) mesos.Attribute {
		return mesos.Attribute{Name: n, Type: mesos.SCALAR, Scalar: &mesos.Value_Scalar{Value: v}}
	}
	attrs := []mesos.Attribute{text("location", "cloud"), scalarAttr("price", 0.48)}
	for _, tc := range []struct {
		cons map[string][]string
		want bool
	}{
		{nil, true},
		{map[string][]string{"location": {"cloud"}}, true},
		{map[string][]string{"location": {"local"}}, false},
		{map[string][]string{"price": {"0.5"}}, false},
		{map[string][]string{"price": {"0.24"}}, true}, // a scalar attribute must be at least the value
		{map[string][]string{"location": nil}, true},
		{map[string][]string{"gpu": nil}, false},
	} {
		if got := matchesConstraints(tc.cons, attrs); got != tc.want {
			t.Errorf("constraints %v on %v: %v, want %v", tc.cons, attrs, got, tc.want)
		}
	}
	b := &backend{st: &Settings{MaxCores: 100, ExecutorCores: 1, ExecutorMemMB: 100}, agents: map[string]*agentState{"a1": {failures: maxAgentFailures}}}
	if b.canLaunch("a1", []mesos.Resource{res("cpus", 4, "*"), res("mem", 1000, "*")}) {
		t.Error("an agent with two failed executors still gets executors")
	}
}

func FuzzParseSubmit(f *testing.F) {
	f.Add("--master\x00mesos://h:5050\x00--class\x00X\x00--conf\x00spark.cores.max=4\x00a.jar\x001")
	f.Add("--master=mesos://h:5050\x00--executor-memory\x004g\x00--class\x00X\x00a.jar")
	f.Add("--conf\x00=\x00-c\x00a=b")
	f.Add("--master\x00mesos://h:5050\x00--conf\x00spark.mesos.executor.memoryOverhead=-5000\x00--class\x00X\x00a.jar")
	f.Add("--master\x00mesos://h:5050\x00--conf\x00spark.mesos.executor.memoryOverhead=9223372036854775000\x00--class\x00X\x00a.jar")
	f.Add("--master\x00mesos://h:5050\x00--executor-memory\x008796093022208t\x00--class\x00X\x00a.jar")
	f.Add("--master\x00mesos://h:5050\x00--executor-memory\x009007199254740992g\x00--class\x00X\x00a.jar")
	f.Add("--master\x00mesos://h:5050\x00--conf\x00spark.mesos.rejectOfferDuration=1000000000d\x00--class\x00X\x00a.jar")
	f.Fuzz(func(t *testing.T, joined string) {
		args := strings.Split(joined, "\x00")
		s, err := ParseSubmit(args)
		if err != nil {
			return
		}
		if s.PrimaryResource == "" || !strings.HasPrefix(s.Master, "mesos://") {
			t.Fatalf("accepted %q without a resource or a Mesos master: %+v", args, s)
		}
		if st, err := s.Settings(); err == nil && (st.ExecutorMemMB < 0 || st.MaxCores < 0 && st.ExecutorCores > 0 ||
			st.RejectUnmetConstr < 0 || st.RejectReachedMax < 0 || st.ShutdownTimeout < 0) {
			t.Fatalf("settings %+v from %q", st, args)
		}
	})
}
