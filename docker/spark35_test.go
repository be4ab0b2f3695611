package docker

import (
	"sort"
	"strings"
	"testing"

	"github.com/sparkpack/sparkpack/scheduler"
	"github.com/sparkpack/sparkpack/sparksubmit"
)

// spark35SubmitOptions are spark-submit options that exist in Spark 3.5,
// with whether they take a value. Verified against Spark's
// launcher/src/main/java/org/apache/spark/launcher/SparkSubmitOptionParser.java
// (the option names spark-submit parses) and docs/submitting-applications.md.
// Only options sparkpack could plausibly emit are listed; add one here only
// after checking it in those sources.
var spark35SubmitOptions = map[string]bool{
	"--master":               true,
	"--deploy-mode":          true,
	"--class":                true,
	"--name":                 true,
	"--conf":                 true,
	"--driver-memory":        true,
	"--driver-cores":         true,
	"--driver-java-options":  true,
	"--driver-class-path":    true,
	"--driver-library-path":  true,
	"--executor-memory":      true,
	"--total-executor-cores": true,
	"--jars":                 true,
	"--files":                true,
	"--packages":             true,
	"--properties-file":      true,
	"--proxy-user":           true,
	"--supervise":            false,
	"--verbose":              false,
}

// spark35Properties are the Spark 3.5 properties sparkpack sets itself,
// with where each is defined. Verified against Spark 3.5's
// resource-managers/mesos/src/main/scala/org/apache/spark/deploy/mesos/config.scala
// (the spark.mesos.* keys, with docs/running-on-mesos.md) and
// core/src/main/scala/org/apache/spark/internal/config/package.scala
// (docs/configuration.md).
var spark35Properties = map[string]string{
	"spark.cores.max":                     "core config CORES_MAX; with Mesos coarse mode the cap on the job's cores",
	"spark.executor.cores":                "core config EXECUTOR_CORES",
	"spark.executor.memory":               "core config EXECUTOR_MEMORY (size, MiB by default)",
	"spark.app.name":                      "core; set through --name",
	"spark.mesos.role":                    "mesos config ROLE: the framework's role",
	"spark.mesos.executor.memoryOverhead": "mesos config EXECUTOR_MEMORY_OVERHEAD (int, MiB)",
	"spark.mesos.rejectOfferDuration":     "mesos config REJECT_OFFER_DURATION (time, default 120s)",
	"spark.mesos.constraints":             "mesos config CONSTRAINTS (attribute constraints for executors)",
	"spark.mesos.executor.docker.image":   "mesos config EXECUTOR_DOCKER_IMAGE",
	"spark.mesos.executor.home":           "mesos config EXECUTOR_HOME",
	"spark.mesos.principal":               "mesos config CREDENTIAL_PRINCIPAL",
	"spark.mesos.secret.file":             "mesos config CREDENTIAL_SECRET_FILE",
}

