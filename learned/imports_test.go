package learned

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestImports: the package does no I/O of its own (doc.go): no
// database/sql, net/http, os, mesos-go nor package store; of sparkpack it
// imports perfmodel and scheduler only.
func TestImports(t *testing.T) {
	files, _ := filepath.Glob("*.go")
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		ast, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range ast.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			ok := !strings.Contains(p, ".") || p == "github.com/sparkpack/sparkpack/perfmodel" || p == "github.com/sparkpack/sparkpack/scheduler"
			if !ok || strings.HasPrefix(p, "database/") || strings.HasPrefix(p, "net") || p == "os" {
				t.Errorf("%s imports %s", f, p)
			}
		}
	}
}
