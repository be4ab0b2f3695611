package sparksubmit

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/sparkpack/sparkpack/scheduler"
)

// Options are the cluster-wide parts of the command.
type Options struct {
	// SparkSubmit is the path of spark-submit on the agents
	// (default /opt/spark/bin/spark-submit).
	SparkSubmit string
	// Master is the Mesos master URL Spark connects to, e.g.
	// mesos://10.0.0.1:5050 or mesos://zk://zk1:2181/mesos.
	Master string
	// Role overrides the job's role (default scheduler.Role(job.ID)).
	Role string
	// RejectOfferDuration is spark.mesos.rejectOfferDuration (default 5s):
	// how long Spark refuses offers once spark.cores.max is reached.
	RejectOfferDuration string
	// Constraints, if set, becomes spark.mesos.constraints: a second guard
	// keeping executors on the planned agents' attributes.
	Constraints string
	// ExecutorDockerImage, if set, becomes spark.mesos.executor.docker.image.
	ExecutorDockerImage string
	// SparkHome, if set, becomes spark.mesos.executor.home.
	SparkHome string
	// Principal and SecretFile, if set, authenticate Spark's framework.
	Principal  string
	SecretFile string
}

// DefaultSparkSubmit is where the Spark images put spark-submit.
const DefaultSparkSubmit = "/opt/spark/bin/spark-submit"

// Command returns the argument vector (argv[0] is spark-submit) that runs
// the job's driver in client mode against Mesos.
//
// spark-submit has no "--" to end its options; its parser takes the value
// of an option that needs one as the next argument whatever it is, and
// reads the first argument that is neither an option nor a value as the
// application, after which everything is the application's. So every user
// value before the application is given as the value of an option
// (--class, --name, --conf key=value with a "spark." key), and the
// application itself is refused (scheduler.Spec.CheckCommandValues) when
// it starts with a dash or is a resource name spark-submit reserves, as is
// a main class that makes spark-submit read the application's arguments
// as options. The application's arguments follow it and are never parsed.
func Command(j scheduler.Job, o Options) ([]string, error) {
	if o.Master == "" {
		return nil, fmt.Errorf("spark-submit for job %s: no Mesos master URL", j.ID)
	}
	if err := j.Spec.CheckCommandValues(); err != nil {
		return nil, fmt.Errorf("spark-submit for job %s: %w", j.ID, err)
	}
	if !strings.HasPrefix(o.Master, "mesos://") {
		o.Master = "mesos://" + o.Master
	}
	if o.SparkSubmit == "" {
		o.SparkSubmit = DefaultSparkSubmit
	}
	if o.Role == "" {
		o.Role = scheduler.Role(j.ID)
	}
	if o.RejectOfferDuration == "" {
		o.RejectOfferDuration = "5s"
	}
	conf := Conf(j, o)
	keys := make([]string, 0, len(conf))
	for k := range conf {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	drv := j.DriverOrDefault()
	argv := []string{o.SparkSubmit,
		"--master", o.Master,
		"--deploy-mode", "client",
		"--class", j.App.MainClass,
		"--driver-memory", strconv.Itoa(drv.MemoryMB) + "m",
	}
	if j.Name != "" {
		argv = append(argv, "--name", j.Name)
	}
	for _, k := range keys {
		argv = append(argv, "--conf", k+"="+conf[k])
	}
	argv = append(argv, j.App.AppResource)
	argv = append(argv, j.App.Args...)
	return argv, nil
}

// Conf returns every Spark property of the job's driver: the job's own
// sparkConf overlaid with the settings sparkpack derives (which win; the
// API refuses jobs that try to set them).
func Conf(j scheduler.Job, o Options) map[string]string {
	conf := make(map[string]string, len(j.App.SparkConf)+8)
	for k, v := range j.App.SparkConf {
		conf[k] = v
	}
	role := o.Role
	if role == "" {
		role = scheduler.Role(j.ID)
	}
	conf["spark.mesos.role"] = role
	conf["spark.cores.max"] = strconv.Itoa(j.Executors * j.ExecutorCores)
	conf["spark.executor.cores"] = strconv.Itoa(j.ExecutorCores)
	conf["spark.executor.memory"] = strconv.Itoa(j.ExecutorMemoryMB) + "m"
	conf["spark.mesos.executor.memoryOverhead"] = strconv.Itoa(j.OverheadMB())
	if o.RejectOfferDuration != "" {
		conf["spark.mesos.rejectOfferDuration"] = o.RejectOfferDuration
	} else {
		conf["spark.mesos.rejectOfferDuration"] = "5s"
	}
	if o.Constraints != "" {
		conf["spark.mesos.constraints"] = o.Constraints
	}
	if o.ExecutorDockerImage != "" {
		conf["spark.mesos.executor.docker.image"] = o.ExecutorDockerImage
	}
	if o.SparkHome != "" {
		conf["spark.mesos.executor.home"] = o.SparkHome
	}
	if o.Principal != "" {
		conf["spark.mesos.principal"] = o.Principal
	}
	if o.SecretFile != "" {
		conf["spark.mesos.secret.file"] = o.SecretFile
	}
	return conf
}

// Shell renders argv for display (the dashboard, logs), quoting each
// argument for a POSIX shell. It is never executed.
func Shell(argv []string) string {
	out := make([]string, len(argv))
	for i, a := range argv {
		if a != "" && strings.IndexFunc(a, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=,@%+", r))
		}) < 0 {
			out[i] = a
			continue
		}
		out[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(out, " ")
}
