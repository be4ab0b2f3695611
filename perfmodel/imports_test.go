package perfmodel

import (
	"testing"

	"github.com/sparkpack/sparkpack/internal/importcheck"
)

// TestPure: the package imports only the standard library's pure parts
// (doc.go): no database/sql, net/http, os, mesos-go nor sparkpack package.
func TestPure(t *testing.T) {
	importcheck.Check(t, importcheck.PureStd)
}
