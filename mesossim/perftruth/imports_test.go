package perftruth

import (
	"testing"

	"github.com/sparkpack/sparkpack/internal/importcheck"
)

// TestPure: the truth imports only the standard library's pure parts
// (doc.go): no I/O, clocks, Mesos, nor any sparkpack package (above all
// not perfmodel, the model it must stay independent of).
func TestPure(t *testing.T) {
	importcheck.Check(t, importcheck.PureStd)
}
