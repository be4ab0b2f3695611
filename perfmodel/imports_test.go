package perfmodel

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestPure: the package imports only the standard library's pure parts
// (doc.go): no database/sql, net/http, os, mesos-go nor sparkpack package.
func TestPure(t *testing.T) {
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
			if strings.Contains(p, ".") || strings.HasPrefix(p, "database/") || strings.HasPrefix(p, "net") || p == "os" || p == "io" || p == "time" {
				t.Errorf("%s imports %s", f, p)
			}
		}
	}
}
