package offers

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/mesos/mesos-go/api/v1/lib/master"
)

// Tests written for sandbox.go, which mutation testing found not covered
// by the package's own tests (docs/testing.md): the agent's address from
// GET_AGENTS and the reads of its files API. The fake agent answers as
// mesossim/sandbox.go documents a real 1.12 agent answering: read answers
// {"data","offset"}; no offset (or -1) answers the size; a negative
// length is a 400; a path nobody attached is a 404.

// fakeAgent serves one file at path through /files/read.
type fakeAgent struct {
	mu    sync.Mutex
	path  string
	data  string
	grow  string // appended after the first read
	reads []string
	auth  string
	code  int    // answer every read with this code, when set
	body  string // and this body
}

func (a *fakeAgent) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.reads = append(a.reads, r.URL.RawQuery)
	a.auth = r.Header.Get("Authorization")
	if a.code != 0 {
		w.WriteHeader(a.code)
		_, _ = w.Write([]byte(a.body))
		return
	}
	q := r.URL.Query()
	if r.URL.Path != "/files/read" || q.Get("path") != a.path {
		w.WriteHeader(http.StatusNotFound)
		return
	}
	data := a.data
	if a.grow != "" && len(a.reads) > 1 {
		data += a.grow
	}
	offset := int64(-1)
	if s := q.Get("offset"); s != "" {
		offset, _ = strconv.ParseInt(s, 10, 64)
	}
	length := int64(64 << 10)
	if s := q.Get("length"); s != "" {
		length, _ = strconv.ParseInt(s, 10, 64)
		if length < 0 {
			http.Error(w, "Negative length provided: "+s, http.StatusBadRequest)
			return
		}
	}
	var answer struct {
		Data   string `json:"data"`
		Offset int64  `json:"offset"`
	}
	if offset < 0 {
		answer.Offset = int64(len(data))
	} else {
		answer.Offset = offset
		if offset < int64(len(data)) {
			answer.Data = data[offset:min(int64(len(data)), offset+length)]
		}
	}
	_ = json.NewEncoder(w).Encode(answer)
}

func (a *fakeAgent) readCount() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.reads)
}

// sandboxSetup is a master listing agents and a fake agent S1 at its pid.
func sandboxSetup(t *testing.T, principal string) (*Operator, *fakeAgent, string) {
	t.Helper()
	fa := &fakeAgent{path: SandboxPath("F1", "driver-1", "stdout"), data: "hello world"}
	agentSrv := httptest.NewServer(fa)
	t.Cleanup(agentSrv.Close)
	addr := strings.TrimPrefix(agentSrv.URL, "http://")
	s1 := getAgent("S1", 4, 8192)
	s1.PID = ptr("slave(1)@" + addr)
	l := &agentsList{}
	l.set(s1)
	srv := httptest.NewServer(l)
	t.Cleanup(srv.Close)
	ep, err := NewEndpoint(srv.URL, principal, "pw", WithLogger(quietLog()))
	if err != nil {
		t.Fatal(err)
	}
	return NewOperator(ep), fa, "http://" + addr
}

// TestAgentURL: the agent's address is the one in its libprocess pid;
// without a usable pid, its hostname and port (5051 when GET_AGENTS gives
// none); an agent GET_AGENTS does not list is gone.
func TestAgentURL(t *testing.T) {
	ctx := context.Background()
	port := int32(5052)
	agent := func(id, pid string, port *int32) master.Response_GetAgents_Agent {
		a := getAgent(id, 1, 1024)
		if pid != "" {
			a.PID = &pid
		}
		a.AgentInfo.Port = port
		return a
	}
	l := &agentsList{}
	l.set(agent("P", "slave(1)@10.0.0.7:5051", nil), agent("N", "", &port), agent("D", "", nil),
		agent("X", "slave(1)10.0.0.9:5051", &port), agent("Y", "slave(1)@10.0.0.9", &port))
	op := agentsOperator(t, l)
	for id, want := range map[string]string{
		"P": "http://10.0.0.7:5051", // the pid's address
		"N": "http://host-N:5052",   // no pid: hostname and port
		"D": "http://host-D:5051",   // no pid, no port: the default 5051
		"X": "http://host-X:5052",   // a pid without @
		"Y": "http://host-Y:5052",   // a pid without a port
	} {
		if got, err := op.AgentURL(ctx, id); err != nil || got != want {
			t.Errorf("agent %s: %q, %v; want %q", id, got, err, want)
		}
	}
	if _, err := op.AgentURL(ctx, "gone"); !errors.Is(err, ErrAgentGone) {
		t.Errorf("an agent not listed: %v, want ErrAgentGone", err)
	}
	dead, _ := NewEndpoint(deadAddr(t), "", "", WithLogger(quietLog()))
	if _, err := NewOperator(dead).AgentURL(ctx, "P"); err == nil || errors.Is(err, ErrAgentGone) || !strings.Contains(err.Error(), "find agent P") {
		t.Errorf("GET_AGENTS fails: %v, want its error", err)
	}
}

