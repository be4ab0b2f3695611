package offers

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/master"
	"github.com/mesos/mesos-go/api/v1/lib/quota"
)

// Tests written for the mutants of operator.go that mutation testing
// found alive or not covered (docs/testing.md): the calls the operator
// API client sends and how it reads Mesos' answers (MESOS_PROTOCOL.md).

// operatorAPI is a master whose operator API answers with answer and
// keeps every call.
type operatorAPI struct {
	mu     sync.Mutex
	calls  []master.Call
	answer func(c master.Call) (int, []byte)
}

func (o *operatorAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var c master.Call
	if err := c.Unmarshal(body); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	o.mu.Lock()
	o.calls = append(o.calls, c)
	answer := o.answer
	o.mu.Unlock()
	code, b := answer(c)
	w.WriteHeader(code)
	_, _ = w.Write(b)
}

func (o *operatorAPI) last(t *testing.T) master.Call {
	t.Helper()
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.calls) == 0 {
		t.Fatal("no call reached the master")
	}
	return o.calls[len(o.calls)-1]
}

func (o *operatorAPI) set(f func(c master.Call) (int, []byte)) {
	o.mu.Lock()
	o.answer = f
	o.mu.Unlock()
}

func answerWith(code int, body []byte) func(master.Call) (int, []byte) {
	return func(master.Call) (int, []byte) { return code, body }
}

func newOperatorAPI(t *testing.T) (*operatorAPI, *Operator) {
	t.Helper()
	api := &operatorAPI{answer: answerWith(http.StatusAccepted, nil)}
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	ep, err := NewEndpoint(srv.URL, "", "")
	if err != nil {
		t.Fatal(err)
	}
	return api, NewOperator(ep)
}

