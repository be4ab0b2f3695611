package scheduler

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

const validJob = `{
  "id": "6f1d2c1e-8a7b-4c1d-9e2f-3a4b5c6d7e8f",
  "name": "wordcount-20g",
  "app": {
    "appResource": "local:///opt/spark/examples/jars/spark-examples.jar",
    "mainClass": "org.apache.spark.examples.JavaWordCount",
    "args": ["/data/in"],
    "sparkConf": {"spark.eventLog.enabled": "true"},
    "environment": {"SPARK_LOCAL_DIRS": "/tmp"}
  },
  "executors": 4,
  "executorCores": 2,
  "executorMemoryMB": 4096,
  "memoryOverheadMB": 410,
  "driver": {"cores": 1, "memoryMB": 1024},
  "deadline": "2026-11-22T10:00:00Z",
  "estimatedDurationSeconds": 600,
  "labels": {"team": "analytics"}
}`

func TestDecodeSpecValid(t *testing.T) {
	s, err := DecodeSpec(strings.NewReader(validJob))
	if err != nil {
		t.Fatal(err)
	}
	if s.Executors != 4 || s.ExecutorCores != 2 || s.OverheadMB() != 410 || s.ExecutorTotalMemMB() != 4506 {
		t.Errorf("decoded %+v", s)
	}
	if s.Deadline == nil || s.Deadline.At == nil || !s.Deadline.At.Equal(time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)) {
		t.Errorf("deadline %+v", s.Deadline)
	}
	min := `{"app":{"appResource":"local:///a.jar","mainClass":"a.B"},"executors":1,"executorCores":1,"executorMemoryMB":1024,"deadline":600}`
	s, err = DecodeSpec(strings.NewReader(min))
	if err != nil {
		t.Fatal(err)
	}
	sub := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if d := s.ResolveDeadline(sub); d == nil || !d.Equal(sub.Add(10*time.Minute)) {
		t.Errorf("relative deadline resolved to %v", d)
	}
	if dr := s.DriverOrDefault(); dr.Cores != 1 || dr.MemoryMB != 1024 {
		t.Errorf("driver defaults %+v", dr)
	}
}

func TestSparkMemoryOverhead(t *testing.T) {
	for _, tc := range []struct{ mem, want int }{{450, 384}, {1024, 384}, {3840, 384}, {3850, 385}, {4096, 409}, {10000, 1000}} {
		if got := SparkMemoryOverheadMB(tc.mem); got != tc.want {
			t.Errorf("overhead(%d) = %d, want %d", tc.mem, got, tc.want)
		}
	}
}

