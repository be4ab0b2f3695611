package integration

import (
	"bufio"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestMakeDemoPassesARGS: `make demo ARGS="..."` hands its flags to the
// demo (here free ports, the test's database, x8 and no sample), which
// says so in its banner and stops on Ctrl-C.
func TestMakeDemoPassesARGS(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make is not installed")
	}
	args := "ARGS=--listen 127.0.0.1:0 --mesos-listen 127.0.0.1:0 --spark-rest-listen= --sim-speed 8 --no-sample --database-url " + e2eDB(t)
	cmd := exec.Command("make", "-s", "demo", args)
	cmd.Dir = repoRoot(t)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // Ctrl-C reaches the whole group, as in a terminal
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var seen []string
	banner, ready := false, false
	deadline := time.After(3 * time.Minute)
	for !ready {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("make demo ended before it was ready:\n%s", strings.Join(seen, "\n"))
			}
			seen = append(seen, l)
			banner = banner || strings.Contains(l, "simulated time x8")
			ready = strings.HasPrefix(l, "demo: press Ctrl-C")
		case <-deadline:
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			t.Fatalf("make demo not ready within 3 minutes:\n%s", strings.Join(seen, "\n"))
		}
	}
	if !banner {
		t.Errorf("the banner does not show --sim-speed 8 from ARGS:\n%s", strings.Join(seen, "\n"))
	}
	for _, l := range seen {
		if strings.Contains(l, "demo: wave") {
			t.Errorf("--no-sample from ARGS was not applied: %q", l)
		}
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGINT)
	done := make(chan error, 1)
	go func() {
		for l := range lines {
			seen = append(seen, l)
		}
		done <- cmd.Wait()
	}()
	select {
	case <-done:
		// make itself reports the interrupt (and exits by it), as in a
		// terminal; the demo's own lines say whether it stopped in order.
	case <-time.After(60 * time.Second):
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		t.Fatal("make demo did not stop within 60 s of Ctrl-C")
	}
	t.Logf("make demo:\n%s", strings.Join(seen, "\n"))
	if !strings.Contains(strings.Join(seen, "\n"), "demo: stopped") {
		t.Errorf("no orderly stop:\n%s", strings.Join(seen, "\n"))
	}
}
