package offers

import (
	"testing"
	"time"
)

// TestReadSpacing: the refresh loop spaces its periodic reads by
// --agents-refresh, or by 8 times what the last read took when that is
// longer (a large cluster); ReadEvery reports that spacing to power
// management (power.View.Every), the configured refresh before any read.
func TestReadSpacing(t *testing.T) {
	for _, c := range []struct{ refresh, took, want time.Duration }{
		{2 * time.Second, 100 * time.Millisecond, 2 * time.Second},
		{2 * time.Second, 250 * time.Millisecond, 2 * time.Second},
		{2 * time.Second, 2 * time.Second, 16 * time.Second},
	} {
		if got := readSpacing(c.refresh, c.took); got != c.want {
			t.Errorf("refresh %s, a read of %s: spaced %s, want %s", c.refresh, c.took, got, c.want)
		}
	}
	c := NewCluster(ClusterConfig{Refresh: 3 * time.Second})
	if got := c.ReadEvery(); got != 3*time.Second {
		t.Errorf("before any read: ReadEvery %s, want the refresh, 3s", got)
	}
	c.readEvery = 24 * time.Second // after a 3 s read
	if got := c.ReadEvery(); got != 24*time.Second {
		t.Errorf("after a 3 s read: ReadEvery %s, want 24s", got)
	}
}
