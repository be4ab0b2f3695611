package sparksubmit

import (
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/sparkpack/sparkpack/scheduler"
)

// submitParse models how Spark 3.5's spark-submit reads its arguments: the
// launcher (org.apache.spark.launcher.SparkSubmitCommandBuilder on
// SparkSubmitOptionParser) and then SparkSubmitArguments, which share the
// parsing rules modelled here. Options that take a value consume the next
// argument whatever it is (or the text after '=' in --opt=value); a switch
// takes none; the first other argument is the application unless it
// starts with '-' (an error); everything after it belongs to the
// application. With one of Spark's "special" main classes the launcher
// switches to mixed parsing: unknown arguments go to the application and
// parsing goes on, so options among the application's arguments apply.
// This is a model for tests, written from the documented behaviour.
type submitParse struct {
	options  map[string][]string // option -> values, in order
	switches []string
	resource string
	appArgs  []string
	err      string
}

var (
	submitOptsWithValue = map[string]string{"-c": "--conf"}
	submitSwitches      = map[string]string{"-h": "--help", "-v": "--verbose", "--help": "--help", "--supervise": "--supervise",
		"--usage-error": "--usage-error", "--verbose": "--verbose", "--version": "--version"}
	specialClasses = map[string]bool{"org.apache.spark.repl.Main": true, "org.apache.spark.sql.application.ConnectRepl": true,
		"org.apache.spark.sql.hive.thriftserver.SparkSQLCLIDriver": true, "org.apache.spark.sql.hive.thriftserver.HiveThriftServer2": true,
		"org.apache.spark.sql.connect.service.SparkConnectServer": true}
	eqOpt = regexp.MustCompile(`^(--[^=]+)=(.+)$`)
)

func init() {
	for _, o := range []string{"--archives", "--class", "--conf", "--deploy-mode", "--driver-class-path", "--driver-cores",
		"--driver-java-options", "--driver-library-path", "--driver-memory", "--executor-cores", "--executor-memory", "--files",
		"--jars", "--keytab", "--kill", "--master", "--name", "--num-executors", "--packages", "--exclude-packages", "--principal",
		"--properties-file", "--proxy-user", "--py-files", "--queue", "--repositories", "--status", "--total-executor-cores"} {
		submitOptsWithValue[o] = o
	}
}

func parseSubmit(args []string) submitParse {
	p := submitParse{options: map[string][]string{}}
	special := false
	i := 0
	for ; i < len(args); i++ {
		arg, value, hasValue := args[i], "", false
		// Java's '.' does not match line terminators.
		if m := eqOpt.FindStringSubmatch(arg); m != nil && !strings.ContainsAny(m[2], "\n\r\u0085\u2028\u2029") {
			arg, value, hasValue = m[1], m[2], true
		}
		if name, ok := submitOptsWithValue[arg]; ok {
			if !hasValue {
				if i == len(args)-1 {
					p.err = "missing argument for " + arg
					return p
				}
				i++
				value = args[i]
			}
			p.options[name] = append(p.options[name], value)
			if name == "--class" && specialClasses[value] {
				special = true
			}
			continue
		}
		if name, ok := submitSwitches[arg]; ok {
			p.switches = append(p.switches, name)
			continue
		}
		if special {
			p.appArgs = append(p.appArgs, args[i])
			continue
		}
		if strings.HasPrefix(args[i], "-") {
			p.err = "unrecognized option " + args[i]
			return p
		}
		p.resource = args[i]
		i++
		break
	}
	p.appArgs = append(p.appArgs, args[i:]...)
	return p
}

// confOf is the Spark properties the parse sets (a later --conf wins).
func (p submitParse) confOf() map[string]string {
	out := map[string]string{}
	for _, kv := range p.options["--conf"] {
		k, v, _ := strings.Cut(kv, "=")
		out[k] = v
	}
	return out
}

// checkParsesAsMeant parses argv as spark-submit would and checks that it
// means exactly the job: its application and arguments, its class and
// name, and sparkpack's settings (role, cores) unchanged.
func checkParsesAsMeant(t *testing.T, j scheduler.Job, argv []string) {
	t.Helper()
	p := parseSubmit(argv[1:])
	if p.err != "" {
		t.Fatalf("spark-submit would fail: %s\nargv %q", p.err, argv)
	}
	if len(p.switches) > 0 {
		t.Errorf("switches %v reach spark-submit: %q", p.switches, argv)
	}
	if p.resource != j.App.AppResource {
		t.Errorf("application %q, want %q (argv %q)", p.resource, j.App.AppResource, argv)
	}
	if !reflect.DeepEqual(p.appArgs, j.App.Args) && (len(p.appArgs) > 0 || len(j.App.Args) > 0) {
		t.Errorf("application arguments %q, want %q", p.appArgs, j.App.Args)
	}
	want := map[string][]string{"--master": {"mesos://m:5050"}, "--deploy-mode": {"client"}, "--class": {j.App.MainClass},
		"--driver-memory": {fmt.Sprintf("%dm", j.DriverOrDefault().MemoryMB)}}
	if j.Name != "" {
		want["--name"] = []string{j.Name}
	}
	for opt, vals := range p.options {
		if opt == "--conf" {
			continue
		}
		if !reflect.DeepEqual(vals, want[opt]) {
			t.Errorf("option %s = %q, want %q", opt, vals, want[opt])
		}
	}
	if got, wantConf := p.confOf(), Conf(j, Options{Master: "m:5050"}); !reflect.DeepEqual(got, wantConf) {
		t.Errorf("Spark properties %v, want %v", got, wantConf)
	}
	if p.confOf()["spark.mesos.role"] != scheduler.Role(j.ID) {
		t.Errorf("role %q, want the job's own", p.confOf()["spark.mesos.role"])
	}
}

