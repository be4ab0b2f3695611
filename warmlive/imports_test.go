package warmlive

import (
	"strings"
	"testing"

	"github.com/sparkpack/sparkpack/internal/importcheck"
)

// TestImports: no net/http, mesos-go, package offers nor the scheduler (doc.go).
func TestImports(t *testing.T) {
	importcheck.Check(t, func(p string) bool {
		return !strings.HasPrefix(p, "net") && !strings.Contains(p, "mesos") && p != "github.com/sparkpack/sparkpack/offers" && p != "github.com/sparkpack/sparkpack/scheduler"
	})
}
