package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
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

// TestE2EHAFollowerRightSizesWithTheLeadersRuns (issue 27): two instances
// over one database, the follower started before any run. The leader runs
// ten jobs of a signature; the follower's model catches up with the run
// history (--model-refresh) without restarting: its job view predicts the
// signature's run time, and an "executors": "auto" job submitted through
// it gets the count a model reloaded from the history chooses (at the
// signature's level, not the prior's it knew at its start).
func TestE2EHAFollowerRightSizesWithTheLeadersRuns(t *testing.T) {
	cluster := clusterspec.Cluster{Name: "learn-ha"}
	cluster.Agents = append(cluster.Agents, smallCluster(14).Agents...)
	emu := startEmulator(t, mesossim.Config{Cluster: cluster, TimeScale: 0.1,
		DurationFunc: func(info *mesos.TaskInfo, _ clusterspec.Agent) time.Duration {
			if e := executorsOf(info); e > 0 {
				return time.Duration(learnTruth(e) * float64(time.Second))
			}
			return -1
		}})
	c := &haCluster{t: t, emu: emu, db: e2eDB(t), procs: map[string]*sparkpackProc{}, args: []string{"--model-refresh", "200ms"}}
	c.start("learn-a")
	lid, leader := c.leader(60 * time.Second)
	follower := c.start("learn-b")
	waitUntil(t, 60*time.Second, "the second instance to follow", func() bool {
		s, err := getLeader(follower.API)
		return err == nil && !s.Leader && s.LeaderInstance == lid
	})

	job := func(name string) map[string]any {
		b := sparkJob(name, 1, 1, 1024, 0)
		delete(b, "estimatedDurationSeconds")
		b["labels"] = map[string]string{"sparkpack.io/app": "etl-ha"}
		return b
	}
	counts := []int{1, 2, 3, 4, 6, 8, 2, 3, 4, 6}
	ids := make([]string, len(counts))
	for i, e := range counts {
		b := job("train-" + strconv.Itoa(i))
		b["executors"] = e
		ids[i] = submit(t, leader.API, b)
	}
	var wg sync.WaitGroup
	for _, id := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if v := waitState(t, leader.API, id, 240*time.Second, "FINISHED", "FAILED", "KILLED"); v.State != "FINISHED" {
				t.Errorf("training job %s ended %s", v.Name, v.State)
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	// The follower's own model (its job view is not forwarded) learns the
	// runs without a restart.
	waitUntil(t, 60*time.Second, "the follower's model to know the signature", func() bool {
		resp, err := http.Get(follower.API + "/api/v1/jobs/" + ids[0])
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		var v struct {
			PredictionLevel string `json:"predictionLevel"`
		}
		return resp.StatusCode == http.StatusOK && json.NewDecoder(resp.Body).Decode(&v) == nil && v.PredictionLevel == "signature"
	})

	quiet := logrus.New()
	quiet.SetOutput(io.Discard)
	st, err := store.Open(context.Background(), c.db, store.WithLogger(quiet))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	model := learned.New()
	if n, err := model.Reload(context.Background(), st); err != nil || n != len(counts) {
		t.Fatalf("reload: %d runs, %v", n, err)
	}
	auto := job("auto")
	auto["executors"], auto["maxExecutors"], auto["deadline"] = "auto", 8, 30
	body, _ := json.Marshal(auto)
	resp, err := http.Post(follower.API+"/api/v1/jobs", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("POST auto job to the follower: %d %s", resp.StatusCode, raw)
	}
	var got scheduler.Job
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	want := scheduler.Job{Spec: scheduler.Spec{App: got.App, Labels: got.Labels, ExecutorCores: 1, ExecutorMemoryMB: 1024,
		MaxExecutors: 8, Sizing: &scheduler.Sizing{Auto: true}}, DeadlineAt: got.DeadlineAt}
	if err := model.RightSize(&want, got.SubmittedAt); err != nil {
		t.Fatal(err)
	}
	if got.Sizing == nil || got.Sizing.Level != "signature" || got.Executors != want.Executors {
		t.Fatalf("the follower sized the auto job %d executors (%+v); the history's model: %d (%s)", got.Executors, got.Sizing, want.Executors, want.Sizing.Reason)
	}
	t.Logf("auto job through the follower: %s", got.Sizing.Reason)
	if v := waitState(t, leader.API, got.ID, 120*time.Second, "FINISHED", "FAILED", "KILLED"); v.State != "FINISHED" {
		t.Fatalf("auto job ended %s", v.State)
	}
	waitNoLeftovers(t, emu.Master, 30*time.Second)
}
