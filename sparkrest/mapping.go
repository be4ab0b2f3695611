package sparkrest

import (
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/sparkpack/sparkpack/scheduler"
)

// Spark properties that map onto the job model.
const (
	PropAppName                  = "spark.app.name"
	PropExecutorInstances        = "spark.executor.instances"
	PropCoresMax                 = "spark.cores.max"
	PropExecutorCores            = "spark.executor.cores"
	PropExecutorMemory           = "spark.executor.memory"
	PropMesosExecutorMemOverhead = "spark.mesos.executor.memoryOverhead"
	PropExecutorMemOverhead      = "spark.executor.memoryOverhead"
	PropDriverCores              = "spark.driver.cores"
	PropDriverMemory             = "spark.driver.memory"
	PropJars                     = "spark.jars"
	// PropSupervise (spark-submit --supervise) asks Spark's dispatcher to
	// restart a driver that fails; sparkpack maps it to the job's retries.
	PropSupervise = "spark.driver.supervise"
)

// PropSparkpackExecutors = "auto" without spark.executor.instances (nor
// spark.cores.max) has sparkpack choose the executors.
const PropSparkpackExecutors = "spark.sparkpack.executors"

// sparkpack's own settings; each also works without the "spark." prefix.
const (
	PropDeadline          = "spark.sparkpack.deadline"
	PropID                = "spark.sparkpack.id"
	PropEstimatedDuration = "spark.sparkpack.estimatedDurationSeconds"
	PropRetries           = "spark.sparkpack.retries"
	PropLabelPrefix       = "spark.sparkpack.label."
	PropNotBefore         = "spark.sparkpack.notBefore"
)

// SuperviseRetries is how often a job submitted with
// spark.driver.supervise=true (and no spark.sparkpack.retries) has its
// failed driver launched again. Spark's dispatcher restarts without a
// bound; sparkpack bounds every job's retries (scheduler.MaxRetries).
const SuperviseRetries = 3

// Defaults where Spark's client sends nothing.
const (
	DefaultExecutorCores    = 1
	DefaultExecutorMemoryMB = 1024 // Spark's spark.executor.memory default, 1g
)

// dropped are properties Spark's client always sends (or that are no-ops)
// and that sparkpack controls itself; see the package documentation.
var dropped = map[string]string{
	"spark.master":            "the dispatcher's address; sparkpack sets the Mesos master",
	"spark.submit.deployMode": "sparkpack runs the driver in client mode on an agent",
	PropAppName:               "becomes the job name",
}

