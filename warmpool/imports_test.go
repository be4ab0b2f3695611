package warmpool

import (
	"strings"
	"testing"

	"github.com/sparkpack/sparkpack/internal/importcheck"
)

// TestImports: no database/sql, net/http, mesos-go nor package power; of sparkpack only forecast (doc.go).
func TestImports(t *testing.T) {
	importcheck.Check(t, func(p string) bool {
		return !strings.HasPrefix(p, "database/") && !strings.HasPrefix(p, "net") && p != "os" && !strings.Contains(p, "mesos") && (!strings.HasPrefix(p, "github.com/sparkpack/") || p == "github.com/sparkpack/sparkpack/forecast")
	})
}
