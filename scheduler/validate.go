package scheduler

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/url"
	"reflect"
	"regexp"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/sparkpack/sparkpack/internal/plural"
	"github.com/sparkpack/sparkpack/internal/strictjson"
	"github.com/sparkpack/sparkpack/teams"
)

// FieldError is a validation error that names the offending field, in the
// dotted JSON path of the job contract (for example "app.mainClass").
type FieldError struct {
	Field string
	Msg   string
}

func (e *FieldError) Error() string {
	if e.Field == "" {
		return e.Msg
	}
	return e.Field + ": " + e.Msg
}

func fieldErr(field, format string, args ...any) *FieldError {
	return &FieldError{Field: field, Msg: fmt.Sprintf(format, args...)}
}

// Limits on a job spec. They keep one job from exhausting the store or a
// command line, and each is named in the error that enforces it.
const (
	MaxExecutors        = 10000
	MaxExecutorCores    = 1024
	MinExecutorMemoryMB = 450 // Spark refuses executors below 450 MiB
	MaxMemoryMB         = 4 << 20
	MaxNameRunes        = 256
	MaxLabels           = 64
	MaxArgs             = 1000
	MaxConfEntries      = 256
	MaxStringBytes      = 8192
	MaxRetries          = 10
	MaxDurationSeconds  = 365 * 24 * 3600
	MaxDeadlineSeconds  = 10 * 365 * 24 * 3600
)

// ReservedSparkConf are the Spark settings sparkpack derives from the job
// itself; a job may not set them in sparkConf.
var ReservedSparkConf = map[string]string{
	"spark.master":                        "sparkpack sets the Mesos master",
	"spark.submit.deployMode":             "sparkpack runs the driver in client mode on Mesos",
	"spark.mesos.role":                    "sparkpack gives every job its own role",
	"spark.cores.max":                     "use executors and executorCores",
	"spark.executor.cores":                "use executorCores",
	"spark.executor.memory":               "use executorMemoryMB",
	"spark.executor.instances":            "use executors",
	"spark.mesos.executor.memoryOverhead": "use memoryOverheadMB",
	"spark.executor.memoryOverhead":       "use memoryOverheadMB",
	"spark.driver.cores":                  "use driver.cores",
	"spark.driver.memory":                 "use driver.memoryMB",
	"spark.dynamicAllocation.enabled":     "sparkpack places a fixed number of executors",
	"spark.driver.supervise":              "use the job's retries (sparkpack submit --retries N): a failed driver is launched again up to N times",
}

var (
	labelKeyRE   = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9._/-]{0,61}[A-Za-z0-9])?$`)
	confKeyRE    = regexp.MustCompile(`^spark\.[A-Za-z0-9._-]+$`)
	envKeyRE     = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	unknownRE    = regexp.MustCompile(`unknown field "([^"]*)"`)
	errNotOneDoc = errors.New("the body must hold exactly one JSON object")
)

