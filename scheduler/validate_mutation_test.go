package scheduler

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"
)

// The tests below kill the mutants gremlins left alive in validate.go
// (docs/testing.md, "Mutation testing"): each limit of the job contract is
// checked on both sides of its boundary. The expected limits are the ones
// the contract states in its error messages, written out here as numbers
// (not read from the constants): executors 1-10000, executorCores 1-1024,
// memory 450 MiB to 4 TiB (4 x 1024 x 1024 MiB), driver cores 0 or
// 0.1-1024, a relative deadline of 1 s to ten years of 365 days, years
// 2000-9999, an estimate of 0 to one year, 0-10 retries, 64 labels of 256
// characters, a name of 256 characters, 1000 arguments, 256 sparkConf and
// environment entries with names of 256 bytes, values of 8192 bytes.

// boundarySpec is a valid spec that sets no optional field.
func boundarySpec() Spec {
	return Spec{
		Name:             "boundary",
		App:              App{AppResource: "local:///opt/app.jar", MainClass: "org.example.Main"},
		Executors:        2,
		ExecutorCores:    1,
		ExecutorMemoryMB: 1024,
	}
}

func TestValidateLimitsOnBothSides(t *testing.T) {
	const tib = 4 * 1024 * 1024 // 4 TiB in MiB
	const year = 365 * 24 * 3600
	f := func(v float64) *float64 { return &v }
	at := func(y int) *time.Time { tm := time.Date(y, 6, 1, 0, 0, 0, 0, time.UTC); return &tm }
	nbAt := func(y int) *NotBefore { return &NotBefore{*at(y)} }
	labels := func(n int) map[string]string {
		m := map[string]string{}
		for i := range n {
			m[fmt.Sprintf("k%d", i)] = "v"
		}
		return m
	}
	conf := func(n int) map[string]string {
		m := map[string]string{}
		for i := range n {
			m[fmt.Sprintf("spark.x%d", i)] = "v"
		}
		return m
	}
	env := func(n int) map[string]string {
		m := map[string]string{}
		for i := range n {
			m[fmt.Sprintf("E%d", i)] = "v"
		}
		return m
	}
	// Each case changes the base spec; field "" means the spec is valid.
	cases := []struct {
		name  string
		mod   func(s *Spec)
		field string
	}{
		{"executors 1", func(s *Spec) { s.Executors = 1 }, ""},
		{"executors 0", func(s *Spec) { s.Executors = 0 }, "executors"},
		{"executors 10000", func(s *Spec) { s.Executors = 10000 }, ""},
		{"executors 10001", func(s *Spec) { s.Executors = 10001 }, "executors"},
		{"executorCores 1024", func(s *Spec) { s.ExecutorCores = 1024 }, ""},
		{"executorCores 1025", func(s *Spec) { s.ExecutorCores = 1025 }, "executorCores"},
		{"executorCores 0", func(s *Spec) { s.ExecutorCores = 0 }, "executorCores"},
		{"executorMemoryMB 450", func(s *Spec) { s.ExecutorMemoryMB = 450 }, ""},
		{"executorMemoryMB 449", func(s *Spec) { s.ExecutorMemoryMB = 449 }, "executorMemoryMB"},
		{"executorMemoryMB 4 TiB", func(s *Spec) { s.ExecutorMemoryMB = tib }, ""},
		{"executorMemoryMB 4 TiB + 1", func(s *Spec) { s.ExecutorMemoryMB = tib + 1 }, "executorMemoryMB"},
		{"memoryOverheadMB 0 (Spark's default)", func(s *Spec) { s.MemoryOverheadMB = 0 }, ""},
		{"memoryOverheadMB -1", func(s *Spec) { s.MemoryOverheadMB = -1 }, "memoryOverheadMB"},
		{"memoryOverheadMB 4 TiB", func(s *Spec) { s.MemoryOverheadMB = tib }, ""},
		{"memoryOverheadMB 4 TiB + 1", func(s *Spec) { s.MemoryOverheadMB = tib + 1 }, "memoryOverheadMB"},
		{"driver cores 0 (default)", func(s *Spec) { s.Driver = &Driver{Cores: 0} }, ""},
		{"driver cores 0.1", func(s *Spec) { s.Driver = &Driver{Cores: 0.1} }, ""},
		{"driver cores 0.09", func(s *Spec) { s.Driver = &Driver{Cores: 0.09} }, "driver.cores"},
		{"driver cores 1024", func(s *Spec) { s.Driver = &Driver{Cores: 1024} }, ""},
		{"driver cores 1024.5", func(s *Spec) { s.Driver = &Driver{Cores: 1024.5} }, "driver.cores"},
		{"driver cores -0.5", func(s *Spec) { s.Driver = &Driver{Cores: -0.5} }, "driver.cores"},
		{"driver cores NaN", func(s *Spec) { s.Driver = &Driver{Cores: math.NaN()} }, "driver.cores"},
		{"driver memory 450", func(s *Spec) { s.Driver = &Driver{MemoryMB: 450} }, ""},
		{"driver memory 449", func(s *Spec) { s.Driver = &Driver{MemoryMB: 449} }, "driver.memoryMB"},
		{"driver memory 4 TiB", func(s *Spec) { s.Driver = &Driver{MemoryMB: tib} }, ""},
		{"driver memory 4 TiB + 1", func(s *Spec) { s.Driver = &Driver{MemoryMB: tib + 1} }, "driver.memoryMB"},
		{"driver memory -1", func(s *Spec) { s.Driver = &Driver{MemoryMB: -1} }, "driver.memoryMB"},
		{"deadline 1 s", func(s *Spec) { s.Deadline = &Deadline{Seconds: f(1)} }, ""},
		{"deadline 0 s", func(s *Spec) { s.Deadline = &Deadline{Seconds: f(0)} }, "deadline"},
		{"deadline ten years", func(s *Spec) { s.Deadline = &Deadline{Seconds: f(10 * year)} }, ""},
		{"deadline ten years + 1 s", func(s *Spec) { s.Deadline = &Deadline{Seconds: f(10*year + 1)} }, "deadline"},
		{"deadline NaN s", func(s *Spec) { s.Deadline = &Deadline{Seconds: f(math.NaN())} }, "deadline"},
		{"deadline in 2000", func(s *Spec) { s.Deadline = &Deadline{At: at(2000)} }, ""},
		{"deadline in 1999", func(s *Spec) { s.Deadline = &Deadline{At: at(1999)} }, "deadline"},
		{"deadline in 9999", func(s *Spec) { s.Deadline = &Deadline{At: at(9999)} }, ""},
		{"deadline in 10000", func(s *Spec) { s.Deadline = &Deadline{At: at(10000)} }, "deadline"},
		{"notBefore in 2000", func(s *Spec) { s.NotBefore = nbAt(2000) }, ""},
		{"notBefore in 1999", func(s *Spec) { s.NotBefore = nbAt(1999) }, "notBefore"},
		{"notBefore in 9999", func(s *Spec) { s.NotBefore = nbAt(9999) }, ""},
		{"notBefore in 10000", func(s *Spec) { s.NotBefore = nbAt(10000) }, "notBefore"},
		{"notBefore a second before the deadline", func(s *Spec) {
			s.Deadline = &Deadline{At: at(2030)}
			s.NotBefore = &NotBefore{at(2030).Add(-time.Second)}
		}, ""},
		{"notBefore at the deadline", func(s *Spec) { s.Deadline = &Deadline{At: at(2030)}; s.NotBefore = nbAt(2030) }, "notBefore"},
		{"notBefore after the deadline", func(s *Spec) { s.Deadline = &Deadline{At: at(2030)}; s.NotBefore = nbAt(2031) }, "notBefore"},
		{"notBefore with a relative deadline", func(s *Spec) { s.Deadline = &Deadline{Seconds: f(60)}; s.NotBefore = nbAt(2030) }, ""},
		{"estimate 0", func(s *Spec) { s.EstimatedDurationSeconds = 0 }, ""},
		{"estimate -0.5", func(s *Spec) { s.EstimatedDurationSeconds = -0.5 }, "estimatedDurationSeconds"},
		{"estimate one year", func(s *Spec) { s.EstimatedDurationSeconds = year }, ""},
		{"estimate one year + 1 s", func(s *Spec) { s.EstimatedDurationSeconds = year + 1 }, "estimatedDurationSeconds"},
		{"estimate NaN", func(s *Spec) { s.EstimatedDurationSeconds = math.NaN() }, "estimatedDurationSeconds"},
		{"retries 0", func(s *Spec) { s.Retries = 0 }, ""},
		{"retries -1", func(s *Spec) { s.Retries = -1 }, "retries"},
		{"retries 10", func(s *Spec) { s.Retries = 10 }, ""},
		{"retries 11", func(s *Spec) { s.Retries = 11 }, "retries"},
		{"64 labels", func(s *Spec) { s.Labels = labels(64) }, ""},
		{"65 labels", func(s *Spec) { s.Labels = labels(65) }, "labels"},
		{"label value of 256 characters", func(s *Spec) { s.Labels = map[string]string{"k": strings.Repeat("é", 256)} }, ""},
		{"label value of 257 characters", func(s *Spec) { s.Labels = map[string]string{"k": strings.Repeat("é", 257)} }, "labels.k"},
		{"name of 256 characters", func(s *Spec) { s.Name = strings.Repeat("é", 256) }, ""},
		{"name of 257 characters", func(s *Spec) { s.Name = strings.Repeat("é", 257) }, "name"},
		{"appResource of 4096 bytes", func(s *Spec) { s.App.AppResource = "/" + strings.Repeat("a", 4095) }, ""},
		{"appResource of 4097 bytes", func(s *Spec) { s.App.AppResource = "/" + strings.Repeat("a", 4096) }, "app.appResource"},
		{"mainClass of 1024 bytes", func(s *Spec) { s.App.MainClass = "a." + strings.Repeat("B", 1022) }, ""},
		{"mainClass of 1025 bytes", func(s *Spec) { s.App.MainClass = "a." + strings.Repeat("B", 1023) }, "app.mainClass"},
		{"1000 args", func(s *Spec) { s.App.Args = make([]string, 1000) }, ""},
		{"1001 args", func(s *Spec) { s.App.Args = make([]string, 1001) }, "app.args"},
		{"an arg of 8192 bytes", func(s *Spec) { s.App.Args = []string{"x", strings.Repeat("a", 8192)} }, ""},
		{"an arg of 8193 bytes", func(s *Spec) { s.App.Args = []string{"x", strings.Repeat("a", 8193)} }, "app.args[1]"},
		{"256 sparkConf entries", func(s *Spec) { s.App.SparkConf = conf(256) }, ""},
		{"257 sparkConf entries", func(s *Spec) { s.App.SparkConf = conf(257) }, "app.sparkConf"},
		{"sparkConf key of 256 bytes", func(s *Spec) { s.App.SparkConf = map[string]string{"spark." + strings.Repeat("k", 250): "v"} }, ""},
		{"sparkConf key of 257 bytes", func(s *Spec) { s.App.SparkConf = map[string]string{"spark." + strings.Repeat("k", 251): "v"} }, "app.sparkConf"},
		{"sparkConf value of 8192 characters", func(s *Spec) { s.App.SparkConf = map[string]string{"spark.a": strings.Repeat("é", 8192)} }, ""},
		{"sparkConf value of 8193 characters", func(s *Spec) { s.App.SparkConf = map[string]string{"spark.a": strings.Repeat("é", 8193)} }, "app.sparkConf.spark.a"},
		{"sparkConf value with a tab", func(s *Spec) { s.App.SparkConf = map[string]string{"spark.a": "x\ty"} }, ""},
		{"sparkConf value with a NUL", func(s *Spec) { s.App.SparkConf = map[string]string{"spark.a": "x\x00y"} }, "app.sparkConf.spark.a"},
		{"256 environment entries", func(s *Spec) { s.App.Environment = env(256) }, ""},
		{"257 environment entries", func(s *Spec) { s.App.Environment = env(257) }, "app.environment"},
		{"environment name of 256 bytes", func(s *Spec) { s.App.Environment = map[string]string{strings.Repeat("E", 256): "v"} }, ""},
		{"environment name of 257 bytes", func(s *Spec) { s.App.Environment = map[string]string{strings.Repeat("E", 257): "v"} }, "app.environment"},
		{"environment value of 8192 bytes", func(s *Spec) { s.App.Environment = map[string]string{"E": strings.Repeat("a", 8192)} }, ""},
		{"environment value of 8193 bytes", func(s *Spec) { s.App.Environment = map[string]string{"E": strings.Repeat("a", 8193)} }, "app.environment.E"},
		{"environment value with a NUL", func(s *Spec) { s.App.Environment = map[string]string{"E": "a\x00"} }, "app.environment.E"},
		{"a team label that is a team name", func(s *Spec) { s.Labels = map[string]string{"team": "data-eng.2"} }, ""},
		{"a team label with a space", func(s *Spec) { s.Labels = map[string]string{"team": "data eng"} }, "labels.team"},
		{"a name starting with a control character", func(s *Spec) { s.Name = "\x07job" }, "name"},
		{"a sparkConf value starting with a NUL", func(s *Spec) { s.App.SparkConf = map[string]string{"spark.a": "\x00x"} }, "app.sparkConf.spark.a"},
		{"an appResource starting with a space", func(s *Spec) { s.App.AppResource = " /opt/app.jar" }, "app.appResource"},
		{"environment value not UTF-8", func(s *Spec) { s.App.Environment = map[string]string{"E": "a\xff"} }, "app.environment.E"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := boundarySpec()
			tc.mod(&s)
			err := s.Validate()
			if tc.field == "" {
				if err != nil {
					t.Fatalf("Validate = %v, want the spec accepted", err)
				}
				return
			}
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Field != tc.field {
				t.Fatalf("Validate = %v, want an error on %s", err, tc.field)
			}
		})
	}
}

