package lifecycle

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestNoIO: the machine imports nothing that talks to Mesos, HTTP or a
// database, nor the adapter that performs its actions (doc.go).
func TestNoIO(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	forbidden := []string{"github.com/mesos/", "net/http", "database/sql", "github.com/lib/pq", "os/exec"}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range af.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			for _, p := range forbidden {
				if strings.HasPrefix(path, p) || path == "github.com/sparkpack/sparkpack/offers" {
					t.Errorf("%s imports %s", f, path)
				}
			}
		}
	}
}