func TestDecodeSpecErrors(t *testing.T) {
	base := func(mod func(m map[string]any)) string {
		var m map[string]any
		if err := json.Unmarshal([]byte(validJob), &m); err != nil {
			t.Fatal(err)
		}
		mod(m)
		b, _ := json.Marshal(m)
		return string(b)
	}
	app := func(m map[string]any) map[string]any { return m["app"].(map[string]any) }
	cases := []struct {
		name, body, field string
	}{
		{"empty", ``, ""},
		{"array", `[]`, ""},
		{"two objects", validJob + validJob, ""},
		{"truncated", validJob[:40], ""},
		{"unknown top field", base(func(m map[string]any) { m["executor"] = 3 }), "executor"},
		{"unknown app field", base(func(m map[string]any) { app(m)["jar"] = "x" }), "jar"},
		{"missing appResource", base(func(m map[string]any) { delete(app(m), "appResource") }), "app.appResource"},
		{"missing mainClass", base(func(m map[string]any) { delete(app(m), "mainClass") }), "app.mainClass"},
		{"bad mainClass", base(func(m map[string]any) { app(m)["mainClass"] = "rm -rf /" }), "app.mainClass"},
		{"missing executors", base(func(m map[string]any) { delete(m, "executors") }), "executors"},
		{"zero executors", base(func(m map[string]any) { m["executors"] = 0 }), "executors"},
		{"negative executors", base(func(m map[string]any) { m["executors"] = -3 }), "executors"},
		{"huge executors", base(func(m map[string]any) { m["executors"] = 1e12 }), "executors"},
		{"fractional executors", base(func(m map[string]any) { m["executors"] = 1.5 }), "executors"},
		{"string executors", base(func(m map[string]any) { m["executors"] = "4" }), "executors"},
		{"fractional cores", base(func(m map[string]any) { m["executorCores"] = 0.5 }), "executorCores"},
		{"tiny memory", base(func(m map[string]any) { m["executorMemoryMB"] = 100 }), "executorMemoryMB"},
		{"negative overhead", base(func(m map[string]any) { m["memoryOverheadMB"] = -1 }), "memoryOverheadMB"},
		{"bad id", base(func(m map[string]any) { m["id"] = "job-1" }), "id"},
		{"bad deadline text", base(func(m map[string]any) { m["deadline"] = "tomorrow" }), "deadline"},
		{"negative deadline", base(func(m map[string]any) { m["deadline"] = -5 }), "deadline"},
		{"deadline under a second", base(func(m map[string]any) { m["deadline"] = 0.5 }), "deadline"},
		{"bool deadline", base(func(m map[string]any) { m["deadline"] = true }), "deadline"},
		{"ancient deadline", base(func(m map[string]any) { m["deadline"] = "0001-01-01T00:00:00Z" }), "deadline"},
		{"negative duration", base(func(m map[string]any) { m["estimatedDurationSeconds"] = -1 }), "estimatedDurationSeconds"},
		{"long name", base(func(m map[string]any) { m["name"] = strings.Repeat("n", 10*1024) }), "name"},
		{"control in name", base(func(m map[string]any) { m["name"] = "a\x07b" }), "name"},
		{"bad label key", base(func(m map[string]any) { m["labels"] = map[string]any{"a b": "c"} }), "labels"},
		{"label not string", base(func(m map[string]any) { m["labels"] = map[string]any{"a": 1} }), "labels"},
		{"args not strings", base(func(m map[string]any) { app(m)["args"] = []any{1} }), "app.args"},
		{"reserved conf", base(func(m map[string]any) { app(m)["sparkConf"] = map[string]any{"spark.mesos.role": "x"} }), "app.sparkConf"},
		{"supervise conf", base(func(m map[string]any) { app(m)["sparkConf"] = map[string]any{"spark.driver.supervise": "true"} }), "app.sparkConf"},
		{"non-spark conf", base(func(m map[string]any) { app(m)["sparkConf"] = map[string]any{"foo": "x"} }), "app.sparkConf"},
		{"bad env name", base(func(m map[string]any) { app(m)["environment"] = map[string]any{"1X": "x"} }), "app.environment"},
		{"driver cores negative", base(func(m map[string]any) { m["driver"] = map[string]any{"cores": -1} }), "driver.cores"},
		{"retries", base(func(m map[string]any) { m["retries"] = 99 }), "retries"},
		{"invalid utf-8 in an arg", strings.Replace(validJob, `"/data/in"`, "\"/data/\xffin\"", 1), "app.args[0]"},
		{"invalid utf-8 in a label", strings.Replace(validJob, `"analytics"`, "\"an\xc3alytics\"", 1), "labels.team"},
		{"lone surrogate in the name", strings.Replace(validJob, `"wordcount-20g"`, `"word\ud83dcount"`, 1), "name"},
		{"lone low surrogate in conf", strings.Replace(validJob, `"spark.eventLog.enabled": "true"`, `"spark.eventLog.enabled": "\udc00"`, 1), "app.sparkConf.spark.eventLog.enabled"},
		{"duplicate top-level key", strings.Replace(validJob, `"executors": 4,`, `"executors": 4, "executors": 40,`, 1), "executors"},
		{"duplicate key by case", strings.Replace(validJob, `"executors": 4,`, `"executors": 4, "Executors": 40,`, 1), "Executors"},
		{"duplicate app key", strings.Replace(validJob, `"args": ["/data/in"],`, `"args": ["/data/in"], "args": ["/other"],`, 1), "app.args"},
		{"duplicate label", strings.Replace(validJob, `{"team": "analytics"}`, `{"team": "analytics", "team": "ops"}`, 1), "labels.team"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := DecodeSpec(strings.NewReader(tc.body))
			var fe *FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("err = %v (%T), want a *FieldError", err, err)
			}
			if !strings.HasPrefix(fe.Field, tc.field) || (tc.field == "" && fe.Field != "") || (strings.ContainsAny(tc.field, ".[") && fe.Field != tc.field) {
				t.Fatalf("field = %q, want %q (err %v)", fe.Field, tc.field, err)
			}
			if fe.Msg == "" {
				t.Fatal("empty message")
			}
		})
	}
}

