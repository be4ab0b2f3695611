package scheduler

import (
	"fmt"
	"sort"
	"strings"
)

// What a job may not choose about its own launch.
//
// sparkpack runs every driver as
//
//	spark-submit --master M --deploy-mode client --class C --conf k=v ... APP ARGS...
//
// inside a Mesos task it launched in its own role, with the executors'
// role, sizes and quota set by the --conf values it derives (ReservedSparkConf).
// A job chooses its application, main class, arguments, sparkConf and
// environment. Each of the following would let it change instead WHICH
// Spark runs, with WHOSE credentials, or HOW its JVMs are started — and so
// undo the role, sizes and quota sparkpack set (a JVM option
// "-Dspark.mesos.role=*" is read by SparkConf like a --conf; a
// Docker parameter "--privileged" or volume gives the executors the
// agent; another framework id or principal makes the driver someone else).
// They are refused at intake, on every front end, unless the operator
// allows them by name (serve --allow-spark-conf, --allow-env): an operator
// whose submitters are all trusted may want, say, their own executor image.
//
// This does not confine a driver's own code: a driver runs the job's
// code, which can build its own SparkConf or start any program its Mesos
// task may run. Only the Mesos master can confine that (framework ACLs on
// the drivers' principal; docs/deploy.md, "Security").

// launchSparkConf are the Spark properties (Spark 3.5, Mesos backend) that
// choose the Spark installation, its credentials, the way its JVMs or
// containers are launched, or the Mesos framework the driver registers as.
var launchSparkConf = map[string]string{
	// Credentials and identity in Mesos (and in HDFS/Kerberos).
	"spark.mesos.principal":          "chooses the Mesos principal the driver authenticates as",
	"spark.mesos.principal.file":     "chooses the Mesos principal the driver authenticates as",
	"spark.mesos.secret":             "gives the Mesos secret the driver authenticates with",
	"spark.mesos.secret.file":        "chooses the Mesos secret the driver authenticates with",
	"spark.mesos.driver.frameworkId": "chooses the Mesos framework id the driver registers as (another framework's)",
	"spark.mesos.checkpoint":         "changes how the driver's framework registers with Mesos",
	"spark.mesos.failoverTimeout":    "changes how the driver's framework registers with Mesos",
	"spark.kerberos.principal":       "chooses the Kerberos identity of the driver",
	"spark.kerberos.keytab":          "reads a Kerberos keytab from the agent",
	"spark.yarn.principal":           "chooses the Kerberos identity of the driver (old name of spark.kerberos.principal)",
	"spark.yarn.keytab":              "reads a Kerberos keytab from the agent (old name of spark.kerberos.keytab)",
	// The Spark installation the executors run.
	"spark.mesos.executor.home": "chooses the Spark installation executors run (sparkpack sets it with serve --spark-home)",
	"spark.executor.uri":        "chooses the Spark distribution executors download and run",
	"spark.mesos.uris":          "makes Mesos download files into every executor's sandbox",
	"spark.mesos.containerizer": "chooses how executors are containerised",
	"spark.mesos.network.name":  "chooses the container network of the executors",
	// Executables and JVM options.
	"spark.driver.extraJavaOptions":     "adds JVM options to the driver (-Dspark.* options override sparkpack's settings, -javaagent runs code in Spark's launcher)",
	"spark.driver.defaultJavaOptions":   "adds JVM options to the driver (-Dspark.* options override sparkpack's settings)",
	"spark.executor.extraJavaOptions":   "adds JVM options to the executors",
	"spark.executor.defaultJavaOptions": "adds JVM options to the executors",
	"spark.driver.extraClassPath":       "puts classes before Spark's own in the driver JVM's class path",
	"spark.executor.extraClassPath":     "puts classes before Spark's own in the executors' class path",
	"spark.driver.extraLibraryPath":     "loads native libraries of its choice into the driver JVM",
	"spark.executor.extraLibraryPath":   "loads native libraries of its choice into the executors",
	"spark.pyspark.python":              "chooses the program run as the executors' Python",
	"spark.pyspark.driver.python":       "chooses the program run as the driver's Python",
	"spark.r.command":                   "chooses the program run as R",
	"spark.r.driver.command":            "chooses the program run as the driver's R",
	"spark.r.shell.command":             "chooses the program run as R's shell",
	// Executor sizes outside the plan (each would take cpus the plan did not reserve).
	"spark.mesos.mesosExecutor.cores": "adds cpus to every executor beyond executorCores",
	"spark.mesos.extra.cores":         "adds cpus to every executor beyond executorCores",
	"spark.mesos.gpus.max":            "gives executors GPUs the plan did not reserve",
	"spark.mesos.coarse":              "switches Spark to another Mesos scheduling mode than the one sparkpack plans for",
}