// TestSparkSubmitUsesSpark35Options builds the driver command for a table
// of jobs and options and checks every option and every property sparkpack
// adds against the tables above. Properties a job brings in its own
// sparkConf are the user's and are not checked.
func TestSparkSubmitUsesSpark35Options(t *testing.T) {
	minimal := scheduler.Job{Spec: scheduler.Spec{
		ID:        "6f1d2c1e-8a7b-4c1d-9e2f-3a4b5c6d7e8f",
		App:       scheduler.App{AppResource: "local:///opt/spark/examples/jars/spark-examples.jar", MainClass: "org.apache.spark.examples.SparkPi"},
		Executors: 2, ExecutorCores: 1, ExecutorMemoryMB: 1024,
	}}
	full := minimal
	full.Name = "SparkPi with everything"
	full.App.Args = []string{"100", "--conf", "not.an.option"} // app arguments come after the resource
	full.App.SparkConf = map[string]string{"spark.eventLog.enabled": "true", "spark.user.own": "x"}
	full.MemoryOverheadMB = 512
	full.Driver = &scheduler.Driver{Cores: 2, MemoryMB: 2048}
	for _, c := range []struct {
		name string
		job  scheduler.Job
		opts sparksubmit.Options
	}{
		{"minimal", minimal, sparksubmit.Options{Master: "mesos-master:5050"}},
		{"every option", full, sparksubmit.Options{
			Master: "mesos://zk://zookeeper:2181/mesos", SparkSubmit: "/opt/spark/bin/spark-submit",
			Role: "sparkpack-job-x", RejectOfferDuration: "5s", Constraints: "instance_type:m.xlarge",
			ExecutorDockerImage: "apache/spark:3.5.8", SparkHome: "/opt/spark",
			Principal: "spark", SecretFile: "/etc/mesos-sparkpack/spark.secret",
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			argv, err := sparksubmit.Command(c.job, c.opts)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasSuffix(argv[0], "spark-submit") {
				t.Fatalf("argv[0] = %q", argv[0])
			}
			// Options end at the application resource.
			end := -1
			for i, a := range argv {
				if a == c.job.App.AppResource {
					end = i
					break
				}
			}
			if end < 0 {
				t.Fatalf("the application resource is missing: %q", argv)
			}
			seen := map[string]bool{}
			for i := 1; i < end; i++ {
				opt := argv[i]
				takesValue, ok := spark35SubmitOptions[opt]
				if !ok {
					t.Errorf("argv[%d] = %q is not a Spark 3.5 spark-submit option (or a value out of place): %q", i, opt, argv)
					continue
				}
				if !takesValue {
					continue
				}
				if i+1 >= end {
					t.Errorf("%s has no value", opt)
					break
				}
				val := argv[i+1]
				i++
				if opt == "--deploy-mode" && val != "client" && val != "cluster" {
					t.Errorf("--deploy-mode %q", val)
				}
				if opt == "--master" && !strings.HasPrefix(val, "mesos://") {
					t.Errorf("--master %q is not a Mesos master URL", val)
				}
				if opt != "--conf" {
					continue
				}
				key, _, ok := strings.Cut(val, "=")
				if !ok {
					t.Errorf("--conf %q is not KEY=VALUE", val)
					continue
				}
				seen[key] = true
				if _, user := c.job.App.SparkConf[key]; user {
					continue
				}
				if _, ok := spark35Properties[key]; !ok {
					t.Errorf("--conf %s: sparkpack sets a property that is not in the verified Spark 3.5 table", key)
				}
				if !strings.HasPrefix(key, "spark.") {
					t.Errorf("--conf %s: spark-submit ignores keys without the spark. prefix", key)
				}
			}
			// The pinning recipe's settings are always there.
			for _, k := range []string{"spark.mesos.role", "spark.cores.max", "spark.executor.cores", "spark.executor.memory", "spark.mesos.executor.memoryOverhead", "spark.mesos.rejectOfferDuration"} {
				if !seen[k] {
					t.Errorf("the command does not set %s", k)
				}
			}
		})
	}
	// Every property sparkpack derives is in the table (or documented as
	// not a Spark property): the table and scheduler.ReservedSparkConf
	// describe the same world.
	var missing []string
	for k := range scheduler.ReservedSparkConf {
		switch k {
		case "spark.master", "spark.submit.deployMode", "spark.executor.instances", "spark.executor.memoryOverhead",
			"spark.driver.cores", "spark.driver.memory", "spark.dynamicAllocation.enabled":
			// Real Spark 3.5 properties sparkpack expresses otherwise
			// (options, or by not setting them).
			continue
		case "spark.driver.supervise":
			// Real (core config DRIVER_SUPERVISE, set by spark-submit
			// --supervise in cluster mode); sparkpack expresses it as the
			// job's retries and refuses it in sparkConf.
			continue
		}
		if _, ok := spark35Properties[k]; !ok {
			missing = append(missing, k)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("scheduler.ReservedSparkConf has properties missing from the verified Spark 3.5 table: %v", missing)
	}
}