// TestReadSandbox: a read asks the file's size, then the bytes asked for
// (offset and length), and says where they start and the size; a
// negative offset gives the size and no data, an offset at or past the
// end or a length of 0 reads nothing more; a file that grew between the
// two reads has the larger size.
func TestReadSandbox(t *testing.T) {
	ctx := context.Background()
	op, fa, base := sandboxSetup(t, "")
	read := func(offset, length int64) SandboxChunk {
		t.Helper()
		fa.mu.Lock()
		fa.reads = nil
		fa.mu.Unlock()
		c, err := op.ReadSandbox(ctx, "S1", "F1", "driver-1", "stdout", offset, length)
		if err != nil {
			t.Fatalf("read at %d, %d bytes: %v", offset, length, err)
		}
		return c
	}
	// "hello world" is 11 bytes.
	c := read(2, 3)
	if c.Data != "llo" || c.Offset != 2 || c.Size != 11 || fa.readCount() != 2 {
		t.Errorf("3 bytes at 2: %+v after %d reads; want llo at 2 of 11, 2 reads", c, fa.readCount())
	}
	if c.AgentURL != base || c.BrowseURL != base+"/files/browse?path=%2Fframeworks%2FF1%2Fexecutors%2Fdriver-1%2Fruns%2Flatest" {
		t.Errorf("addresses %q, %q", c.AgentURL, c.BrowseURL)
	}
	if c := read(0, 100); c.Data != "hello world" || c.Offset != 0 || c.Size != 11 {
		t.Errorf("the whole file: %+v", c)
	}
	for _, tc := range []struct {
		name           string
		offset, length int64
		at             int64
	}{
		{"a negative offset", -1, 5, 11},
		{"the end", 11, 5, 11},
		{"past the end", 12, 5, 12},
		{"no length", 3, 0, 3},
		{"no length at the start", 0, 0, 0},
	} {
		if c := read(tc.offset, tc.length); c.Data != "" || c.Offset != tc.at || c.Size != 11 || fa.readCount() != 1 {
			t.Errorf("%s: %+v after %d reads; want no data at %d of 11, one read (the size)", tc.name, c, fa.readCount(), tc.at)
		}
	}
	// The size read asks no length (a negative one is a 400); the data
	// read asks exactly the length.
	read(1, 4)
	fa.mu.Lock()
	if len(fa.reads) != 2 || strings.Contains(fa.reads[0], "length") || !strings.Contains(fa.reads[1], "length=4") || !strings.Contains(fa.reads[1], "offset=1") {
		t.Errorf("reads %q; want the size without a length, then offset=1 length=4", fa.reads)
	}
	fa.grow = "!!!"
	fa.mu.Unlock()
	if c := read(8, 10); c.Data != "rld!!!" || c.Offset != 8 || c.Size != 14 {
		t.Errorf("a file that grew by 3 bytes between the reads: %+v; want rld!!! at 8 of 14", c)
	}
}

// TestReadSandboxErrors: a sandbox the agent no longer keeps (404) is
// ErrSandboxGone; another refusal is a *StatusError with the agent's
// text; an answer that is not the files API's JSON is an error; an agent
// not registered is ErrAgentGone; the master's credentials go to the
// agent too.
func TestReadSandboxErrors(t *testing.T) {
	ctx := context.Background()
	op, fa, _ := sandboxSetup(t, "sparkpack")
	if _, err := op.ReadSandbox(ctx, "S1", "F1", "driver-1", "stderr", 0, 10); !errors.Is(err, ErrSandboxGone) {
		t.Errorf("a file nobody attached: %v, want ErrSandboxGone", err)
	}
	want := (&http.Request{Header: http.Header{}})
	want.SetBasicAuth("sparkpack", "pw")
	if fa.auth != want.Header.Get("Authorization") {
		t.Errorf("the agent got Authorization %q, want the master's credentials", fa.auth)
	}
	fa.code, fa.body = http.StatusForbidden, "Forbidden: not allowed"
	var se *StatusError
	if _, err := op.ReadSandbox(ctx, "S1", "F1", "driver-1", "stdout", 0, 10); !errors.As(err, &se) || se.Code != http.StatusForbidden || se.Body != "Forbidden: not allowed" {
		t.Errorf("a 403: %v", err)
	}
	fa.code, fa.body = http.StatusOK, "<html>not json</html>"
	if _, err := op.ReadSandbox(ctx, "S1", "F1", "driver-1", "stdout", 0, 10); err == nil || !strings.Contains(err.Error(), "not the answer of a Mesos agent") {
		t.Errorf("an answer that is not JSON: %v", err)
	}
	if _, err := op.ReadSandbox(ctx, "S9", "F1", "driver-1", "stdout", 0, 10); !errors.Is(err, ErrAgentGone) {
		t.Errorf("an agent not registered: %v", err)
	}
	// The agent stops answering between the two reads.
	fa.code = 0
	fa.path = "/elsewhere"
	if _, err := op.ReadSandbox(ctx, "S1", "F1", "driver-1", "stdout", 0, 10); !errors.Is(err, ErrSandboxGone) {
		t.Errorf("the sandbox gone: %v", err)
	}
	// A dead agent.
	l := &agentsList{}
	s2 := getAgent("S2", 1, 1024)
	s2.PID = ptr("slave(1)@" + deadAddr(t))
	l.set(s2)
	if _, err := agentsOperator(t, l).ReadSandbox(ctx, "S2", "F1", "e", "stdout", 0, 10); err == nil || !strings.Contains(err.Error(), "on agent S2") {
		t.Errorf("a dead agent: %v", err)
	}
}