func marshalResponse(t *testing.T, r master.Response) []byte {
	t.Helper()
	b, err := r.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestOperatorCallsSent: each operator call carries what MESOS_PROTOCOL.md
// says (type, agent, resources, quota limits and force flag); a 202 or
// 200 without a body is success.
func TestOperatorCallsSent(t *testing.T) {
	ctx := context.Background()
	api, op := newOperatorAPI(t)
	res := []mesos.Resource{scalarRes("cpus", 2, "")}

	if err := op.Reserve(ctx, "S1", res); err != nil {
		t.Fatal(err)
	}
	if c := api.last(t); c.GetType() != master.Call_RESERVE_RESOURCES || c.ReserveResources.AgentID.Value != "S1" ||
		len(c.ReserveResources.Resources) != 1 || c.ReserveResources.Resources[0].GetScalar().GetValue() != 2 {
		t.Errorf("Reserve sent %+v", c)
	}
	api.set(answerWith(http.StatusOK, nil))
	if err := op.Unreserve(ctx, "S2", res); err != nil {
		t.Fatal(err)
	}
	if c := api.last(t); c.GetType() != master.Call_UNRESERVE_RESOURCES || c.UnreserveResources.AgentID.Value != "S2" || len(c.UnreserveResources.Resources) != 1 {
		t.Errorf("Unreserve sent %+v", c)
	}
	if err := op.SetQuotaLimit(ctx, "sparkpack-job-x", 2.5, 3072, false); err != nil {
		t.Fatal(err)
	}
	c := api.last(t)
	if c.GetType() != master.Call_UPDATE_QUOTA || c.UpdateQuota.Force == nil || *c.UpdateQuota.Force || len(c.UpdateQuota.QuotaConfigs) != 1 {
		t.Fatalf("SetQuotaLimit sent %+v", c)
	}
	if q := c.UpdateQuota.QuotaConfigs[0]; q.Role != "sparkpack-job-x" || q.Limits["cpus"].Value != 2.5 || q.Limits["mem"].Value != 3072 || len(q.Limits) != 2 {
		t.Errorf("SetQuotaLimit's quota %+v, want cpus 2.5 and mem 3072 for sparkpack-job-x", q)
	}
	if err := op.SetQuotaLimit(ctx, "r", 1, 1, true); err != nil || !*api.last(t).UpdateQuota.Force {
		t.Errorf("SetQuotaLimit with force: %v, sent %+v", err, api.last(t).UpdateQuota)
	}
	if err := op.ClearQuota(ctx, "sparkpack-job-x"); err != nil {
		t.Fatal(err)
	}
	c = api.last(t)
	if c.GetType() != master.Call_UPDATE_QUOTA || !*c.UpdateQuota.Force || len(c.UpdateQuota.QuotaConfigs) != 1 ||
		c.UpdateQuota.QuotaConfigs[0].Role != "sparkpack-job-x" || len(c.UpdateQuota.QuotaConfigs[0].Limits) != 0 || len(c.UpdateQuota.QuotaConfigs[0].Guarantees) != 0 {
		t.Errorf("ClearQuota sent %+v, want the role with no limits, forced", c.UpdateQuota)
	}
	if err := op.DeactivateAgent(ctx, "S3"); err != nil {
		t.Fatal(err)
	}
	if c := api.last(t); c.GetType() != master.Call_DEACTIVATE_AGENT || c.DeactivateAgent.AgentID.Value != "S3" {
		t.Errorf("DeactivateAgent sent %+v", c)
	}
	if err := op.ReactivateAgent(ctx, "S4"); err != nil {
		t.Fatal(err)
	}
	if c := api.last(t); c.GetType() != master.Call_REACTIVATE_AGENT || c.ReactivateAgent.AgentID.Value != "S4" {
		t.Errorf("ReactivateAgent sent %+v", c)
	}
}

// TestOperatorErrors: a refusal comes back as a *StatusError (a 409 is a
// conflict) wrapped with what was asked; REACTIVATE_AGENT of an agent that
// is not deactivated (400 "Agent is not deactivated") counts as done, no
// other refusal does.
func TestOperatorErrors(t *testing.T) {
	ctx := context.Background()
	api, op := newOperatorAPI(t)
	res := []mesos.Resource{scalarRes("cpus", 2, "")}
	api.set(answerWith(http.StatusConflict, []byte("Insufficient resources")))
	for name, call := range map[string]func() error{
		"reserve on agent S1":     func() error { return op.Reserve(ctx, "S1", res) },
		"unreserve on agent S1":   func() error { return op.Unreserve(ctx, "S1", res) },
		"set quota limit of role": func() error { return op.SetQuotaLimit(ctx, "r", 1.5, 2048, false) },
		"clear quota of role r":   func() error { return op.ClearQuota(ctx, "r") },
		"deactivate agent S1":     func() error { return op.DeactivateAgent(ctx, "S1") },
		"reactivate agent S1":     func() error { return op.ReactivateAgent(ctx, "S1") },
	} {
		err := call()
		var se *StatusError
		if !errors.As(err, &se) || se.Code != http.StatusConflict || !IsConflict(err) || !strings.Contains(err.Error(), name) {
			t.Errorf("%s refused with 409: %v", name, err)
		}
	}
	if err := op.SetQuotaLimit(ctx, "r", 1.5, 2048, false); err == nil || !strings.Contains(err.Error(), "1.5 cpus, 2048 MiB") {
		t.Errorf("quota error %v, want the limit it asked", err)
	}
	for _, c := range []struct {
		code int
		body string
		ok   bool
	}{
		{http.StatusBadRequest, "Agent is not deactivated", true},
		{http.StatusBadRequest, "Unknown agent", false},
		{http.StatusConflict, "Agent is not deactivated", false},
		{http.StatusInternalServerError, "not deactivated", false},
	} {
		api.set(answerWith(c.code, []byte(c.body)))
		if err := op.ReactivateAgent(ctx, "S1"); (err == nil) != c.ok {
			t.Errorf("REACTIVATE_AGENT answered %d %q: %v, want success %v", c.code, c.body, err, c.ok)
		}
	}
}

// TestOperatorReadsAnswers: GET_QUOTA and GET_TASKS decode the master's
// answer; an empty answer, or one without the part asked for, or one that
// is not protobuf, is an error.
func TestOperatorReadsAnswers(t *testing.T) {
	ctx := context.Background()
	api, op := newOperatorAPI(t)
	quotaAnswer := marshalResponse(t, master.Response{Type: master.Response_GET_QUOTA, GetQuota: &master.Response_GetQuota{
		Status: quota.QuotaStatus{Configs: []quota.QuotaConfig{{Role: "a"}, {Role: "b"}}}}})
	api.set(answerWith(http.StatusOK, quotaAnswer))
	cfgs, err := op.QuotaConfigs(ctx)
	if err != nil || len(cfgs) != 2 || cfgs[0].Role != "a" || cfgs[1].Role != "b" {
		t.Errorf("GET_QUOTA: %v, %v; want roles a and b", cfgs, err)
	}
	if c := api.last(t); c.GetType() != master.Call_GET_QUOTA {
		t.Errorf("QuotaConfigs sent %s", c.GetType())
	}
	tasksAnswer := marshalResponse(t, master.Response{Type: master.Response_GET_TASKS, GetTasks: &master.Response_GetTasks{
		Tasks: []mesos.Task{{Name: "driver", TaskID: mesos.TaskID{Value: "t1"}, FrameworkID: mesos.FrameworkID{Value: "F1"},
			AgentID: mesos.AgentID{Value: "S1"}, State: mesos.TASK_RUNNING.Enum()}}}})
	api.set(answerWith(http.StatusOK, tasksAnswer))
	tasks, err := op.GetTasks(ctx)
	if err != nil || len(tasks.Tasks) != 1 || tasks.Tasks[0].TaskID.Value != "t1" {
		t.Errorf("GET_TASKS: %+v, %v; want task t1", tasks, err)
	}
	// A direct Call gives the decoded answer, or nil for an empty one.
	r, err := op.Call(ctx, &master.Call{Type: master.Call_GET_TASKS})
	if err != nil || r == nil || r.GetTasks == nil {
		t.Errorf("Call: %+v, %v; want the decoded answer", r, err)
	}
	api.set(answerWith(http.StatusAccepted, nil))
	if r, err := op.Call(ctx, &master.Call{Type: master.Call_GET_TASKS}); r != nil || err != nil {
		t.Errorf("Call answered 202 without a body: %+v, %v; want nil, nil", r, err)
	}
	for name, answer := range map[string]func(master.Call) (int, []byte){
		"empty":        answerWith(http.StatusOK, nil),
		"other part":   answerWith(http.StatusOK, marshalResponse(t, master.Response{Type: master.Response_GET_HEALTH, GetHealth: &master.Response_GetHealth{Healthy: true}})),
		"not protobuf": answerWith(http.StatusOK, []byte("\xff\xff\xff not protobuf")),
		"refused":      answerWith(http.StatusServiceUnavailable, []byte("No leader elected")),
	} {
		api.set(answer)
		if _, err := op.QuotaConfigs(ctx); err == nil {
			t.Errorf("GET_QUOTA answered %s: no error", name)
		}
		if _, err := op.GetTasks(ctx); err == nil {
			t.Errorf("GET_TASKS answered %s: no error", name)
		}
	}
}

// TestReadAnswerOfKnownLength: an answer whose Content-Length is known
// is read into a buffer of that size, whatever the answer before was: an
// empty one allocates nothing like the size of a large one before.
func TestReadAnswerOfKnownLength(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates beside the code")
	}
	const before = 8 << 20
	for _, body := range [][]byte{nil, bytes.Repeat([]byte("x"), 1000)} {
		var m0, m1 runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m0)
		got, err := readAnswer(bytes.NewReader(body), int64(len(body)), before)
		runtime.ReadMemStats(&m1)
		if err != nil || !bytes.Equal(got, body) {
			t.Fatalf("read %d bytes, %v; want the %d of the answer", len(got), err, len(body))
		}
		if n := m1.TotalAlloc - m0.TotalAlloc; n > 64<<10 {
			t.Errorf("an answer of %d bytes (Content-Length known) allocated %d bytes, want under 64 KiB", len(body), n)
		}
	}
}
