package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/sirupsen/logrus"

	"github.com/sparkpack/sparkpack/clusterspec"
	"github.com/sparkpack/sparkpack/learned"
	"github.com/sparkpack/sparkpack/mesossim"
	"github.com/sparkpack/sparkpack/scheduler"
	"github.com/sparkpack/sparkpack/store"
)

// learnTruth is the emulated Spark application's run time in simulated
// seconds with e executors: 300/e + 40 (with the test's time scale of 0.1,
// 30/e + 4 s of wall time). sparkpack is not told it: the jobs carry no
// estimate, so the emulator takes each driver's duration from this
// function of the executors in its spark-submit command (the emulator's
// existing DurationFunc mechanism; the views helper's independent
// performance truth will replace it).
func learnTruth(e int) float64 { return 300/float64(e) + 40 }

// executorsOf reads the executor count from a driver's spark-submit
// command (spark.cores.max / spark.executor.cores); 0 when it is not one.
func executorsOf(info *mesos.TaskInfo) int {
	c := info.GetCommand()
	words := append(strings.Fields(c.GetValue()), c.GetArguments()...)
	var coresMax, cores int
	for _, w := range words {
		if v, ok := strings.CutPrefix(w, "spark.cores.max="); ok {
			coresMax, _ = strconv.Atoi(v)
		}
		if v, ok := strings.CutPrefix(w, "spark.executor.cores="); ok {
			cores, _ = strconv.Atoi(v)
		}
	}
	if coresMax <= 0 || cores <= 0 {
		return 0
	}
	return coresMax / cores
}

// TestE2EAutoExecutorsFromLearnedRuns (issue 27): ten runs of a signature
// with 1 to 8 executors, then sparkpack restarts (the model comes back
// from the run history), then a job of the signature asks for "executors":
// "auto" with a 30 s deadline: it gets the count the model predicts (the
// cheapest whose p90 meets the deadline, as a model reloaded from the same
// history chooses) and finishes before its deadline.
func TestE2EAutoExecutorsFromLearnedRuns(t *testing.T) {
	cluster := clusterspec.Cluster{Name: "learn"}
	for _, a := range smallCluster(14).Agents {
		cluster.Agents = append(cluster.Agents, a)
	}
	emu := startEmulator(t, mesossim.Config{Cluster: cluster, TimeScale: 0.1,
		DurationFunc: func(info *mesos.TaskInfo, _ clusterspec.Agent) time.Duration {
			if e := executorsOf(info); e > 0 {
				return time.Duration(learnTruth(e) * float64(time.Second))
			}
			return -1
		}})
	db := e2eDB(t)
	sp := startSparkpack(t, emu.URL, db)
	job := func(name string) map[string]any {
		b := sparkJob(name, 1, 1, 1024, 0)
		delete(b, "estimatedDurationSeconds")
		b["labels"] = map[string]string{"sparkpack.io/app": "etl-daily"}
		return b
	}
	counts := []int{1, 2, 3, 4, 6, 8, 2, 3, 4, 6}
	ids := make([]string, len(counts))
	for i, e := range counts {
		b := job("train-" + strconv.Itoa(i))
		b["executors"] = e
		ids[i] = submit(t, sp.API, b)
	}
	var wg sync.WaitGroup
	for _, id := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if v := waitState(t, sp.API, id, 240*time.Second, "FINISHED", "FAILED", "KILLED"); v.State != "FINISHED" {
				t.Errorf("training job %s ended %s", v.Name, v.State)
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}

	// A restart: the model the new process uses comes from the history.
	sp.stop()
	sp = startSparkpack(t, emu.URL, db)

	quiet := logrus.New()
	quiet.SetOutput(io.Discard)
	st, err := store.Open(context.Background(), db, store.WithLogger(quiet))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	runs, err := st.RunHistory(context.Background(), 0)
	if err != nil || len(runs) != len(counts) {
		t.Fatalf("run history: %d runs, %v; want %d", len(runs), err, len(counts))
	}
	for _, r := range runs {
		if r.Signature != "etl-daily" || r.Outcome != scheduler.RunFinished || r.Agents < 1 {
			t.Fatalf("recorded run %+v", r)
		}
		t.Logf("run: %d executors on %d agents (cross %.2f, load %.2f): %.1f s (truth %.1f s)", r.Executors, r.Agents, r.CrossShare, r.BusiestLoad, r.Seconds, 0.1*learnTruth(r.Executors))
	}
	model := learned.New()
	if _, err := model.Reload(context.Background(), st); err != nil {
		t.Fatal(err)
	}

	// The new process loads the history in the background (until then it
	// right-sizes with the prior, docs/learning.md): wait for it.
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(100 * time.Millisecond) {
		resp, err := http.Get(sp.API + "/api/v1/models")
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if bytes.Contains(b, []byte(`"signature":"etl-daily"`)) {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("the restarted process did not load the run history")
		}
	}
	auto := job("auto")
	auto["executors"], auto["maxExecutors"], auto["deadline"] = "auto", 8, 30
	body, _ := json.Marshal(auto)
	resp, err := http.Post(sp.API+"/api/v1/jobs", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("POST auto job: %d %s", resp.StatusCode, raw)
	}
	var got scheduler.Job
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	if got.Sizing == nil || got.Sizing.Level != "signature" || got.Sizing.Executors != got.Executors || got.DeadlineAt == nil {
		t.Fatalf("auto job: executors %d sizing %+v", got.Executors, got.Sizing)
	}
	// The count a model reloaded from the same history predicts.
	want := scheduler.Job{Spec: scheduler.Spec{App: got.App, Labels: got.Labels, ExecutorCores: 1, ExecutorMemoryMB: 1024,
		MaxExecutors: 8, Sizing: &scheduler.Sizing{Auto: true}}, DeadlineAt: got.DeadlineAt}
	if err := model.RightSize(&want, got.SubmittedAt); err != nil {
		t.Fatal(err)
	}
	t.Logf("auto job: %d executors: %s", got.Executors, got.Sizing.Reason)
	if got.Executors != want.Executors || got.Executors < 2 {
		t.Fatalf("auto job got %d executors; the model predicts %d (%s)", got.Executors, want.Executors, want.Sizing.Reason)
	}
	v := waitState(t, sp.API, got.ID, 120*time.Second, "FINISHED", "FAILED", "KILLED")
	if v.State != "FINISHED" || v.FinishedAt == nil {
		t.Fatalf("auto job ended %s", v.State)
	}
	if v.FinishedAt.After(*got.DeadlineAt) {
		t.Fatalf("auto job finished %s after its deadline %s", v.FinishedAt, got.DeadlineAt)
	}
	t.Logf("auto job finished %.1f s before its deadline (p90 %.0f s)", got.DeadlineAt.Sub(*v.FinishedAt).Seconds(), got.Sizing.P90Seconds)
	waitNoLeftovers(t, emu.Master, 30*time.Second)
}
