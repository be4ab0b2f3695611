package warmlive

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/scheduler"
	"github.com/sparkpack/sparkpack/store"
)

// TestNoStateLiterals: the package names no job state by its stored
// text ("REJECTED"): it asks store.Submission, whose states are the
// scheduler's, so a renamed state cannot leave a stale copy here.
func TestNoStateLiterals(t *testing.T) {
	states := map[string]bool{}
	for _, s := range scheduler.AllStates {
		states[string(s)] = true
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		fs := token.NewFileSet()
		af, err := parser.ParseFile(fs, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(af, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				if v, err := strconv.Unquote(lit.Value); err == nil && states[v] {
					t.Errorf("%s: the job state %s as a literal (use store.Submission's Rejected/Finished)", fs.Position(lit.Pos()), lit.Value)
				}
			}
			return true
		})
	}
}

// TestJobsStates: Jobs leaves out the jobs in scheduler.Rejected and takes
// the measured run time of those in scheduler.Finished only.
func TestJobsStates(t *testing.T) {
	t0 := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	started, ended := t0.Add(time.Minute), t0.Add(11*time.Minute)
	row := func(s scheduler.State) store.Submission {
		return store.Submission{SubmittedAt: t0, State: string(s), Executors: 1, ExecutorCores: 1, ExecutorMemMB: 1024,
			DriverCores: 1, DriverMemMB: 1024, EstimatedSeconds: 60, StartedAt: &started, FinishedAt: &ended}
	}
	for _, s := range scheduler.AllStates {
		got := Jobs([]store.Submission{row(s)}, 1)
		switch {
		case s == scheduler.Rejected:
			if len(got) != 0 {
				t.Errorf("%s: kept %+v", s, got)
			}
		case len(got) != 1:
			t.Errorf("%s: %d jobs, want 1", s, len(got))
		case s == scheduler.Finished && got[0].RunSeconds != 600:
			t.Errorf("%s: run %gs, want the measured 600s", s, got[0].RunSeconds)
		case s != scheduler.Finished && got[0].RunSeconds != 60:
			t.Errorf("%s: run %gs, want the estimate 60s", s, got[0].RunSeconds)
		}
	}
}