// DecodeSpec reads one job spec from r strictly: unknown fields, wrong
// types, trailing data, invalid values, strings that are not valid UTF-8
// or hold lone surrogates, and keys given twice are *FieldError errors
// naming the field. The returned spec is validated and its id, if any,
// lower-cased. An error reading r is returned wrapped, as it is (so that
// *http.MaxBytesError stays visible).
func DecodeSpec(r io.Reader) (Spec, error) {
	var s Spec
	data, err := io.ReadAll(r)
	if err != nil {
		return Spec{}, fmt.Errorf("read the job: %w", err)
	}
	if bytes.HasPrefix(data, []byte("\xef\xbb\xbf")) {
		// What some Windows editors put at the start of a UTF-8 file.
		return Spec{}, &FieldError{Msg: "the body starts with a UTF-8 byte order mark (EF BB BF), which JSON does not allow: send it (save the file) as UTF-8 without a BOM"}
	}
	if e := strictjson.CheckFields(data, specFields); e != nil {
		return Spec{}, &FieldError{Field: e.Path, Msg: e.Msg}
	}
	if err := nullStrings(data); err != nil {
		return Spec{}, err
	}
	data, auto, err := autoExecutors(data)
	if err != nil {
		return Spec{}, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return Spec{}, decodeError(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return Spec{}, &FieldError{Msg: errNotOneDoc.Error()}
	}
	if s.Sizing != nil {
		return Spec{}, fieldErr("sizing", "is set by sparkpack; to have it choose the executors send \"executors\": \"auto\"")
	}
	if auto {
		s.Sizing = &Sizing{Auto: true}
	}
	if err := s.Validate(); err != nil {
		return Spec{}, err
	}
	return s, nil
}

// nullStrings refuses a null where the job holds a string in a list or
// map (app.args, app.sparkConf, app.environment, labels): encoding/json
// would store it as "" without a word, an argument or a setting the user
// did not write. A null for a whole field is its absence, as before.
func nullStrings(data []byte) error {
	var top, app map[string]json.RawMessage
	if json.Unmarshal(data, &top) != nil {
		return nil // malformed or not an object: the decoder says so
	}
	_ = json.Unmarshal(top["app"], &app)
	for _, f := range []struct {
		field string
		v     json.RawMessage
	}{{"app.args", app["args"]}, {"app.sparkConf", app["sparkConf"]}, {"app.environment", app["environment"]}, {"labels", top["labels"]}} {
		where, ok := strictjson.NullMember(f.v)
		switch {
		case !ok:
		case strings.HasPrefix(where, "["):
			return fieldErr(f.field+where, "is null; an argument must be a string (\"\" for an empty one)")
		default:
			return fieldErr(f.field+"."+truncate(where, 80), "is null; a value must be a string (\"\" for an empty one, or leave the key out)")
		}
	}
	return nil
}

// specFields gives the exact field names of the objects of the job JSON
// that decode into structs (whose keys encoding/json would match without
// regard to case); nil for the others (maps: labels, sparkConf, ...).
func specFields(path string) []string {
	switch path {
	case "":
		return specFieldNames
	case "app":
		return appFieldNames
	case "driver":
		return driverFieldNames
	}
	return nil
}

var (
	specFieldNames   = jsonFieldNames(reflect.TypeFor[Spec]())
	appFieldNames    = jsonFieldNames(reflect.TypeFor[App]())
	driverFieldNames = jsonFieldNames(reflect.TypeFor[Driver]())
)

// jsonFieldNames lists the names encoding/json gives a struct's fields.
func jsonFieldNames(t reflect.Type) []string {
	var out []string
	for f := range t.Fields() {
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch name {
		case "-":
			continue
		case "":
			name = f.Name
		}
		out = append(out, name)
	}
	return out
}

func decodeError(err error) error {
	var fe *FieldError
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case errors.As(err, &fe):
		return fe
	case errors.As(err, &te):
		field := te.Field
		if field == "" {
			return &FieldError{Msg: "the body must be a JSON object"}
		}
		return fieldErr(field, "must be %s, not a JSON %s", describeType(te.Type.String()), te.Value)
	case errors.As(err, &se):
		return &FieldError{Msg: fmt.Sprintf("malformed JSON at byte %d: %v", se.Offset, se)}
	case errors.Is(err, io.EOF):
		return &FieldError{Msg: "the body is empty; send a job as a JSON object"}
	case errors.Is(err, io.ErrUnexpectedEOF):
		return &FieldError{Msg: "the body ends in the middle of the JSON object"}
	}
	if m := unknownRE.FindStringSubmatch(err.Error()); m != nil {
		switch {
		case m[1] == "team":
			// The README shows "team" in a job's JSON: say how it is set.
			return fieldErr(m[1], "is not submitted: a job's team is its token's team, else its \"team\" label (send \"labels\": {\"team\": \"...\"})")
		case jobOutputFields[m[1]]:
			// A job read back (GET) and posted again.
			return fieldErr(m[1], "is set by sparkpack (a job's answers carry it), not submitted; leave it out")
		}
		return fieldErr(m[1], "unknown field; see the job JSON in the API documentation")
	}
	return &FieldError{Msg: "malformed JSON: " + err.Error()}
}

