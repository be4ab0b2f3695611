package integration

import (
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/mesossim"
)

// TestServeWithSeveralMasters (#28): `serve --mesos-master` given a
// master that is down, a non-leading master (it redirects, as a real
// one does) and the emulated leader, in that order: sparkpack finds the
// leader, runs a job to the end, and the driver is told the leader's
// address (Spark's Mesos client takes one master, not a list).
func TestServeWithSeveralMasters(t *testing.T) {
	emu := startEmulator(t, mesossim.Config{Cluster: smallCluster(3)})
	leader := strings.TrimPrefix(emu.URL, "http://")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	follower := &http.Server{Handler: mesossim.Follower(func() string { return leader })}
	go func() { _ = follower.Serve(ln) }()
	t.Cleanup(func() { follower.Close() })
	dead, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadAddr := dead.Addr().String()
	dead.Close()

	sp := startSparkpack(t, deadAddr+","+ln.Addr().String()+","+leader, e2eDB(t))
	id := submit(t, sp.API, sparkJob("through-the-follower", 2, 1, 1024, 20))
	v := waitState(t, sp.API, id, 3*time.Minute, "FINISHED", "FAILED")
	if v.State != "FINISHED" {
		t.Fatalf("job %s is %s (%v)", id, v.State, v.Events)
	}
	i := slices.Index(v.DriverCommand, "--master")
	if i < 0 || i+1 >= len(v.DriverCommand) || v.DriverCommand[i+1] != "mesos://"+leader {
		t.Fatalf("driver command %q: want --master mesos://%s", v.DriverCommand, leader)
	}
	waitNoLeftovers(t, emu.Master, time.Minute)
}
