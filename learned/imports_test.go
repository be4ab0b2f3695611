package learned

import (
	"strings"
	"testing"

	"github.com/sparkpack/sparkpack/internal/importcheck"
)

// TestImports: the package does no I/O of its own (doc.go): no
// database/sql, net/http, os, mesos-go nor package store; of sparkpack it
// imports perfmodel and scheduler only.
func TestImports(t *testing.T) {
	importcheck.Check(t, func(p string) bool {
		ok := !strings.Contains(p, ".") || p == "github.com/sparkpack/sparkpack/perfmodel" || p == "github.com/sparkpack/sparkpack/scheduler"
		return ok && !strings.HasPrefix(p, "database/") && !strings.HasPrefix(p, "net") && p != "os"
	})
}