// jobOutputFields are the JSON names of Job's own fields (not Spec's):
// what sparkpack sets and answers with, never submitted.
var jobOutputFields = func() map[string]bool {
	out := map[string]bool{}
	t := reflect.TypeOf(Job{})
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous {
			continue
		}
		if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); name != "" && name != "-" {
			out[name] = true
		}
	}
	return out
}()

func describeType(t string) string {
	switch {
	case strings.HasPrefix(t, "int"):
		return "a whole number"
	case strings.HasPrefix(t, "float"):
		return "a number"
	case t == "string":
		return "a string"
	case strings.HasPrefix(t, "[]"):
		return "an array of strings"
	case strings.HasPrefix(t, "map"):
		return "an object of string values"
	}
	return "an object"
}

// Validate checks a spec against the contract and the limits above, and
// lower-cases its id. The first problem found is returned as a *FieldError.
func (s *Spec) Validate() error {
	if s.ID != "" {
		if !IsUUID(s.ID) {
			return fieldErr("id", "must be a UUID such as 6f1d2c1e-8a7b-4c1d-9e2f-3a4b5c6d7e8f, or left out to have one generated")
		}
		s.ID = strings.ToLower(s.ID)
	}
	if err := checkText("name", s.Name, MaxNameRunes, true); err != nil {
		return err
	}
	if StartsWithDash(s.Name) {
		return fieldErr("name", "must not begin with a dash: it is passed to spark-submit before the application; rename the job")
	}
	if err := s.App.validate(); err != nil {
		return err
	}
	if (!s.AutoExecutors() || s.Executors != 0) && (s.Executors < 1 || s.Executors > MaxExecutors) {
		return fieldErr("executors", "must be a whole number from 1 to %d, got %d", MaxExecutors, s.Executors)
	}
	if s.ExecutorCores < 1 || s.ExecutorCores > MaxExecutorCores {
		return fieldErr("executorCores", "must be a whole number of cpus from 1 to %d, got %d", MaxExecutorCores, s.ExecutorCores)
	}
	if s.ExecutorMemoryMB < MinExecutorMemoryMB || s.ExecutorMemoryMB > MaxMemoryMB {
		return fieldErr("executorMemoryMB", "must be from %d (Spark's minimum) to %d MiB, got %d", MinExecutorMemoryMB, MaxMemoryMB, s.ExecutorMemoryMB)
	}
	if s.MemoryOverheadMB < 0 || s.MemoryOverheadMB > MaxMemoryMB {
		return fieldErr("memoryOverheadMB", "must be from 1 to %d MiB, or left out for Spark's default max(384, 10%% of executor memory); got %d", MaxMemoryMB, s.MemoryOverheadMB)
	}
	if d := s.Driver; d != nil {
		if math.IsNaN(d.Cores) || d.Cores < 0 || d.Cores > MaxExecutorCores {
			return fieldErr("driver.cores", "must be from 0.1 to %d cpus, or 0 for the default of %d", MaxExecutorCores, DefaultDriverCores)
		}
		if d.Cores > 0 && d.Cores < 0.1 {
			return fieldErr("driver.cores", "must be at least 0.1 cpus, got %g", d.Cores)
		}
		if d.MemoryMB != 0 && (d.MemoryMB < MinExecutorMemoryMB || d.MemoryMB > MaxMemoryMB) {
			return fieldErr("driver.memoryMB", "must be from %d to %d MiB, or 0 for the default of %d", MinExecutorMemoryMB, MaxMemoryMB, DefaultDriverMemoryMB)
		}
	}
	if d := s.Deadline; d != nil {
		switch {
		case d.Seconds != nil:
			v := *d.Seconds
			if math.IsNaN(v) || v < 1 || v > MaxDeadlineSeconds {
				return fieldErr("deadline", "as a number it is seconds from submission and must be from 1 to %d, got %s", MaxDeadlineSeconds, formatSeconds(v))
			}
		case d.At != nil:
			if y := d.At.UTC().Year(); y < 2000 || y > 9999 { // as stored: in UTC
				return fieldErr("deadline", "year %d is out of range", y)
			}
		default:
			s.Deadline = nil
		}
	}
	if nb := s.NotBefore; nb != nil {
		if y := nb.Year(); y < 2000 || y > 9999 {
			return fieldErr("notBefore", "year %d is out of range", y)
		}
		if d := s.Deadline; d != nil && d.At != nil && !nb.Before(*d.At) {
			return fieldErr("notBefore", "%s is not before the deadline %s", nb.UTC().Format(time.RFC3339), d.At.UTC().Format(time.RFC3339))
		}
	}
	if v := s.EstimatedDurationSeconds; math.IsNaN(v) || v < 0 || v > MaxDurationSeconds {
		return fieldErr("estimatedDurationSeconds", "must be from 0 to %d seconds, got %s", MaxDurationSeconds, formatSeconds(v))
	}
	if err := s.checkSizeHints(); err != nil {
		return err
	}
	if s.Retries < 0 || s.Retries > MaxRetries {
		return fieldErr("retries", "must be from 0 to %d, got %d", MaxRetries, s.Retries)
	}
	if len(s.Labels) > MaxLabels {
		return fieldErr("labels", "at most %d labels, got %d", MaxLabels, len(s.Labels))
	}
	for k, v := range s.Labels {
		if !labelKeyRE.MatchString(k) {
			return fieldErr("labels", "key %q must be 1-63 characters of letters, digits, '.', '_', '/' or '-', starting and ending with a letter or digit", truncate(k, 80))
		}
		if err := checkText("labels."+k, v, 256, true); err != nil {
			return err
		}
	}
	// The team label names the job's team (without a token's team): it
	// must be a name the teams file can configure.
	if v, ok := s.Labels[TeamLabel]; ok && !teams.NameRE.MatchString(v) {
		return fieldErr("labels."+TeamLabel, "%q is not a team name: letters, digits, '.', '_' and '-' (at most 64, starting with a letter or digit)", truncate(v, 80))
	}
	return nil
}

