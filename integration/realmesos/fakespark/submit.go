package main

import (
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// Submit is a parsed spark-submit command line.
type Submit struct {
	Master          string
	DeployMode      string
	MainClass       string
	Name            string
	PrimaryResource string
	AppArgs         []string
	// Conf holds every Spark property: --conf pairs, overridden by the
	// dedicated options (--executor-memory and so on), as spark-submit
	// resolves them.
	Conf map[string]string
	// Verbose is --verbose.
	Verbose bool
}

// spark-submit's options that take a value (SparkSubmitOptionParser).
var valueOpts = map[string]string{
	"--master": "", "--deploy-mode": "", "--class": "", "--name": "spark.app.name",
	"--jars": "spark.jars", "--packages": "spark.jars.packages", "--exclude-packages": "spark.jars.excludes",
	"--repositories": "spark.jars.repositories", "--files": "spark.files", "--archives": "spark.archives",
	"--conf": "", "-c": "", "--properties-file": "",
	"--driver-memory": "spark.driver.memory", "--driver-java-options": "spark.driver.extraJavaOptions",
	"--driver-library-path": "spark.driver.extraLibraryPath", "--driver-class-path": "spark.driver.extraClassPath",
	"--driver-cores": "spark.driver.cores", "--executor-memory": "spark.executor.memory",
	"--executor-cores": "spark.executor.cores", "--total-executor-cores": "spark.cores.max",
	"--num-executors": "spark.executor.instances", "--proxy-user": "", "--py-files": "spark.submit.pyFiles",
	"--queue": "spark.yarn.queue", "--principal": "spark.kerberos.principal", "--keytab": "spark.kerberos.keytab",
	"--kill": "", "--status": "",
}

// spark-submit's switches.
var switchOpts = map[string]bool{"--verbose": true, "-v": true, "--supervise": true, "--help": true, "-h": true,
	"--version": true, "--usage-error": true}

// ParseSubmit parses spark-submit's arguments (without argv[0]) the way
// spark-submit does: options until the primary resource, then the
// application's arguments untouched.
func ParseSubmit(args []string) (*Submit, error) {
	s := &Submit{Conf: map[string]string{}, DeployMode: "client"}
	explicit := map[string]string{}
	i := 0
	for ; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") || a == "-" {
			break
		}
		name, value, hasValue := a, "", false
		if strings.HasPrefix(a, "--") {
			if n, v, ok := strings.Cut(a, "="); ok {
				name, value, hasValue = n, v, true
			}
		}
		if switchOpts[name] {
			if hasValue {
				return nil, fmt.Errorf("option %s takes no value", name)
			}
			switch name {
			case "--verbose", "-v":
				s.Verbose = true
			case "--help", "-h", "--version", "--usage-error":
				return nil, fmt.Errorf("%s is not supported by the Spark stand-in", name)
			}
			continue
		}
		key, known := valueOpts[name]
		if !known {
			return nil, fmt.Errorf("unrecognized option '%s'", a)
		}
		if !hasValue {
			if i+1 >= len(args) {
				return nil, fmt.Errorf("missing argument for option '%s'", name)
			}
			i++
			value = args[i]
		}
		switch name {
		case "--master":
			s.Master = value
		case "--deploy-mode":
			s.DeployMode = value
		case "--class":
			s.MainClass = value
		case "--conf", "-c":
			k, v, ok := strings.Cut(value, "=")
			if !ok || k == "" {
				return nil, fmt.Errorf("Spark config without '=': %s", value)
			}
			s.Conf[k] = v
		case "--properties-file", "--proxy-user", "--kill", "--status":
			return nil, fmt.Errorf("option %s is not supported by the Spark stand-in", name)
		}
		if key != "" {
			explicit[key] = value
		}
	}
	if i < len(args) {
		s.PrimaryResource = args[i]
		s.AppArgs = append([]string(nil), args[i+1:]...)
	}
	for k, v := range explicit {
		s.Conf[k] = v
	}
	if s.Master == "" {
		s.Master = s.Conf["spark.master"]
	}
	switch {
	case s.Master == "":
		return nil, errors.New("--master must be set (mesos://host:port)")
	case !strings.HasPrefix(s.Master, "mesos://"):
		return nil, fmt.Errorf("master %q: the stand-in only runs on Mesos (mesos://host:port)", s.Master)
	case strings.HasPrefix(s.Master, "mesos://zk://"):
		return nil, fmt.Errorf("master %q: ZooKeeper masters are not supported by the stand-in", s.Master)
	case s.DeployMode != "client":
		return nil, fmt.Errorf("deploy mode %q: the stand-in runs drivers in client mode only", s.DeployMode)
	case s.PrimaryResource == "":
		return nil, errors.New("must specify a primary resource (JAR or Python file)")
	case s.MainClass == "" && strings.HasSuffix(s.PrimaryResource, ".jar"):
		return nil, errors.New("no main class set in JAR; please specify one with --class")
	}
	s.Name = s.Conf["spark.app.name"]
	if s.Name == "" {
		s.Name = s.MainClass
		if s.Name == "" {
			s.Name = s.PrimaryResource
		}
	}
	return s, nil
}