// ToSpec maps a create request onto a job spec (not yet validated: the
// caller runs Spec.Validate). notes are remarks for the response message
// (defaults applied, values capped). defaultExecutors is used when neither
// spark.executor.instances nor spark.cores.max is set.
func ToSpec(req CreateSubmissionRequest, defaultExecutors int) (spec scheduler.Spec, notes []string, err error) {
	if defaultExecutors < 1 {
		defaultExecutors = 1
	}
	spec.App = scheduler.App{
		AppResource: req.AppResource,
		MainClass:   req.MainClass,
		Args:        req.AppArgs,
		Environment: req.EnvironmentVariables,
	}
	props := make(map[string]string, len(req.SparkProperties))
	for k, v := range req.SparkProperties {
		// sparkpack.* (bare) is the same setting as spark.sparkpack.*.
		if strings.HasPrefix(k, "sparkpack.") {
			full := "spark." + k
			if _, dup := req.SparkProperties[full]; dup {
				return spec, nil, badRequest("both %s and %s are set; use one", k, full)
			}
			k = full
		}
		props[k] = v
	}
	take := func(k string) (string, bool) {
		v, ok := props[k]
		delete(props, k)
		return strings.TrimSpace(v), ok
	}

	spec.Name = req.MainClass
	if v, ok := take(PropAppName); ok && v != "" {
		spec.Name = v
	}

	spec.ExecutorCores = DefaultExecutorCores
	if v, ok := take(PropExecutorCores); ok {
		n, err := strconv.Atoi(v)
		if err != nil {
			return spec, nil, badRequest("%s must be a whole number of cores, got %q", PropExecutorCores, truncate(v, 64))
		}
		spec.ExecutorCores = n
	} else {
		notes = append(notes, fmt.Sprintf("%s defaulted to %d", PropExecutorCores, DefaultExecutorCores))
	}

	spec.ExecutorMemoryMB = DefaultExecutorMemoryMB
	if v, ok := take(PropExecutorMemory); ok {
		mb, err := ParseSizeMB(v)
		if err != nil {
			return spec, nil, badRequest("%s: %v", PropExecutorMemory, err)
		}
		spec.ExecutorMemoryMB = mb
	}

	instances, hasInstances := take(PropExecutorInstances)
	coresMax, hasCoresMax := take(PropCoresMax)
	auto, hasAuto := take(PropSparkpackExecutors)
	if hasAuto && !strings.EqualFold(strings.TrimSpace(auto), "auto") {
		return spec, nil, badRequest("%s must be \"auto\" (sparkpack chooses the executors), got %q", PropSparkpackExecutors, truncate(auto, 64))
	}
	if hasAuto && (hasInstances || hasCoresMax) {
		notes = append(notes, fmt.Sprintf("%s ignored: %s or %s sets the executors", PropSparkpackExecutors, PropExecutorInstances, PropCoresMax))
		hasAuto = false
	}
	switch {
	case hasAuto:
		// Right-sized at submission from the learned run times.
		spec.Sizing = &scheduler.Sizing{Auto: true}
	case hasInstances:
		n, err := strconv.Atoi(instances)
		if err != nil {
			return spec, nil, badRequest("%s must be a whole number, got %q", PropExecutorInstances, truncate(instances, 64))
		}
		spec.Executors = n
	case !hasCoresMax:
		spec.Executors = defaultExecutors
		notes = append(notes, fmt.Sprintf("executors defaulted to %d (set %s or %s)", defaultExecutors, PropExecutorInstances, PropCoresMax))
	}
	if hasCoresMax {
		// Spark checks it is numeric (a double); only whole cores can be held.
		f, err := strconv.ParseFloat(coresMax, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < 0 {
			return spec, nil, badRequest("%s must be a number of cores, got %q", PropCoresMax, truncate(coresMax, 64))
		}
		if spec.ExecutorCores > 0 {
			byCores := int(math.Min(f, float64(scheduler.MaxExecutors*scheduler.MaxExecutorCores))) / spec.ExecutorCores
			if byCores < 1 {
				return spec, nil, badRequest("%s=%s is below %s=%d: not even one executor fits", PropCoresMax, coresMax, PropExecutorCores, spec.ExecutorCores)
			}
			if !hasInstances {
				spec.Executors = byCores
			} else if spec.Executors > byCores {
				notes = append(notes, fmt.Sprintf("%s=%d capped to %d by %s=%s", PropExecutorInstances, spec.Executors, byCores, PropCoresMax, coresMax))
				spec.Executors = byCores
			}
		}
	}

	// Spark on Mesos reads spark.mesos.executor.memoryOverhead (MiB);
	// spark.executor.memoryOverhead is the generic size setting.
	mesosOverhead, hasMesos := take(PropMesosExecutorMemOverhead)
	genericOverhead, hasGeneric := take(PropExecutorMemOverhead)
	switch {
	case hasMesos:
		n, err := strconv.Atoi(mesosOverhead)
		if err != nil || n < 1 {
			return spec, nil, badRequest("%s must be a whole number of MiB, got %q", PropMesosExecutorMemOverhead, truncate(mesosOverhead, 64))
		}
		spec.MemoryOverheadMB = n
	case hasGeneric:
		mb, err := ParseSizeMB(genericOverhead)
		if err != nil || mb < 1 {
			return spec, nil, badRequest("%s must be a size such as 512m or 1g, got %q", PropExecutorMemOverhead, truncate(genericOverhead, 64))
		}
		spec.MemoryOverheadMB = mb
	}

	var drv scheduler.Driver
	if v, ok := take(PropDriverCores); ok {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return spec, nil, badRequest("%s must be a number of cores, got %q", PropDriverCores, truncate(v, 64))
		}
		if f <= 0 {
			return spec, nil, badRequest("%s must be more than 0, got %s", PropDriverCores, v)
		}
		drv.Cores = f
	}
	if v, ok := take(PropDriverMemory); ok {
		mb, err := ParseSizeMB(v)
		if err != nil {
			return spec, nil, badRequest("%s: %v", PropDriverMemory, err)
		}
		if mb < 1 {
			return spec, nil, badRequest("%s must be at least 1m, got %q", PropDriverMemory, v)
		}
		drv.MemoryMB = mb
	}
	if drv != (scheduler.Driver{}) {
		spec.Driver = &drv
	}

	if v, ok := take(PropDeadline); ok {
		d, err := ParseDeadline(v)
		if err != nil {
			return spec, nil, badRequest("%s: %v", PropDeadline, err)
		}
		spec.Deadline = d
	}
	if v, ok := take(PropNotBefore); ok {
		t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(v))
		if err != nil {
			return spec, nil, badRequest("%s must be an RFC 3339 time such as 2026-11-22T02:40:00Z, got %q", PropNotBefore, truncate(v, 64))
		}
		spec.NotBefore = &scheduler.NotBefore{Time: t.UTC()}
	}
	if v, ok := take(PropID); ok {
		spec.ID = v
	}
	retriesSet := false
	if v, ok := take(PropRetries); ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > scheduler.MaxRetries {
			return spec, nil, badRequest("%s must be a whole number from 0 to %d, got %q", PropRetries, scheduler.MaxRetries, truncate(v, 64))
		}
		spec.Retries, retriesSet = n, true
	}
	if v, ok := take(PropSupervise); ok {
		switch strings.ToLower(v) {
		case "true":
			if !retriesSet {
				spec.Retries = SuperviseRetries
				notes = append(notes, fmt.Sprintf("%s=true: a failed driver is launched again up to %d times (set %s to choose, at most %d)",
					PropSupervise, SuperviseRetries, PropRetries, scheduler.MaxRetries))
			}
		case "false", "":
		default:
			return spec, nil, badRequest("%s must be true or false, got %q", PropSupervise, truncate(v, 64))
		}
	}
	if v, ok := take(PropEstimatedDuration); ok {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return spec, nil, badRequest("%s must be a number of seconds, got %q", PropEstimatedDuration, truncate(v, 64))
		}
		spec.EstimatedDurationSeconds = f
	}

	conf := map[string]string{}
	for k, v := range props {
		switch {
		case strings.HasPrefix(k, PropLabelPrefix):
			if spec.Labels == nil {
				spec.Labels = map[string]string{}
			}
			spec.Labels[strings.TrimPrefix(k, PropLabelPrefix)] = v
		case strings.HasPrefix(k, "spark.sparkpack."):
			return spec, nil, badRequest("unknown sparkpack property %s (known: %s, %s, %s, %s, %s, %sKEY)", truncate(k, 80), PropDeadline, PropID, PropEstimatedDuration, PropRetries, PropNotBefore, PropLabelPrefix)
		case dropped[k] != "":
		case k == PropJars:
			if rest := withoutJar(v, req.AppResource); rest != "" {
				conf[k] = rest
			}
		case k == "spark.submit.pyFiles" && strings.TrimSpace(v) == "":
		case k == "spark.dynamicAllocation.enabled" && strings.EqualFold(strings.TrimSpace(v), "false"):
		default:
			conf[k] = v
		}
	}
	if len(conf) > 0 {
		spec.App.SparkConf = conf
	}
	sort.Strings(notes)
	return spec, notes, nil
}