// ValidLabelKey reports whether k can be a job label's key (what
// Validate accepts): a filter or grouping on another key matches no job.
func ValidLabelKey(k string) bool { return labelKeyRE.MatchString(k) }

func (a *App) validate() error {
	if a.AppResource == "" {
		return fieldErr("app.appResource", "is required: the application jar to run, e.g. local:///opt/spark/examples/jars/spark-examples.jar")
	}
	if len(a.AppResource) > 4096 || strings.IndexFunc(a.AppResource, func(r rune) bool { return unicode.IsSpace(r) || !unicode.IsGraphic(r) }) >= 0 || !utf8.ValidString(a.AppResource) {
		return fieldErr("app.appResource", "must be a URI of at most 4096 characters without spaces, control or invisible characters")
	}
	if err := validateAppResource(a.AppResource); err != nil {
		return err
	}
	if a.MainClass == "" {
		return fieldErr("app.mainClass", "is required: the fully qualified class to run, e.g. org.apache.spark.examples.SparkPi")
	}
	if len(a.MainClass) > 1024 || !isJavaClass(a.MainClass) {
		return fieldErr("app.mainClass", "must be a Java class name such as org.apache.spark.examples.SparkPi, got %q", truncate(a.MainClass, 80))
	}
	if err := checkMainClass(a.MainClass); err != nil {
		return err
	}
	if len(a.Args) > MaxArgs {
		return fieldErr("app.args", "at most %d arguments, got %d", MaxArgs, len(a.Args))
	}
	for i, arg := range a.Args {
		if strings.ContainsRune(arg, 0) || !utf8.ValidString(arg) || len(arg) > MaxStringBytes {
			return fieldErr(fmt.Sprintf("app.args[%d]", i), "must be valid UTF-8 of at most %d bytes without NUL characters", MaxStringBytes)
		}
	}
	if len(a.SparkConf) > MaxConfEntries {
		return fieldErr("app.sparkConf", "at most %d entries, got %d", MaxConfEntries, len(a.SparkConf))
	}
	for k, v := range a.SparkConf {
		if !confKeyRE.MatchString(k) || len(k) > 256 {
			return fieldErr("app.sparkConf", "key %q must be a Spark property name starting with \"spark.\"", truncate(k, 80))
		}
		if why, ok := ReservedSparkConf[k]; ok {
			return fieldErr("app.sparkConf", "%s is set by sparkpack: %s", k, why)
		}
		if err := checkText("app.sparkConf."+k, v, MaxStringBytes, false); err != nil {
			return err
		}
	}
	if len(a.Environment) > MaxConfEntries {
		return fieldErr("app.environment", "at most %d entries, got %d", MaxConfEntries, len(a.Environment))
	}
	for k, v := range a.Environment {
		if !envKeyRE.MatchString(k) || len(k) > 256 {
			return fieldErr("app.environment", "name %q must be letters, digits and '_', not starting with a digit", truncate(k, 80))
		}
		if strings.ContainsRune(v, 0) || !utf8.ValidString(v) || len(v) > MaxStringBytes {
			return fieldErr("app.environment."+k, "must be valid UTF-8 of at most %d bytes without NUL characters", MaxStringBytes)
		}
	}
	return nil
}