func TestUnicodeNameAccepted(t *testing.T) {
	body := strings.Replace(validJob, `"wordcount-20g"`, `"ジョブ ✓ données"`, 1)
	if _, err := DecodeSpec(strings.NewReader(body)); err != nil {
		t.Fatal(err)
	}
}

func TestFingerprint(t *testing.T) {
	a, _ := DecodeSpec(strings.NewReader(validJob))
	// Same content, other key order and spacing.
	var m map[string]any
	_ = json.Unmarshal([]byte(validJob), &m)
	b2, _ := json.Marshal(m)
	b, err := DecodeSpec(strings.NewReader(string(b2)))
	if err != nil {
		t.Fatal(err)
	}
	if a.Fingerprint() != b.Fingerprint() {
		t.Error("same body, different fingerprints")
	}
	b.Executors++
	if a.Fingerprint() == b.Fingerprint() {
		t.Error("different body, same fingerprint")
	}
}

func TestAdmit(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	past, soon, later := now.Add(-time.Minute), now.Add(5*time.Minute), now.Add(time.Hour)
	cases := []struct {
		name     string
		deadline *time.Time
		dur      float64
		fits     bool
		reject   string
	}{
		{"no deadline", nil, 0, true, ""},
		{"too big", nil, 0, false, "larger than every agent"},
		{"past", &past, 0, true, "already past"},
		{"cannot make it", &soon, 600, true, "cannot finish"},
		// a scaled or learned estimate is read rounded
		{"cannot make it, rounded", &soon, 5*60 + 5.608205064, true, "it needs about 5m6s even if started now"},
		{"cannot make it, short", &soon, 1200.25, true, "needs about 20m0s"},
		{"fine", &later, 600, true, ""},
	}
	if got := about(5608205064 * time.Nanosecond); got != 5600*time.Millisecond {
		t.Errorf("about(5.608205064s) = %s, want 5.6s", got)
	}
	for _, tc := range cases {
		j := &Job{Spec: Spec{ExecutorCores: 1, ExecutorMemoryMB: 1024, EstimatedDurationSeconds: tc.dur}, DeadlineAt: tc.deadline}
		got := Admit(j, now, tc.fits)
		if (tc.reject == "") != (got == "") || !strings.Contains(got, tc.reject) {
			t.Errorf("%s: Admit = %q, want %q", tc.name, got, tc.reject)
		}
	}
}

