// Package importcheck lets a package's tests hold it to what its doc.go
// says it must not import: Check parses the imports of the package's
// non-test files (the test's working directory) and reports every import
// a rule refuses. Test-only; it imports nothing of sparkpack.
package importcheck

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Check fails t for each import of the package's non-test files that
// allowed refuses, naming the file and the import.
func Check(t testing.TB, allowed func(path string) bool) {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		n++
		af, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range af.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if !allowed(p) {
				t.Errorf("%s imports %s", f, p)
			}
		}
	}
	if n == 0 {
		t.Fatal("importcheck: no Go file in the working directory")
	}
}

// PureStd is the rule of a pure package: the standard library only, and
// of it nothing that does I/O or reads a clock (database/, net, os, io,
// time).
func PureStd(p string) bool {
	return !strings.Contains(p, ".") && !strings.HasPrefix(p, "database/") && !strings.HasPrefix(p, "net") && p != "os" && p != "io" && p != "time"
}