// MasterHostPort is the master's host:port.
func (s *Submit) MasterHostPort() string { return strings.TrimPrefix(s.Master, "mesos://") }

// Settings are the properties the coarse-grained backend uses, resolved
// with Spark 3.5's defaults.
type Settings struct {
	Role              string // "" registers in role "*"
	MaxCores          int    // spark.cores.max rounded down to whole executors
	ExecutorCores     int    // 0: as many as an offer has, up to MaxCores
	ExecutorMemMB     int    // spark.executor.memory + overhead
	RejectUnmetConstr time.Duration
	RejectReachedMax  time.Duration
	ShutdownTimeout   time.Duration
	FailoverTimeout   float64
	Constraints       map[string][]string
	TaskLabels        map[string]string
	Principal, Secret string
	ExtraCores        int
}

// Settings resolves the backend's settings from the properties.
func (s *Submit) Settings() (*Settings, error) {
	c := s.Conf
	st := &Settings{Role: c["spark.mesos.role"]}
	intConf := func(key string, def int) (int, error) {
		v, ok := c[key]
		if !ok {
			return def, nil
		}
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil {
			return 0, fmt.Errorf("%s should be int, but was %s", key, v)
		}
		return n, nil
	}
	var err error
	if st.ExecutorCores, err = intConf("spark.executor.cores", 0); err != nil {
		return nil, err
	}
	if st.ExecutorCores < 0 {
		return nil, fmt.Errorf("spark.executor.cores must be positive, got %d", st.ExecutorCores)
	}
	maxCores, err := intConf("spark.cores.max", math.MaxInt32)
	if err != nil {
		return nil, err
	}
	if maxCores > 0 {
		maxCores -= maxCores % max(st.ExecutorCores, 1) // a multiple of the smallest executor
	}
	st.MaxCores = maxCores
	memMB := 1024
	if v, ok := c["spark.executor.memory"]; ok {
		if memMB, err = memoryMB(v); err != nil {
			return nil, fmt.Errorf("spark.executor.memory: %w", err)
		}
	}
	overhead := max(int(0.10*float64(memMB)), 384)
	if _, ok := c["spark.mesos.executor.memoryOverhead"]; ok {
		if overhead, err = intConf("spark.mesos.executor.memoryOverhead", 0); err != nil {
			return nil, err
		}
		if overhead < 0 || overhead > math.MaxInt32 {
			// Negative or huge, the executor's memory was negative.
			return nil, fmt.Errorf("spark.mesos.executor.memoryOverhead must be a number of MiB from 0 to %d, but was %d", math.MaxInt32, overhead)
		}
	}
	st.ExecutorMemMB = memMB + overhead
	reject := 120 * time.Second
	if v, ok := c["spark.mesos.rejectOfferDuration"]; ok {
		if reject, err = sparkDuration(v); err != nil {
			return nil, fmt.Errorf("spark.mesos.rejectOfferDuration: %w", err)
		}
	}
	st.RejectUnmetConstr, st.RejectReachedMax = reject, reject
	if v, ok := c["spark.mesos.rejectOfferDurationForUnmetConstraints"]; ok {
		if st.RejectUnmetConstr, err = sparkDuration(v); err != nil {
			return nil, err
		}
	}
	if v, ok := c["spark.mesos.rejectOfferDurationForReachedMaxCores"]; ok {
		if st.RejectReachedMax, err = sparkDuration(v); err != nil {
			return nil, err
		}
	}
	st.ShutdownTimeout = 10 * time.Second
	if v, ok := c["spark.mesos.coarse.shutdownTimeout"]; ok {
		if st.ShutdownTimeout, err = sparkDuration(v); err != nil {
			return nil, err
		}
	}
	if v, ok := c["spark.mesos.driver.failoverTimeout"]; ok {
		if st.FailoverTimeout, err = strconv.ParseFloat(v, 64); err != nil || st.FailoverTimeout < 0 {
			return nil, fmt.Errorf("spark.mesos.driver.failoverTimeout should be a number of seconds, but was %s", v)
		}
	}
	if st.Constraints, err = parseConstraints(c["spark.mesos.constraints"]); err != nil {
		return nil, err
	}
	if v := c["spark.mesos.task.labels"]; v != "" {
		st.TaskLabels = map[string]string{}
		for _, kv := range strings.Split(v, ",") {
			k, val, ok := strings.Cut(kv, ":")
			if !ok {
				return nil, fmt.Errorf("spark.mesos.task.labels: %q is not key:value", kv)
			}
			st.TaskLabels[k] = val
		}
	}
	if st.ExtraCores, err = intConf("spark.mesos.extra.cores", 0); err != nil {
		return nil, err
	}
	st.Principal = c["spark.mesos.principal"]
	st.Secret = c["spark.mesos.secret"]
	if f := c["spark.mesos.secret.file"]; f != "" && st.Secret == "" {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("spark.mesos.secret.file: %w", err)
		}
		st.Secret = strings.TrimSpace(string(b))
	}
	if c["spark.dynamicAllocation.enabled"] == "true" {
		return nil, errors.New("dynamic allocation is not supported by the Spark stand-in")
	}
	return st, nil
}