// AppResourceSchemes are the URI schemes an application resource may have;
// without a scheme it is a path on the agent.
var AppResourceSchemes = []string{"local", "file", "hdfs", "s3a", "http", "https"}

// sparkReservedResources are primary resources spark-submit gives a
// meaning of its own (shells, classes run from Spark's class path).
var sparkReservedResources = map[string]bool{
	"spark-shell": true, "pyspark-shell": true, "sparkr-shell": true, "spark-internal": true,
	"connect-shell": true, "pyspark-shell-main": true, "sparkr-shell-main": true, "run-example": true,
}

// sparkSpecialClasses switch spark-submit's launcher to mixed argument
// parsing, in which the application's arguments are read as spark-submit
// options (so "--conf spark.mesos.role=*" among them would apply).
var sparkSpecialClasses = map[string]bool{
	"org.apache.spark.repl.Main":                               true,
	"org.apache.spark.sql.application.ConnectRepl":             true,
	"org.apache.spark.sql.hive.thriftserver.SparkSQLCLIDriver": true,
	"org.apache.spark.sql.hive.thriftserver.HiveThriftServer2": true,
	"org.apache.spark.sql.connect.service.SparkConnectServer":  true,
}

// isDash reports whether r is a hyphen-minus or something that looks like
// one: any Unicode dash (Pd), and the minus signs and hyphens of other
// categories.
func isDash(r rune) bool {
	switch r {
	case '-', '\u2212', '\u2796', '\u02D7', '\u207B', '\u208B', '\u2043', '\uFE63', '\uFF0D':
		return true
	}
	return unicode.Is(unicode.Pd, r)
}

// StartsWithDash reports whether s begins, after any white space or
// invisible characters, with a dash: such a value placed on spark-submit's
// command line could be read as an option, or looks like one.
func StartsWithDash(s string) bool {
	for _, r := range s {
		if unicode.IsSpace(r) || unicode.Is(unicode.Cf, r) || unicode.IsControl(r) {
			continue
		}
		return isDash(r)
	}
	return false
}

// validateAppResource accepts a URI with one of AppResourceSchemes and a
// path, or a path, that spark-submit takes as the application and never as
// one of its options.
func validateAppResource(s string) error {
	const field = "app.appResource"
	const hint = "give the application as a URI such as local:///opt/app.jar, hdfs:///apps/app.jar, s3a://bucket/app.jar or https://host/app.jar, or as a path"
	if StartsWithDash(s) {
		return fieldErr(field, "must not begin with a dash: spark-submit would read it as one of its options; "+hint)
	}
	if sparkReservedResources[strings.ToLower(s)] {
		return fieldErr(field, "%q is a name spark-submit reserves for its shells and servers; %s", s, hint)
	}
	i := strings.IndexByte(s, ':')
	if i <= 0 || !isScheme(s[:i]) {
		return nil // a path on the agent
	}
	scheme := strings.ToLower(s[:i])
	known := false
	for _, k := range AppResourceSchemes {
		known = known || k == scheme
	}
	if !known {
		return fieldErr(field, "scheme %q is not supported (use %s:); %s", truncate(s[:i], 32), strings.Join(AppResourceSchemes, ":, "), hint)
	}
	u, err := url.Parse(s)
	if err != nil {
		return fieldErr(field, "is not a valid URI (%v); %s", err, hint)
	}
	if u.Opaque != "" || u.Path == "" || u.Path == "/" {
		return fieldErr(field, "%s: needs an absolute path to the application, as in %s:///opt/app.jar; %s", scheme, scheme, hint)
	}
	if (scheme == "http" || scheme == "https" || scheme == "s3a") && u.Host == "" {
		return fieldErr(field, "%s: needs a host (or bucket), as in %s://host/app.jar", scheme, scheme)
	}
	return nil
}

