package lifecycle

import (
	"strings"
	"testing"

	"github.com/sparkpack/sparkpack/internal/importcheck"
)

// TestNoIO: the machine imports nothing that talks to Mesos, HTTP or a
// database, nor the adapter that performs its actions (doc.go).
func TestNoIO(t *testing.T) {
	forbidden := []string{"github.com/mesos/", "net/http", "database/sql", "github.com/lib/pq", "os/exec"}
	importcheck.Check(t, func(path string) bool {
		for _, p := range forbidden {
			if strings.HasPrefix(path, p) {
				return false
			}
		}
		return path != "github.com/sparkpack/sparkpack/offers"
	})
}