// TestAdmitNotBefore: a job that may not start before nb and needs d
// cannot finish by its deadline when nb + d is after the deadline (worked
// out by hand below; now is 12:00, the deadline 13:00).
func TestAdmitNotBefore(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	deadline := now.Add(time.Hour)
	for _, c := range []struct {
		name    string
		nb      time.Time
		estSecs float64
		reject  string
	}{
		{"12:30 + 40 min = 13:10, after 13:00", now.Add(30 * time.Minute), 40 * 60, "may not start before"},
		{"12:30 + 30 min = 13:00, just in time", now.Add(30 * time.Minute), 30 * 60, ""},
		{"12:10 + 40 min = 12:50", now.Add(10 * time.Minute), 40 * 60, ""},
		{"12:30, no estimate", now.Add(30 * time.Minute), 0, ""},
		{"11:30 (past) + 50 min: from now 12:50", now.Add(-30 * time.Minute), 50 * 60, ""},
		// A notBefore at or after the deadline can never be met, with or
		// without an estimate (the REST path refuses it with a 400; a
		// relative deadline resolved in the simulator reaches Admit).
		{"13:00, the deadline itself, no estimate", now.Add(time.Hour), 0, "may not start before"},
		{"13:30, after the deadline, no estimate", now.Add(90 * time.Minute), 0, "may not start before"},
		{"12:59:59, no estimate", now.Add(time.Hour - time.Second), 0, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			j := &Job{Spec: Spec{ExecutorCores: 1, ExecutorMemoryMB: 1024, EstimatedDurationSeconds: c.estSecs,
				NotBefore: &NotBefore{c.nb}}, DeadlineAt: &deadline}
			got := Admit(j, now, true)
			if (c.reject == "") != (got == "") || !strings.Contains(got, c.reject) {
				t.Fatalf("Admit = %q, want %q", got, c.reject)
			}
		})
	}
}