func TestCommandParsesAsMeant(t *testing.T) {
	j := job()
	argv, err := Command(j, Options{Master: "m:5050"})
	if err != nil {
		t.Fatal(err)
	}
	checkParsesAsMeant(t, j, argv)
	// Hostile values in the places spark-submit takes as values or as the
	// application's own arguments are harmless.
	j.Name = "x --conf spark.mesos.role=*"
	j.App.Args = []string{"--conf", "spark.mesos.role=*", "-c", "spark.cores.max=999", "--verbose", "--class=evil", "-"}
	j.App.SparkConf = map[string]string{"spark.foo": "--conf=spark.mesos.role=*", "spark.bar": "-v"}
	argv, err = Command(j, Options{Master: "m:5050"})
	if err != nil {
		t.Fatal(err)
	}
	checkParsesAsMeant(t, j, argv)
}

// TestTheModelSeesTheAttacks: without the checks, the values the issue
// reported would change what spark-submit does; the model shows it, and
// Command refuses each.
func TestTheModelSeesTheAttacks(t *testing.T) {
	for _, c := range []struct {
		name  string
		build func(j *scheduler.Job)
	}{
		{"appResource option", func(j *scheduler.Job) {
			j.App.AppResource = "--conf=spark.mesos.role=*"
			j.App.Args = []string{"local:///opt/real.jar"}
		}},
		{"appResource short option", func(j *scheduler.Job) {
			j.App.AppResource = "-c"
			j.App.Args = []string{"spark.cores.max=999", "local:///opt/real.jar"}
		}},
		{"special class", func(j *scheduler.Job) {
			j.App.MainClass = "org.apache.spark.repl.Main"
			j.App.Args = []string{"--conf", "spark.mesos.role=*"}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			j := job()
			c.build(&j)
			// The argument vector as it would be without the checks.
			argv := unchecked(j)
			p := parseSubmit(argv[1:])
			if p.err == "" && p.confOf()["spark.mesos.role"] == scheduler.Role(j.ID) && p.confOf()["spark.cores.max"] == "8" {
				t.Fatalf("the model does not see the attack: %+v", p)
			}
			if _, err := Command(j, Options{Master: "m:5050"}); err == nil {
				t.Fatal("Command built it")
			}
			if err := j.Spec.Validate(); err == nil {
				t.Fatal("Validate accepted it")
			}
		})
	}
}

// unchecked is Command's argument vector built without its checks.
func unchecked(j scheduler.Job) []string {
	argv := []string{"spark-submit", "--master", "mesos://m:5050", "--deploy-mode", "client", "--class", j.App.MainClass,
		"--driver-memory", "1024m"}
	for k, v := range Conf(j, Options{Master: "m:5050"}) {
		argv = append(argv, "--conf", k+"="+v)
	}
	argv = append(argv, j.App.AppResource)
	return append(argv, j.App.Args...)
}

// FuzzCommand: whatever job passes validation becomes a command that
// spark-submit reads exactly as meant.
func FuzzCommand(f *testing.F) {
	f.Add("local:///opt/app.jar", "a.B", "name", "--conf", "spark.mesos.role=*", "spark.x", "-v")
	f.Add("--conf=spark.mesos.role=*", "org.apache.spark.repl.Main", "-v", "local:///x.jar", "", "spark.y", "--verbose")
	f.Add("\u2013c", "a.B", " -x", "-", "--class=x", "spark.z", "a=b")
	f.Fuzz(func(t *testing.T, res, class, name, arg0, arg1, confKey, confVal string) {
		j := scheduler.Job{Spec: scheduler.Spec{ID: "6f1d2c1e-8a7b-4c1d-9e2f-3a4b5c6d7e8f", Name: name,
			App: scheduler.App{AppResource: res, MainClass: class, Args: []string{arg0, arg1},
				SparkConf: map[string]string{confKey: confVal}},
			Executors: 2, ExecutorCores: 1, ExecutorMemoryMB: 1024}}
		if err := j.Spec.Validate(); err != nil {
			return
		}
		argv, err := Command(j, Options{Master: "m:5050"})
		if err != nil {
			t.Fatalf("a valid job gives no command: %v", err)
		}
		checkParsesAsMeant(t, j, argv)
	})
}