// launchSparkConfPrefixes are families of such properties.
var launchSparkConfPrefixes = []struct{ prefix, why string }{
	{"spark.mesos.executor.docker.", "chooses the executors' Docker image, parameters, volumes or ports (sparkpack sets the image with serve --executor-docker-image)"},
	{"spark.mesos.driver.secret.", "reads secrets from the Mesos secret store into the driver"},
	{"spark.mesos.executor.secret.", "reads secrets from the Mesos secret store into the executors"},
	{"spark.mesos.dispatcher.", "configures Spark's Mesos dispatcher, which sparkpack replaces"},
	{"spark.mesos.driverEnv.", "sets the driver's environment through the dispatcher; use the job's environment"},
}

// launchEnv are the environment variables that choose the Spark
// installation and configuration spark-submit uses, the JVM and its
// options, the dynamic linker's libraries, the shell that runs the
// spark-submit script, the programs found on the path, or the identity
// the driver presents.
var launchEnv = map[string]string{
	"SPARK_HOME":                 "chooses the Spark installation spark-submit runs",
	"SPARK_CONF_DIR":             "chooses Spark's configuration directory (spark-defaults.conf, spark-env.sh)",
	"SPARK_ENV_LOADED":           "skips the operator's spark-env.sh",
	"SPARK_SUBMIT_OPTS":          "adds JVM options to spark-submit (-Dspark.* options override sparkpack's settings)",
	"SPARK_DRIVER_MEMORY":        "changes the driver's memory behind driver.memoryMB",
	"SPARK_DIST_CLASSPATH":       "puts classes in Spark's class path",
	"SPARK_CLASSPATH":            "puts classes in Spark's class path",
	"SPARK_JAVA_OPTS":            "adds JVM options",
	"SPARK_DAEMON_JAVA_OPTS":     "adds JVM options",
	"SPARK_LAUNCHER_OPTS":        "adds JVM options to Spark's launcher",
	"SPARK_USER":                 "chooses the user name Spark registers with Mesos and presents to HDFS",
	"HADOOP_USER_NAME":           "chooses the user name presented to HDFS",
	"HADOOP_CONF_DIR":            "chooses the Hadoop configuration (file systems, credentials)",
	"YARN_CONF_DIR":              "chooses the Hadoop configuration",
	"HADOOP_TOKEN_FILE_LOCATION": "reads Hadoop delegation tokens from a file of its choice",
	"KRB5CCNAME":                 "chooses the Kerberos credentials cache",
	"KRB5_CONFIG":                "chooses the Kerberos configuration",
	"JAVA_HOME":                  "chooses the JVM that runs Spark",
	"JAVA_TOOL_OPTIONS":          "adds options to every JVM (-Dspark.* options override sparkpack's settings, -javaagent runs code in the launcher)",
	"JDK_JAVA_OPTIONS":           "adds options to every JVM",
	"_JAVA_OPTIONS":              "adds options to every JVM",
	"CLASSPATH":                  "puts classes in the JVM's class path",
	"PYSPARK_PYTHON":             "chooses the program run as Python",
	"PYSPARK_DRIVER_PYTHON":      "chooses the program run as the driver's Python",
	"PYSPARK_SUBMIT_ARGS":        "passes options to spark-submit from PySpark",
	"SPARKR_DRIVER_R":            "chooses the program run as R",
	"SPARKR_SUBMIT_ARGS":         "passes options to spark-submit from SparkR",
	"PATH":                       "chooses which programs the spark-submit script and the JVM run",
	"BASH_ENV":                   "makes bash run a file of its choice before the spark-submit script",
	"ENV":                        "makes a shell run a file of its choice at start",
	"SHELLOPTS":                  "changes how the spark-submit script runs",
	"BASHOPTS":                   "changes how the spark-submit script runs",
	"IFS":                        "changes how the spark-submit script splits words",
	"PS4":                        "runs commands while the spark-submit script is traced",
	"MESOS_NATIVE_JAVA_LIBRARY":  "chooses the native Mesos library loaded into the driver",
	"MESOS_NATIVE_LIBRARY":       "chooses the native Mesos library loaded into the driver",
}

