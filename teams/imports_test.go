package teams

import (
	"strings"
	"testing"

	"github.com/sparkpack/sparkpack/internal/importcheck"
)

// TestImports: no scheduler, Mesos, SQL nor HTTP packages (doc.go): the scheduler and the API import it.
func TestImports(t *testing.T) {
	importcheck.Check(t, func(p string) bool {
		return !strings.HasPrefix(p, "database/") && !strings.HasPrefix(p, "net") && !strings.Contains(p, "mesos") && !strings.HasPrefix(p, "github.com/sparkpack/")
	})
}
