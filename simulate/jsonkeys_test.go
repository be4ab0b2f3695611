package simulate

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"testing"
)

// snakeKey is the case docs/simulation.md documents for every key of the
// simulator's JSON: lower-case words joined by underscores.
var snakeKey = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)

// jsonKeys collects every object key of v, nested ones included, as
// "path.key" -> key.
func jsonKeys(v any, path string, into map[string]string) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			into[path+"."+k] = k
			jsonKeys(e, path+"."+k, into)
		}
	case []any:
		for _, e := range x {
			jsonKeys(e, path+"[]", into)
		}
	}
}

// TestJSONKeysAreSnakeCase: every key of a --job-log JSON line and of
// --format json, nested ones included (a job's shares, a policy's teams),
// is snake_case as documented. The shares' keys were Go's field names
// (Executors, CPUs, UsedCPUs) until 2026-11-27.
func TestJSONKeysAreSnakeCase(t *testing.T) {
	log := filepath.Join(t.TempDir(), "jobs.jsonl")
	out, _, err := runCommand(t, "--trace", tracePath(t), "--quiet", "--workload", "thesis", "--hours", "5", "--seeds", "4", "--sample", "10",
		"--policies", "fifo-consolidate,dap", "--power-off-after", "30s", "--team-mix", "a=0.5,b=0.5", "--format", "json", "--job-log", log)
	if err != nil {
		t.Fatal(err)
	}
	keys := map[string]string{}
	var results any
	if err := json.Unmarshal([]byte(out), &results); err != nil {
		t.Fatal(err)
	}
	jsonKeys(results, "json", keys)
	f, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(bytes.NewReader(f))
	sc.Buffer(nil, 1<<20)
	lines := 0
	for sc.Scan() {
		var line any
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("job log line %d: %v", lines+1, err)
		}
		jsonKeys(line, "jsonl", keys)
		lines++
	}
	if lines == 0 {
		t.Fatal("the job log is empty")
	}
	// The nested objects this checks must be there (or it checks nothing).
	for _, nested := range []string{"jsonl.shares[].executors", "json[].teams[].team"} {
		if _, ok := keys[nested]; !ok {
			t.Errorf("no key %s in the output (keys: %d)", nested, len(keys))
		}
	}
	var bad []string
	for path, k := range keys {
		if !snakeKey.MatchString(k) {
			bad = append(bad, path)
		}
	}
	sort.Strings(bad)
	for _, b := range bad {
		t.Errorf("key %s is not snake_case", b)
	}
}