// launchEnvPrefixes are families of such variables.
var launchEnvPrefixes = []struct{ prefix, why string }{
	{"LD_", "changes what the dynamic linker loads into every program (LD_PRELOAD, LD_LIBRARY_PATH, ...)"},
	{"DYLD_", "changes what the dynamic linker loads into every program"},
	{"GLIBC_", "changes the C library's behaviour in every program"},
	{"MALLOC_", "changes the C library's behaviour in every program"},
	{"LIBPROCESS_", "configures the Mesos library in the driver (its address, TLS, authentication)"},
	{"MESOS_AUTHENTICATE", "configures how the driver authenticates to Mesos"},
	{"MESOS_CREDENTIAL", "gives the driver Mesos credentials"},
	{"MESOS_SSL_", "configures the driver's TLS to Mesos"},
	{"BASH_FUNC_", "defines shell functions in the spark-submit script"},
}

// LaunchSparkConfReason says why a job may not set a Spark property (one
// that changes how its driver or executors are launched), or "".
// spark.executorEnv.NAME is judged as the environment variable NAME.
func LaunchSparkConfReason(key string) string {
	if why, ok := launchSparkConf[key]; ok {
		return why
	}
	for _, p := range launchSparkConfPrefixes {
		if strings.HasPrefix(key, p.prefix) {
			return p.why
		}
	}
	if name, ok := strings.CutPrefix(key, "spark.executorEnv."); ok {
		if why := LaunchEnvReason(name); why != "" {
			return "sets " + name + " for the executors, which " + why
		}
	}
	return ""
}

// LaunchEnvReason says why a job may not set an environment variable (one
// that changes how its driver is launched), or "".
func LaunchEnvReason(name string) string {
	if why, ok := launchEnv[name]; ok {
		return why
	}
	for _, p := range launchEnvPrefixes {
		if strings.HasPrefix(name, p.prefix) {
			return p.why
		}
	}
	return ""
}

// Containment is the operator's policy on the launch settings above: the
// zero value refuses all of them; AllowSparkConf and AllowEnv name those
// the operator lets jobs set.
type Containment struct {
	AllowSparkConf map[string]bool
	AllowEnv       map[string]bool
}

// NewContainment builds the policy of serve --allow-spark-conf and
// --allow-env. A name that is not refused anyway (a typo, or a setting a
// job may always give) or that sparkpack itself sets (ReservedSparkConf)
// is an error naming it.
func NewContainment(sparkConf, env []string) (Containment, error) {
	c := Containment{AllowSparkConf: map[string]bool{}, AllowEnv: map[string]bool{}}
	for _, k := range sparkConf {
		k = strings.TrimSpace(k)
		if k == "" {
			continue
		}
		if _, ok := ReservedSparkConf[k]; ok {
			return Containment{}, fmt.Errorf("--allow-spark-conf %s: sparkpack sets this property itself; it cannot be allowed", k)
		}
		if LaunchSparkConfReason(k) == "" {
			return Containment{}, fmt.Errorf("--allow-spark-conf %s: jobs may set this property already; name only properties sparkpack refuses (see the 400 it answers)", k)
		}
		c.AllowSparkConf[k] = true
	}
	for _, k := range env {
		k = strings.TrimSpace(k)
		if k == "" {
			continue
		}
		if LaunchEnvReason(k) == "" {
			return Containment{}, fmt.Errorf("--allow-env %s: jobs may set this variable already; name only variables sparkpack refuses (see the 400 it answers)", k)
		}
		c.AllowEnv[k] = true
	}
	return c, nil
}

// SparkConfRefused is why the policy refuses a Spark property, or "".
func (c Containment) SparkConfRefused(key string) string {
	if c.AllowSparkConf[key] {
		return ""
	}
	return LaunchSparkConfReason(key)
}

// EnvRefused is why the policy refuses an environment variable, or "".
func (c Containment) EnvRefused(name string) string {
	if c.AllowEnv[name] {
		return ""
	}
	return LaunchEnvReason(name)
}

// Check returns a *FieldError for the first launch setting of the spec
// that the policy does not allow (in sorted order, so that the answer is
// stable), or nil.
func (c Containment) Check(s *Spec) error {
	for _, k := range sortedKeys(s.App.SparkConf) {
		if why := c.SparkConfRefused(k); why != "" {
			return fieldErr("app.sparkConf", "%s %s; sparkpack refuses it so that no job can change how its driver and executors are launched. "+
				"An operator who trusts every submitter can allow it: serve --allow-spark-conf %s (or SPARKPACK_ALLOW_SPARK_CONF)", k, why, k)
		}
	}
	for _, k := range sortedKeys(s.App.Environment) {
		if why := c.EnvRefused(k); why != "" {
			return fieldErr("app.environment", "%s %s; sparkpack refuses it so that no job can change how its driver is launched. "+
				"An operator who trusts every submitter can allow it: serve --allow-env %s (or SPARKPACK_ALLOW_ENV)", k, why, k)
		}
	}
	return nil
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