// sparkLauncherClasses are Spark 3.5's classes with a main (or run by
// spark-submit as a SparkApplication) that launch Spark again or run one
// of its daemons: given as a job's main class, each would read the job's
// arguments as options of a launch of its own (--master, --conf
// spark.mesos.role=*, another class to run, ...), outside the role, sizes
// and quota sparkpack set.
var sparkLauncherClasses = map[string]string{
	"org.apache.spark.deploy.sparksubmit":                       "runs spark-submit again, with the job's arguments as its options",
	"org.apache.spark.launcher.main":                            "is spark-submit's launcher",
	"org.apache.spark.deploy.client":                            "submits a driver to a standalone master",
	"org.apache.spark.deploy.clientapp":                         "submits a driver to a standalone master",
	"org.apache.spark.deploy.rest.restsubmissionclientapp":      "submits a driver to a REST submission server",
	"org.apache.spark.deploy.pythonrunner":                      "runs a Python program of the arguments' choosing",
	"org.apache.spark.deploy.rrunner":                           "runs an R program of the arguments' choosing",
	"org.apache.spark.deploy.worker.driverwrapper":              "runs another main class of the arguments' choosing",
	"org.apache.spark.deploy.master.master":                     "starts a standalone master",
	"org.apache.spark.deploy.worker.worker":                     "starts a standalone worker",
	"org.apache.spark.deploy.history.historyserver":             "starts a history server",
	"org.apache.spark.deploy.externalshuffleservice":            "starts a shuffle service",
	"org.apache.spark.deploy.mesos.mesosclusterdispatcher":      "starts Spark's Mesos dispatcher",
	"org.apache.spark.deploy.mesos.mesosexternalshuffleservice": "starts a shuffle service",
	"org.apache.spark.api.python.pythongatewayserver":           "is the PySpark shell's gateway, which creates Spark contexts for whoever connects to it",
	"org.apache.spark.api.r.rbackend":                           "is SparkR's backend, which creates Spark contexts for whoever connects to it",
	"org.apache.spark.executor.coarsegrainedexecutorbackend":    "starts an executor outside the job's plan",
	"org.apache.spark.executor.mesosexecutorbackend":            "starts an executor outside the job's plan",
}

// sparkLauncherPackages hold only such classes (and none a job would run
// as its application): a class in them is refused whatever its name.
var sparkLauncherPackages = []string{
	"org.apache.spark.deploy.",
	"org.apache.spark.launcher.",
	"org.apache.spark.repl.",
	"org.apache.spark.api.python.",
	"org.apache.spark.api.r.",
	"org.apache.spark.executor.",
	"org.apache.spark.sql.hive.thriftserver.",
	"org.apache.spark.sql.connect.service.",
	"org.apache.spark.sql.application.",
}

// checkMainClass refuses Spark's shell and server classes, for which
// spark-submit reads the application's arguments as its own options, and
// every class that launches or re-enters Spark's launcher (compared
// without regard to case, and without the "$" of a Scala object).
func checkMainClass(c string) error {
	if sparkSpecialClasses[c] {
		return fieldErr("app.mainClass", "%s is one of Spark's shell or server classes, for which spark-submit reads the application's arguments as its own options; sparkpack does not run it", c)
	}
	norm := strings.ToLower(strings.TrimRight(c, "$"))
	for k := range sparkSpecialClasses {
		if strings.ToLower(k) == norm {
			return fieldErr("app.mainClass", "%s is one of Spark's shell or server classes, for which spark-submit reads the application's arguments as its own options; sparkpack does not run it", c)
		}
	}
	if why, ok := sparkLauncherClasses[norm]; ok {
		return fieldErr("app.mainClass", "%s %s, outside the role, sizes and quota sparkpack gives the job; sparkpack does not run Spark's launcher or daemon classes", c, why)
	}
	for _, p := range sparkLauncherPackages {
		if strings.HasPrefix(norm, p) {
			return fieldErr("app.mainClass", "%s is in %s*, whose classes launch or re-enter Spark's launcher or daemons, outside the role, sizes and quota sparkpack gives the job; sparkpack does not run them", c, p)
		}
	}
	return nil
}