// memoryMB parses a Spark size in MiB ("4096m", "4g", "4096" = MiB).
func memoryMB(s string) (int, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	num := strings.TrimRightFunc(s, unicode.IsLetter)
	unit := s[len(num):]
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("size %q must be a whole number with an optional unit (k, m, g, t)", s)
	}
	var mb int64
	switch unit {
	case "", "m", "mb":
		mb = n
	case "k", "kb":
		mb = n / 1024
	case "g", "gb":
		mb = n * 1024
	case "t", "tb":
		mb = n * 1024 * 1024
	case "b":
		mb = n / (1024 * 1024)
	default:
		return 0, fmt.Errorf("size %q: unknown unit %q", s, unit)
	}
	// n above MaxInt32 is too large in any unit that multiplies (and
	// 8796093022208t multiplied to a negative size).
	if mb > math.MaxInt32 || n > math.MaxInt32 && (unit == "g" || unit == "gb" || unit == "t" || unit == "tb") {
		return 0, fmt.Errorf("size %q is too large", s)
	}
	return int(mb), nil
}

// sparkDuration parses a Spark time string; a plain number is seconds.
func sparkDuration(s string) (time.Duration, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	num := strings.TrimRightFunc(s, unicode.IsLetter)
	unit := s[len(num):]
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n < 0 || n > 1e9 {
		return 0, fmt.Errorf("time %q must be a whole number with an optional unit (ms, s, m/min, h, d)", s)
	}
	var per time.Duration
	switch unit {
	case "", "s", "sec":
		per = time.Second
	case "us":
		per = time.Microsecond
	case "ms":
		per = time.Millisecond
	case "m", "min":
		per = time.Minute
	case "h":
		per = time.Hour
	case "d":
		per = 24 * time.Hour
	default:
		return 0, fmt.Errorf("time %q: unknown unit %q", s, unit)
	}
	if time.Duration(n) > math.MaxInt64/per {
		// 1000000000d overflowed to a negative duration.
		return 0, fmt.Errorf("time %q is too long", s)
	}
	return time.Duration(n) * per, nil
}

// parseConstraints parses spark.mesos.constraints: "attr:v1,v2;attr2".
func parseConstraints(s string) (map[string][]string, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	out := map[string][]string{}
	for _, part := range strings.Split(s, ";") {
		if strings.TrimSpace(part) == "" {
			continue
		}
		k, v, hasValue := strings.Cut(part, ":")
		k = strings.TrimSpace(k)
		if k == "" {
			return nil, fmt.Errorf("spark.mesos.constraints: %q has no attribute name", part)
		}
		var vals []string
		if hasValue && v != "" {
			vals = strings.Split(v, ",")
		}
		out[k] = vals
	}
	return out, nil
}