// TestFieldErrorText: the error names its field before the message, or is
// the message alone when it concerns the whole body.
func TestFieldErrorText(t *testing.T) {
	if got := (&FieldError{Field: "executors", Msg: "too many"}).Error(); got != "executors: too many" {
		t.Errorf("with a field: %q", got)
	}
	if got := (&FieldError{Msg: "the body is empty"}).Error(); got != "the body is empty" {
		t.Errorf("without a field: %q", got)
	}
}

// TestDecodeSpecTypeNames: a value of the wrong JSON type is described by
// the type the field wants, in words.
func TestDecodeSpecTypeNames(t *testing.T) {
	for _, c := range []struct{ from, to, field, want string }{
		{`"name": "wordcount-20g"`, `"name": 5`, "name", "must be a string, not a JSON number"},
		{`"executorCores": 2`, `"executorCores": "2"`, "executorCores", "must be a whole number, not a JSON string"},
		{`"estimatedDurationSeconds": 600`, `"estimatedDurationSeconds": "600"`, "estimatedDurationSeconds", "must be a number, not a JSON string"},
		{`"args": ["/data/in"]`, `"args": "/data/in"`, "app.args", "must be an array of strings, not a JSON string"},
		{`"labels": {"team": "analytics"}`, `"labels": "analytics"`, "labels", "must be an object of string values, not a JSON string"},
		{`"driver": {"cores": 1, "memoryMB": 1024}`, `"driver": "big"`, "driver", "must be an object, not a JSON string"},
	} {
		body := strings.Replace(validJob, c.from, c.to, 1)
		if body == validJob {
			t.Fatalf("%s is not in the test job", c.from)
		}
		_, err := DecodeSpec(strings.NewReader(body))
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != c.field || fe.Msg != c.want {
			t.Errorf("%s: got %v, want %s: %s", c.to, err, c.field, c.want)
		}
	}
}
