package zktest

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

// ServerScript is the Debian package's launcher.
const ServerScript = "/usr/share/zookeeper/bin/zkServer.sh"

// Skip returns why ZooKeeper tests cannot run here ("" when they can).
func Skip() string {
	if _, err := os.Stat(ServerScript); err != nil {
		return "ZooKeeper is not installed (" + ServerScript + "): apt-get install -y zookeeper, or scripts/deps.sh test"
	}
	if _, err := exec.LookPath("java"); err != nil {
		return "ZooKeeper needs java, which is not on PATH (apt-get install -y zookeeper brings it)"
	}
	return ""
}

// Start runs a ZooKeeper server until the test ends and returns its
// host:port once it answers, or skips the test where ZooKeeper is not
// installed.
func Start(t testing.TB) string {
	t.Helper()
	if why := Skip(); why != "" {
		t.Skip(why)
	}
	dir := t.TempDir()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cfg := filepath.Join(dir, "zoo.cfg")
	conf := fmt.Sprintf("tickTime=500\ndataDir=%s\nclientPort=%d\nclientPortAddress=127.0.0.1\nadmin.enableServer=false\nmaxSessionTimeout=60000\n", filepath.Join(dir, "data"), port)
	if err := os.WriteFile(cfg, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	logf, err := os.Create(filepath.Join(dir, "zookeeper.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(ServerScript, "start-foreground", cfg)
	cmd.Env = append(os.Environ(), "ZOO_LOG_DIR="+dir, "JMXDISABLE=true")
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatalf("zktest: start ZooKeeper: %v", err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); logf.Close(); close(done) }()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
	})
	addr := "127.0.0.1:" + strconv.Itoa(port)
	deadline := time.Now().Add(3 * time.Minute) // a JVM on a loaded machine
	for {
		select {
		case <-done:
			b, _ := os.ReadFile(filepath.Join(dir, "zookeeper.log"))
			t.Fatalf("zktest: ZooKeeper exited; its output:\n%s", b)
		default:
		}
		if err := ping(addr); err == nil {
			return addr
		} else if time.Now().After(deadline) {
			t.Fatalf("zktest: ZooKeeper on %s does not answer after 3 minutes: %v", addr, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// ping opens a session and reads the root.
func ping(addr string) error {
	c, err := Connect(addr)
	if err != nil {
		return err
	}
	defer c.Close()
	_, _, err = c.Exists("/")
	return err
}

// Connect opens a session that gives up after 3 s without a server (for
// the tests' own znode writes).
func Connect(addr string) (*zk.Conn, error) {
	c, _, err := zk.Connect([]string{addr}, 10*time.Second, zk.WithLogInfo(false), zk.WithLogger(quiet{}))
	if err != nil {
		return nil, err
	}
	return c, nil
}

type quiet struct{}

func (quiet) Printf(string, ...any) {}

// Silent listens on a local port as a ZooKeeper that accepts connections
// and never answers (a hung or black-holed ensemble). accepted gets a
// value once a client has connected; release closes the listener and every
// connection (the client's pending requests then fail). release is also
// registered with t.Cleanup.
func Silent(t testing.TB) (addr string, accepted <-chan struct{}, release func()) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	acc := make(chan struct{}, 1)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c) // held open, never answered
			mu.Unlock()
			select {
			case acc <- struct{}{}:
			default:
			}
		}
	}()
	var once sync.Once
	release = func() {
		once.Do(func() {
			ln.Close()
			mu.Lock()
			defer mu.Unlock()
			for _, c := range conns {
				c.Close()
			}
		})
	}
	t.Cleanup(release)
	return ln.Addr().String(), acc, release
}
