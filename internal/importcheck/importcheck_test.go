package importcheck

import (
	"strings"
	"testing"
)

// The rule sees this package's own imports: refusing "go/parser" fails,
// and PureStd refuses what a pure package must not import.
func TestCheckSeesImports(t *testing.T) {
	ft := &testing.T{}
	done := make(chan struct{})
	go func() { defer close(done); Check(ft, func(p string) bool { return p != "go/parser" }) }()
	<-done
	if !ft.Failed() {
		t.Error("Check passed a package that imports a refused path")
	}
	Check(t, func(p string) bool { return !strings.Contains(p, ".") })
	for p, want := range map[string]bool{"strings": true, "math": true, "os": false, "io": false, "time": false, "net/http": false, "database/sql": false, "github.com/x/y": false} {
		if PureStd(p) != want {
			t.Errorf("PureStd(%q) = %v", p, !want)
		}
	}
}