func FuzzDecodeSpec(f *testing.F) {
	f.Add([]byte(validJob))
	f.Add([]byte(`{"app":{"appResource":"x","mainClass":"a.B"},"executors":1,"executorCores":1,"executorMemoryMB":1024,"deadline":1e308}`))
	f.Add([]byte(`{"deadline":"2026-13-01T00:00:00Z"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := DecodeSpec(strings.NewReader(string(b)))
		if err != nil {
			var fe *FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("error %v is not a *FieldError", err)
			}
			return
		}
		// Whatever is accepted is valid and survives a round trip.
		if s.Executors < 1 || s.ExecutorCores < 1 || s.App.AppResource == "" {
			t.Fatalf("accepted invalid spec %+v", s)
		}
		out, err := json.Marshal(&s)
		if err != nil {
			t.Fatal(err)
		}
		s2, err := DecodeSpec(strings.NewReader(string(out)))
		if err != nil {
			t.Fatalf("re-decode of %s: %v", out, err)
		}
		if s.Fingerprint() != s2.Fingerprint() {
			t.Fatalf("fingerprint changed over a round trip: %s", out)
		}
	})
}

// TestCommandLineValuesCannotBeOptions: the application resource, the main
// class and the name go on spark-submit's command line before the
// application's own arguments; none may be something spark-submit reads
// as one of its options, whatever its disguise.
func TestCommandLineValuesCannotBeOptions(t *testing.T) {
	spec := func(res, class, name string) Spec {
		return Spec{Name: name, App: App{AppResource: res, MainClass: class, Args: []string{"local:///opt/real.jar"}},
			Executors: 1, ExecutorCores: 1, ExecutorMemoryMB: 1024}
	}
	const class = "org.apache.spark.examples.SparkPi"
	for _, c := range []struct {
		name, res, class, jobName, field string
	}{
		{"conf override", "--conf=spark.mesos.role=*", class, "", "app.appResource"},
		{"long option", "--conf", class, "", "app.appResource"},
		{"short option", "-c", class, "", "app.appResource"},
		{"verbose switch", "-v", class, "", "app.appResource"},
		{"version switch", "--version", class, "", "app.appResource"},
		{"lone dash", "-", class, "", "app.appResource"},
		{"leading spaces", "  --conf=spark.cores.max=999", class, "", "app.appResource"},
		{"leading tab", "\t-c", class, "", "app.appResource"},
		{"en dash", "\u2013conf=spark.mesos.role=*", class, "", "app.appResource"},
		{"em dash", "\u2014\u2014conf=x", class, "", "app.appResource"},
		{"minus sign", "\u2212\u2212conf=x", class, "", "app.appResource"},
		{"fullwidth hyphen", "\uff0d\uff0dconf=x", class, "", "app.appResource"},
		{"hyphen", "\u2010c", class, "", "app.appResource"},
		{"zero-width space then dash", "\u200b--conf=x", class, "", "app.appResource"},
		{"byte order mark then dash", "\ufeff-c", class, "", "app.appResource"},
		{"spark shell resource", "spark-shell", class, "", "app.appResource"},
		{"spark internal resource", "spark-internal", class, "", "app.appResource"},
		{"unknown scheme", "ftp://host/app.jar", class, "", "app.appResource"},
		{"javascript scheme", "javascript:alert(1)", class, "", "app.appResource"},
		{"opaque local", "local:app.jar", class, "", "app.appResource"},
		{"no path", "hdfs://namenode", class, "", "app.appResource"},
		{"http without host", "http:///app.jar", class, "", "app.appResource"},
		{"s3a without bucket", "s3a:///app.jar", class, "", "app.appResource"},
		{"bad escape", "https://host/%zz.jar", class, "", "app.appResource"},
		{"repl class", "local:///opt/app.jar", "org.apache.spark.repl.Main", "", "app.mainClass"},
		{"thrift server class", "local:///opt/app.jar", "org.apache.spark.sql.hive.thriftserver.HiveThriftServer2", "", "app.mainClass"},
		{"connect server class", "local:///opt/app.jar", "org.apache.spark.sql.connect.service.SparkConnectServer", "", "app.mainClass"},
		{"dash class", "local:///opt/app.jar", "--class", "", "app.mainClass"},
		{"dash name", "local:///opt/app.jar", class, "--verbose", "name"},
		{"spaced dash name", "local:///opt/app.jar", class, "   -v", "name"},
		{"unicode dash name", "local:///opt/app.jar", class, "\u2014x", "name"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := spec(c.res, c.class, c.jobName)
			err := s.Validate()
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Field != c.field {
				t.Fatalf("Validate = %v, want an error on %s", err, c.field)
			}
			if err := s.CheckCommandValues(); err == nil {
				t.Errorf("CheckCommandValues accepted what Validate refused")
			}
		})
	}
	for _, res := range []string{
		"local:///opt/spark/examples/jars/spark-examples.jar", "local:/opt/app.jar", "file:///tmp/app.jar",
		"hdfs:///apps/app.jar", "hdfs://nn:8020/apps/app.jar", "s3a://bucket/apps/app.jar", "http://repo/app.jar",
		"HTTPS://repo.example.com/app.jar?x=1", "/opt/app.jar", "app.jar", "./lib/app.jar", "my-app.jar", "a-b/c.py",
	} {
		s := spec(res, class, "pi-job - nightly")
		if err := s.Validate(); err != nil {
			t.Errorf("%s refused: %v", res, err)
		}
		if err := s.CheckCommandValues(); err != nil {
			t.Errorf("%s refused by CheckCommandValues: %v", res, err)
		}
	}
}