// withoutJar removes the application resource from a comma-separated
// spark.jars list.
func withoutJar(list, appResource string) string {
	var keep []string
	for _, j := range strings.Split(list, ",") {
		j = strings.TrimSpace(j)
		if j != "" && j != appResource {
			keep = append(keep, j)
		}
	}
	return strings.Join(keep, ",")
}

var sizeRE = regexp.MustCompile(`^([0-9]+)([a-z]*)$`)

// ParseSizeMB reads a Spark size string in MiB the way Spark reads
// spark.executor.memory: a whole number with an optional unit (b, k, kb, m,
// mb, g, gb, t, tb, p, pb; case-insensitive), MiB when there is none.
// Fractions are refused, as Spark refuses them. Partial MiB are truncated.
func ParseSizeMB(s string) (int, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	m := sizeRE.FindStringSubmatch(s)
	if m == nil {
		return 0, fmt.Errorf("%q is not a size such as 512m, 4g or 1024 (whole numbers only)", truncate(s, 64))
	}
	n, err := strconv.ParseUint(m[1], 10, 64)
	if err != nil || n > 1<<40 {
		return 0, fmt.Errorf("%q is too large", truncate(s, 64))
	}
	var shift uint // bytes = n << shift
	switch m[2] {
	case "b":
		shift = 0
	case "k", "kb":
		shift = 10
	case "", "m", "mb":
		shift = 20
	case "g", "gb":
		shift = 30
	case "t", "tb":
		shift = 40
	case "p", "pb":
		shift = 50
	default:
		return 0, fmt.Errorf("%q has an unknown unit %q (use k, m, g, t or p)", truncate(s, 64), m[2])
	}
	if shift >= 20 {
		mb := n << (shift - 20)
		if mb > math.MaxInt32 || mb>>(shift-20) != n {
			return 0, fmt.Errorf("%q is too large", truncate(s, 64))
		}
		return int(mb), nil
	}
	return int(n >> (20 - shift)), nil
}

// ParseDeadline reads an RFC 3339 time or a number of seconds from submission.
func ParseDeadline(s string) (*scheduler.Deadline, error) {
	s = strings.TrimSpace(s)
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return &scheduler.Deadline{At: &t}, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, fmt.Errorf("must be an RFC 3339 time such as 2026-11-22T10:00:00Z or a number of seconds from now; %q is neither", truncate(s, 64))
	}
	return &scheduler.Deadline{Seconds: &f}, nil
}

// DriverState maps a sparkpack job state onto the dispatcher's driverState.
func DriverState(s scheduler.State) string {
	switch s {
	case scheduler.Submitted, scheduler.Queued, scheduler.Placing, scheduler.Reserving:
		return DriverQueued
	case scheduler.Launching, scheduler.Running:
		return DriverRunning
	case scheduler.Finished:
		return DriverFinished
	case scheduler.Killed, scheduler.Cancelled:
		return DriverKilled
	}
	return DriverFailed // Failed, Rejected, and anything unforeseen
}
