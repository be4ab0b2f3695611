package sparksubmit

import (
	"strings"
	"testing"

	"github.com/sparkpack/sparkpack/scheduler"
)

func job() scheduler.Job {
	return scheduler.Job{Spec: scheduler.Spec{
		ID:   "6f1d2c1e-8a7b-4c1d-9e2f-3a4b5c6d7e8f",
		Name: "pi; rm -rf /",
		App: scheduler.App{
			AppResource: "local:///opt/spark/examples/jars/spark-examples.jar",
			MainClass:   "org.apache.spark.examples.SparkPi",
			Args:        []string{"100", "$(reboot)", "a b"},
			SparkConf:   map[string]string{"spark.eventLog.enabled": "true"},
		},
		Executors: 4, ExecutorCores: 2, ExecutorMemoryMB: 4096,
	}}
}

func TestCommand(t *testing.T) {
	argv, err := Command(job(), Options{Master: "10.0.0.1:5050"})
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(argv, "\x00")
	for _, want := range []string{
		"/opt/spark/bin/spark-submit\x00--master\x00mesos://10.0.0.1:5050\x00--deploy-mode\x00client",
		"--class\x00org.apache.spark.examples.SparkPi",
		"--driver-memory\x001024m",
		"--name\x00pi; rm -rf /",
		"--conf\x00spark.cores.max=8",
		"--conf\x00spark.executor.cores=2",
		"--conf\x00spark.executor.memory=4096m",
		"--conf\x00spark.mesos.executor.memoryOverhead=409",
		"--conf\x00spark.mesos.rejectOfferDuration=5s",
		"--conf\x00spark.mesos.role=sparkpack-job-6f1d2c1e-8a7b-4c1d-9e2f-3a4b5c6d7e8f",
		"--conf\x00spark.eventLog.enabled=true",
		"local:///opt/spark/examples/jars/spark-examples.jar\x00100\x00$(reboot)\x00a b",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("argv lacks %q:\n%q", want, argv)
		}
	}
	if !strings.HasSuffix(got, "a b") {
		t.Error("the app arguments must come last")
	}
	if _, err := Command(job(), Options{}); err == nil {
		t.Error("no master accepted")
	}
}

func TestShell(t *testing.T) {
	got := Shell([]string{"spark-submit", "--name", "pi; rm -rf /", "it's", "a=b"})
	want := `spark-submit --name 'pi; rm -rf /' 'it'\''s' a=b`
	if got != want {
		t.Errorf("Shell = %s, want %s", got, want)
	}
}
