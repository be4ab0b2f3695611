package perftruth

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestPure: the truth imports only the standard library's pure parts
// (doc.go): no I/O, clocks, Mesos, nor any sparkpack package (above all
// not perfmodel, the model it must stay independent of).
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