// CheckCommandValues re-checks what of the spec goes on spark-submit's
// command line before the application (the name, the main class) and the
// application itself, with the rules Validate applies: sparksubmit.Command
// calls it so that a spec stored before these rules existed is never
// turned into a command that spark-submit would misread.
func (s *Spec) CheckCommandValues() error {
	if s.App.AppResource == "" {
		return fieldErr("app.appResource", "is required")
	}
	if err := validateAppResource(s.App.AppResource); err != nil {
		return err
	}
	if !isJavaClass(s.App.MainClass) {
		return fieldErr("app.mainClass", "must be a Java class name, got %q", truncate(s.App.MainClass, 80))
	}
	if err := checkMainClass(s.App.MainClass); err != nil {
		return err
	}
	if StartsWithDash(s.Name) {
		return fieldErr("name", "must not begin with a dash")
	}
	return nil
}

// checkText accepts valid UTF-8 of at most maxRunes characters with no NUL
// and, where printableOnly is set, no control characters at all.
func checkText(field, s string, maxRunes int, printableOnly bool) error {
	if !utf8.ValidString(s) {
		return fieldErr(field, "must be valid UTF-8")
	}
	if n := utf8.RuneCountInString(s); n > maxRunes {
		return fieldErr(field, "must be at most %d characters, got %d", maxRunes, n)
	}
	bad := func(r rune) bool { return r == 0 || (printableOnly && unicode.IsControl(r)) }
	if strings.IndexFunc(s, bad) >= 0 {
		return fieldErr(field, "must not contain control characters")
	}
	return nil
}

// about rounds a run time for a rejection's reason: an estimate scaled
// by --sim-speed or learned is read "5.6s", not "5.608205064s".
func about(d time.Duration) time.Duration {
	if d >= time.Minute {
		return d.Round(time.Second)
	}
	return d.Round(100 * time.Millisecond)
}

// Admit decides, at submission, whether a job can ever run. It returns the
// reason for REJECTED, or "" when the job may be queued. A deadline already
// past, or one that cannot be met even if the job started now (with an
// estimated duration), rejects the job; executorFitsSomewhere reports
// whether one executor fits within the capacity of some agent.
func Admit(j *Job, now time.Time, executorFitsSomewhere bool) string {
	if !executorFitsSomewhere {
		return fmt.Sprintf("one executor (%s, %d MiB with overhead) is larger than every agent", plural.N(j.ExecutorCores, "cpu"), j.ExecutorTotalMemMB())
	}
	if j.DeadlineAt != nil {
		if !j.DeadlineAt.After(now) {
			return fmt.Sprintf("deadline %s is already past", j.DeadlineAt.Format(time.RFC3339))
		}
		if d := j.EstimatedDuration(); d > 0 && now.Add(d).After(*j.DeadlineAt) {
			return fmt.Sprintf("cannot finish by its deadline %s: it needs about %s even if started now", j.DeadlineAt.Format(time.RFC3339), about(d))
		}
		if CheckNotBefore(j) != nil {
			// The REST path refuses this with a 400; a relative deadline
			// resolved elsewhere (the simulator's submissions) meets it here.
			return fmt.Sprintf("cannot finish by its deadline %s: it may not start before %s", j.DeadlineAt.Format(time.RFC3339), j.NotBeforeAt().Format(time.RFC3339))
		}
		if nb := j.NotBeforeAt(); nb != nil && nb.After(now) {
			if d := j.EstimatedDuration(); d > 0 && nb.Add(d).After(*j.DeadlineAt) {
				return fmt.Sprintf("cannot finish by its deadline %s: it may not start before %s and needs about %s", j.DeadlineAt.Format(time.RFC3339), nb.Format(time.RFC3339), about(d))
			}
		}
	}
	return ""
}
