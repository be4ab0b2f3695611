package main

import (
	"encoding/json"
	"flag"
	"io"
	"strings"
	"testing"

	"github.com/sparkpack/sparkpack/scheduler"
)

// TestSubmitExecutorsAuto: --executors auto sends "executors": "auto"
// with its bounds and hints (the contract's form, which the server
// decodes back into an auto job); a count sends the count.
func TestSubmitExecutorsAuto(t *testing.T) {
	body := func(args ...string) (map[string]any, error) {
		c := submitConfig{conf: kvFlag{}, env: kvFlag{}, labels: kvFlag{}}
		fs := flag.NewFlagSet("submit", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		fs.Var(&c.executors, "executors", "")
		fs.IntVar(&c.minExecutors, "min-executors", 0, "")
		fs.IntVar(&c.maxExecutors, "max-executors", 0, "")
		fs.Float64Var(&c.inputSizeGB, "input-size-gb", 0, "")
		fs.IntVar(&c.iterations, "iterations", 0, "")
		fs.IntVar(&c.cores, "executor-cores", 0, "")
		fs.Var(&c.mem, "executor-memory", "")
		fs.StringVar(&c.appResource, "app-resource", "", "")
		fs.StringVar(&c.mainClass, "main-class", "", "")
		fs.IntVar(&c.retries, "retries", -1, "")
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		c.set = map[string]bool{}
		fs.Visit(func(f *flag.Flag) { c.set[f.Name] = true })
		b, err := c.jobBody()
		if err != nil {
			return nil, err
		}
		if _, err := scheduler.DecodeSpec(strings.NewReader(string(b))); err != nil {
			t.Fatalf("the server would refuse %s: %v", b, err)
		}
		var m map[string]any
		return m, json.Unmarshal(b, &m)
	}
	base := []string{"--app-resource", "local:///a.jar", "--main-class", "a.B", "--executor-cores", "1", "--executor-memory", "1g"}
	m, err := body(append(base, "--executors", "auto", "--max-executors", "12", "--input-size-gb", "20", "--iterations", "3")...)
	if err != nil || m["executors"] != "auto" || m["maxExecutors"] != 12.0 || m["inputSizeGB"] != 20.0 || m["iterations"] != 3.0 || m["sizing"] != nil {
		t.Fatalf("auto: %v, %v", m, err)
	}
	if m, err := body(append(base, "--executors", "4")...); err != nil || m["executors"] != 4.0 {
		t.Fatalf("count: %v, %v", m, err)
	}
	if _, err := body(append(base, "--executors", "many")...); err == nil {
		t.Fatal("--executors many accepted")
	}
	if _, err := body(append(base, "--executors", "auto", "--iterations", "-1")...); err == nil || !strings.Contains(err.Error(), "--iterations") {
		t.Fatalf("bad hint: %v; want an error naming --iterations", err)
	}
}
