package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"os/user"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/mesos/mesos-go/api/v1/lib/scheduler"

	"github.com/sparkpack/sparkpack/integration/realmesos"
)

// DurationLabel is the driver task label that carries the job's estimated
// duration (offers.DurationLabel in sparkpack).
const DurationLabel = "sparkpack.sim/duration-seconds"

func main() {
	os.Exit(run(os.Args[1:], os.Stderr))
}

func run(args []string, stderr io.Writer) int {
	logf := func(format string, a ...any) {
		fmt.Fprintf(stderr, time.Now().Format("06/01/02 15:04:05.000")+" "+format+"\n", a...)
	}
	sub, err := ParseSubmit(args)
	if err != nil {
		fmt.Fprintf(stderr, "Error: %v\nfakespark is sparkpack's test stand-in for spark-submit --master mesos://HOST:PORT --deploy-mode client\n", err)
		return 1
	}
	st, err := sub.Settings()
	if err != nil {
		fmt.Fprintf(stderr, "Error: %v\n", err)
		return 1
	}
	exitCode := 0
	if v := os.Getenv("FAKESPARK_EXIT_CODE"); v != "" {
		if exitCode, err = strconv.Atoi(v); err != nil || exitCode < 0 || exitCode > 255 {
			fmt.Fprintf(stderr, "Error: FAKESPARK_EXIT_CODE=%q is not an exit code (0-255)\n", v)
			return 1
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	defer signal.Stop(sigs)

	logf("INFO fakespark (a stand-in for Spark 3.5's spark-submit; no Spark runs here): app %q, class %s, resource %s, args %q",
		sub.Name, sub.MainClass, sub.PrimaryResource, sub.AppArgs)
	dur, src := appDuration(ctx, sub.MasterHostPort(), logf)
	logf("INFO the application runs %s (%s); spark.cores.max=%d spark.executor.cores=%d executor memory with overhead %d MiB, role %q",
		dur, src, st.MaxCores, st.ExecutorCores, st.ExecutorMemMB, st.Role)
	b := newBackend(sub.MasterHostPort(), st, sub.Name, userName(), logf)
	return b.run(ctx, dur, exitCode, sigs)
}

// run drives the backend: register, run the application for dur, stop.
func (b *backend) run(ctx context.Context, dur time.Duration, exitCode int, sigs <-chan os.Signal) int {
	s, err := b.subscribe(ctx, 60*time.Second)
	if err != nil {
		b.log("ERROR %v", err)
		return 1
	}
	defer s.close()
	var appDone <-chan time.Time
	var stopDeadline <-chan time.Time
	stopping := false
	code := exitCode
	stop := func(why string, c int) {
		if stopping {
			return
		}
		stopping, code = true, c
		b.log("INFO stopping (%s): stopping %d executors", why, b.numExecutors())
		b.stopExecutors(ctx)
		stopDeadline = time.After(b.st.ShutdownTimeout)
	}
	for !stopping || b.numExecutors() > 0 {
		select {
		case ev := <-s.events:
			if err := b.handle(ctx, ev); err != nil {
				b.log("ERROR %v", err)
				if b.fwID == "" || strings.Contains(err.Error(), "removed") {
					return 1
				}
				stop("aborted", 1)
				continue
			}
			if ev.GetType() == scheduler.Event_SUBSCRIBED && appDone == nil {
				appDone = time.After(dur)
			}
		case err := <-s.errc:
			b.log("ERROR lost the Mesos master: %v", err)
			return 1
		case <-appDone:
			appDone = nil
			b.log("INFO the application finished after %s (%d executors were launched)", dur, b.launched)
			stop("application finished", exitCode)
		case sig := <-sigs:
			b.log("INFO received %s", sig)
			stop("signal "+sig.String(), 143)
		case <-stopDeadline:
			b.log("WARN timed out waiting for %d remaining executors to terminate within %s", b.numExecutors(), b.st.ShutdownTimeout)
			b.agents = map[string]*agentState{}
		}
	}
	if err := b.teardown(ctx); err != nil {
		b.log("WARN teardown: %v", err)
	}
	b.log("INFO framework %s unregistered; exiting with %d", b.fwID, code)
	return code
}

// appDuration finds how long the application runs and says where that
// came from.
func appDuration(ctx context.Context, master string, logf func(string, ...any)) (time.Duration, string) {
	if v := os.Getenv("FAKESPARK_DURATION_SECONDS"); v != "" {
		if f, err := strconv.ParseFloat(v, 64); err == nil && f >= 0 {
			return seconds(f), "FAKESPARK_DURATION_SECONDS"
		}
		logf("WARN FAKESPARK_DURATION_SECONDS=%q is not a number of seconds; ignored", v)
	}
	fw, task := os.Getenv("MESOS_FRAMEWORK_ID"), os.Getenv("MESOS_EXECUTOR_ID")
	if fw != "" && task != "" {
		cctx, cancel := context.WithTimeout(ctx, 15*time.Second)
		defer cancel()
		tasks, err := realmesos.NewObserver("http://" + master).Tasks(cctx)
		if err != nil {
			logf("WARN cannot read the driver task's labels from the master: %v", err)
		}
		for _, t := range tasks {
			if t.FrameworkID == fw && t.ID == task {
				if v, ok := t.Labels[DurationLabel]; ok {
					if f, err := strconv.ParseFloat(v, 64); err == nil && f >= 0 {
						return seconds(f), "label " + DurationLabel + " of task " + task
					}
				}
			}
		}
	}
	return 10 * time.Second, "default"
}

func seconds(f float64) time.Duration { return time.Duration(f * float64(time.Second)) }

func userName() string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	return "root"
}
