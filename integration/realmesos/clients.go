package realmesos

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
)

// ClientRun is what a third-party framework program did against a master.
type ClientRun struct {
	// Updates are the task states the program reported, in order
	// ("TASK_RUNNING", ...); Tasks the same by task.
	Updates []string
	Tasks   map[string][]string
	// ExitCode is the program's exit status (-1 when it was killed).
	ExitCode int
	// Output is everything it printed.
	Output string
}

var (
	executeUpdate = regexp.MustCompile(`Received status update (TASK_[A-Z_]+) for task '([^']*)'`)
	exampleUpdate = regexp.MustCompile(`Task (\S+) is in state (TASK_[A-Z_]+)`)
)

func runClient(ctx context.Context, cmd *exec.Cmd, re *regexp.Regexp) (ClientRun, error) {
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	err := cmd.Run()
	r := ClientRun{Output: out.String(), ExitCode: cmd.ProcessState.ExitCode(), Tasks: map[string][]string{}}
	for _, m := range re.FindAllStringSubmatch(r.Output, -1) {
		state, task := m[1], m[2]
		if !strings.HasPrefix(state, "TASK_") {
			state, task = m[2], m[1]
		}
		r.Updates = append(r.Updates, state)
		r.Tasks[task] = append(r.Tasks[task], state)
	}
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		return r, err
	}
	if ctx.Err() != nil {
		return r, ctx.Err()
	}
	return r, nil
}

// RunMesosExecute runs Mesos' own command-line framework, mesos-execute
// from bin, against the master at hostPort (it speaks the v1 scheduler API
// through Mesos' C++ scheduler library), with the given flags.
func RunMesosExecute(ctx context.Context, bin, hostPort string, flags ...string) (ClientRun, error) {
	cmd := exec.CommandContext(ctx, filepath.Join(bin, "mesos-execute"), append([]string{"--master=" + hostPort}, flags...)...)
	cmd.Env = cleanEnv()
	return runClient(ctx, cmd, executeUpdate)
}

// RunExampleScheduler runs mesos-go's example scheduler (see
// BuildMesosGoExamples) against the master's scheduler API with the
// protobuf codec, launching tasks tasks of the example executor (served
// by the scheduler's own artifact server and fetched by the agents).
func RunExampleScheduler(ctx context.Context, scheduler, executor, masterURL string, tasks int, extra ...string) (ClientRun, error) {
	args := append([]string{"-url", strings.TrimRight(masterURL, "/") + "/api/v1/scheduler", "-codec", "protobuf",
		"-tasks", strconv.Itoa(tasks), "-exec.image", "", "-executor", executor, "-server.address", "127.0.0.1",
		"-metrics.port", "0", "-verbose", "-checkpoint=false", "-failoverTimeout", "0s"}, extra...)
	cmd := exec.CommandContext(ctx, scheduler, args...)
	cmd.Env = cleanEnv()
	return runClient(ctx, cmd, exampleUpdate)
}

// ExampleSchedulerSucceeded reports whether the example scheduler saw all
// its tasks finish.
func ExampleSchedulerSucceeded(r ClientRun) bool {
	return strings.Contains(r.Output, "mission accomplished")
}

func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "MESOS_") && !strings.HasPrefix(kv, "LIBPROCESS_") {
			env = append(env, kv)
		}
	}
	return env
}

// MesosExecuteCase is a mesos-execute run and what a real Mesos 1.12
// master gives it (TestThirdPartyFrameworksOnBoth checks these against the
// real master; the emulator's tests check the emulator without one).
type MesosExecuteCase struct {
	Name     string
	Flags    []string
	Updates  []string
	ExitCode int
}

// MesosExecuteCases are run against the emulator and the real master.
var MesosExecuteCases = []MesosExecuteCase{
	{Name: "command", Flags: []string{"--name=conformance", "--command=sleep 1", "--resources=cpus:0.5;mem:64"},
		Updates: []string{"TASK_STARTING", "TASK_RUNNING", "TASK_FINISHED"}, ExitCode: 0},
	{Name: "json", Flags: []string{"--name=conformance-json", "--content_type=json", "--command=sleep 1", "--resources=cpus:0.5;mem:64"},
		Updates: []string{"TASK_STARTING", "TASK_RUNNING", "TASK_FINISHED"}, ExitCode: 0},
	{Name: "role-and-kill", Flags: []string{"--name=conformance-kill", "--role=conformance", "--command=sleep 600", "--kill_after=2secs",
		"--resources=cpus:0.5;mem:64"},
		Updates: []string{"TASK_STARTING", "TASK_RUNNING", "TASK_KILLING", "TASK_KILLED"}, ExitCode: 0},
}
