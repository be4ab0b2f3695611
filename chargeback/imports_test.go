package chargeback

import (
	"strings"
	"testing"

	"github.com/sparkpack/sparkpack/internal/importcheck"
)

// TestImports: no scheduler core, HTTP nor SQL packages (doc.go): the store is reached through SpendSource.
func TestImports(t *testing.T) {
	importcheck.Check(t, func(p string) bool {
		return !strings.HasPrefix(p, "database/") && !strings.HasPrefix(p, "net") && !strings.Contains(p, "mesos") && !strings.HasPrefix(p, "github.com/sparkpack/sparkpack/scheduler")
	})
}
