package offers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// Reading a task's sandbox: the stdout and stderr of a Spark driver, read
// from the agent that ran it through the agent's files API (GET
// /files/read on the agent's own address, the virtual path
// /frameworks/FID/executors/EID/runs/latest/FILE; a command task's executor
// is named after the task). Checked against a real Mesos 1.12 agent: see
// mesossim/sandbox.go for the answers it gives.

// ErrAgentGone: the agent is no longer registered with the master; its
// sandboxes cannot be read.
var ErrAgentGone = errors.New("the agent is no longer registered with the Mesos master")

// ErrSandboxGone: the agent answers, but no longer keeps the sandbox (the
// agent garbage-collected it, or its work dir was wiped).
var ErrSandboxGone = errors.New("the agent no longer keeps this sandbox")

// SandboxChunk is one read of a sandbox file.
type SandboxChunk struct {
	Data   string
	Offset int64 // where Data starts
	// Size is the file's size when it was read (Offset+len(Data) <= Size
	// unless the file grew meanwhile).
	Size int64
	// AgentURL is the agent's HTTP address; BrowseURL the files API's
	// listing of the sandbox.
	AgentURL, BrowseURL string
}

// SandboxPath is the virtual path of a file of an executor's latest run.
func SandboxPath(frameworkID, executorID, file string) string {
	return "/frameworks/" + frameworkID + "/executors/" + executorID + "/runs/latest/" + file
}

// AgentURL is the HTTP address of a registered agent, from GET_AGENTS:
// the address in its libprocess pid (slave(1)@IP:PORT: where the master
// reaches it), else its hostname and port. The scheme is the master's.
func (o *Operator) AgentURL(ctx context.Context, agentID string) (string, error) {
	agents, err := o.GetAgents(ctx)
	if err != nil {
		return "", fmt.Errorf("find agent %s: %w", agentID, err)
	}
	scheme := "http"
	if o.ep.TLS() {
		scheme = "https"
	}
	for _, a := range agents {
		if a.AgentInfo.GetID().GetValue() != agentID {
			continue
		}
		if pid := a.GetPID(); pid != "" {
			if _, addr, ok := strings.Cut(pid, "@"); ok {
				if _, _, err := net.SplitHostPort(addr); err == nil {
					return scheme + "://" + addr, nil
				}
			}
		}
		port := int32(5051)
		if a.AgentInfo.Port != nil {
			port = *a.AgentInfo.Port
		}
		return scheme + "://" + net.JoinHostPort(a.AgentInfo.Hostname, strconv.Itoa(int(port))), nil
	}
	return "", fmt.Errorf("agent %s: %w", agentID, ErrAgentGone)
}

// ReadSandbox reads length bytes (at most; the agent may return fewer)
// from offset of a file in an executor's sandbox on an agent. A negative
// offset reads nothing and returns the size.
func (o *Operator) ReadSandbox(ctx context.Context, agentID, frameworkID, executorID, file string, offset, length int64) (SandboxChunk, error) {
	base, err := o.AgentURL(ctx, agentID)
	if err != nil {
		return SandboxChunk{}, err
	}
	p := SandboxPath(frameworkID, executorID, file)
	c := SandboxChunk{AgentURL: base, BrowseURL: base + "/files/browse?path=" + url.QueryEscape(strings.TrimSuffix(p, "/"+file))}
	read := func(offset, length int64) (string, int64, error) {
		q := url.Values{"path": {p}, "offset": {strconv.FormatInt(offset, 10)}}
		if length >= 0 {
			q.Set("length", strconv.FormatInt(length, 10))
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/files/read?"+q.Encode(), nil)
		if err != nil {
			return "", 0, err
		}
		if o.ep.principal != "" {
			req.SetBasicAuth(o.ep.principal, o.ep.secret)
		}
		resp, err := o.ep.client.Do(req)
		if err != nil {
			return "", 0, fmt.Errorf("read %s on agent %s (%s): %w", file, agentID, base, err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
		if err != nil {
			return "", 0, fmt.Errorf("read %s on agent %s: %w", file, agentID, err)
		}
		switch {
		case resp.StatusCode == http.StatusNotFound:
			return "", 0, fmt.Errorf("%s on agent %s: %w", p, agentID, ErrSandboxGone)
		case resp.StatusCode != http.StatusOK:
			return "", 0, &StatusError{Code: resp.StatusCode, Body: string(body), Call: "files/read"}
		}
		var r struct {
			Data   string `json:"data"`
			Offset int64  `json:"offset"`
		}
		if err := json.Unmarshal(body, &r); err != nil {
			return "", 0, fmt.Errorf("files/read on agent %s: not the answer of a Mesos agent: %w", agentID, err)
		}
		return r.Data, r.Offset, nil
	}
	_, size, err := read(-1, -1)
	if err != nil {
		return SandboxChunk{}, err
	}
	c.Size, c.Offset = size, max(offset, 0)
	if offset < 0 || offset >= size || length == 0 {
		if offset < 0 {
			c.Offset = size
		}
		return c, nil
	}
	data, at, err := read(offset, length)
	if err != nil {
		return SandboxChunk{}, err
	}
	c.Data, c.Offset = data, at
	if end := at + int64(len(data)); end > c.Size {
		c.Size = end // it grew between the two reads
	}
	return c, nil
}
