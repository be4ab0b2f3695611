package power

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/sirupsen/logrus"
)

// Target names the agent a provider powers off or on.
type Target struct {
	AgentID    string            `json:"id"`
	Hostname   string            `json:"hostname"`
	Attributes map[string]string `json:"attributes"`
}

// Provider powers machines off and on. Both calls must be idempotent
// (powering off an agent that is off succeeds) and return only when the
// provider accepted the request; errors are retried.
type Provider interface {
	Name() string
	PowerOff(ctx context.Context, t Target) error
	PowerOn(ctx context.Context, t Target) error
}

// Selector chooses the agents power management may touch: every term must
// match. A term is hostname=GLOB (path.Match syntax) or
// ATTRIBUTE=VALUE; the empty selector matches every agent.
type Selector struct {
	terms []selTerm
}

type selTerm struct{ key, value string }

// ParseSelector reads "location=cloud,hostname=agent-*".
func ParseSelector(s string) (Selector, error) {
	var sel Selector
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		k, v, ok := strings.Cut(part, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok || k == "" {
			return Selector{}, fmt.Errorf("power selector term %q: want hostname=GLOB or ATTRIBUTE=VALUE, e.g. location=cloud", part)
		}
		if k == "hostname" {
			if _, err := path.Match(v, ""); err != nil {
				return Selector{}, fmt.Errorf("power selector term %q: bad hostname pattern: %w", part, err)
			}
		}
		sel.terms = append(sel.terms, selTerm{k, v})
	}
	return sel, nil
}

// Match reports whether the agent matches every term.
func (s Selector) Match(hostname string, attrs map[string]string) bool {
	for _, t := range s.terms {
		if t.key == "hostname" {
			if ok, _ := path.Match(t.value, hostname); !ok {
				return false
			}
			continue
		}
		if v, ok := attrs[t.key]; !ok || v != t.value {
			return false
		}
	}
	return true
}

// String gives the selector back in its flag form.
func (s Selector) String() string {
	parts := make([]string, len(s.terms))
	for i, t := range s.terms {
		parts[i] = t.key + "=" + t.value
	}
	return strings.Join(parts, ",")
}

// ---- exec -----------------------------------------------------------------

// ExecProvider runs an operator's program: Program ARGS... ACTION AGENT_ID
// HOSTNAME, with the agent's attributes in the environment as
// SPARKPACK_AGENT_ATTR_<NAME>=value (and SPARKPACK_AGENT_ID,
// SPARKPACK_AGENT_HOSTNAME, SPARKPACK_POWER_ACTION). It is an argument
// vector, never a shell string. Exit status 0 is success.
type ExecProvider struct {
	Program string
	Args    []string
	Timeout time.Duration // default 2 minutes
	Log     logrus.FieldLogger
}

// NewExecProvider checks the program exists and is executable.
func NewExecProvider(program string, args []string, timeout time.Duration, log logrus.FieldLogger) (*ExecProvider, error) {
	if program == "" {
		return nil, errors.New("power provider exec needs a program (--power-exec PATH)")
	}
	p, err := exec.LookPath(program)
	if err != nil {
		return nil, fmt.Errorf("power provider exec: %s: %w (give the full path of an executable file)", program, err)
	}
	if timeout <= 0 {
		timeout = 2 * time.Minute
	}
	if log == nil {
		log = logrus.StandardLogger()
	}
	return &ExecProvider{Program: p, Args: args, Timeout: timeout, Log: log}, nil
}

func (p *ExecProvider) Name() string { return "exec " + p.Program }

func (p *ExecProvider) PowerOff(ctx context.Context, t Target) error { return p.run(ctx, "off", t) }
func (p *ExecProvider) PowerOn(ctx context.Context, t Target) error  { return p.run(ctx, "on", t) }

func (p *ExecProvider) run(ctx context.Context, action string, t Target) error {
	ctx, cancel := context.WithTimeout(ctx, p.Timeout)
	defer cancel()
	argv := append(append([]string{}, p.Args...), action, t.AgentID, t.Hostname)
	cmd := exec.CommandContext(ctx, p.Program, argv...)
	cmd.Env = append(os.Environ(), "SPARKPACK_POWER_ACTION="+action, "SPARKPACK_AGENT_ID="+t.AgentID, "SPARKPACK_AGENT_HOSTNAME="+t.Hostname)
	keys := make([]string, 0, len(t.Attributes))
	for k := range t.Attributes {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		cmd.Env = append(cmd.Env, "SPARKPACK_AGENT_ATTR_"+envName(k)+"="+t.Attributes[k])
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	err := cmd.Run()
	elapsed := time.Since(start)
	if err != nil {
		// Not logged here: power management's warning for the failed
		// step shows it (ProgramError.Fields), once.
		pe := &ProgramError{Program: p.Program, Action: action, AgentID: t.AgentID, Exit: -1, Output: out.String(), Elapsed: elapsed, Err: err}
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			pe.Exit = ee.ExitCode()
		}
		if ctx.Err() == context.DeadlineExceeded {
			pe.Err, pe.Exit = fmt.Errorf("timed out after %s", p.Timeout), -1
		}
		return pe
	}
	p.Log.WithFields(logrus.Fields{"program": p.Program, "action": action, "agent": t.AgentID, "hostname": t.Hostname,
		"elapsed": elapsed.Round(time.Millisecond).String(), "output": tailString(out.String(), 2000), "exit": 0}).Info("power program ran")
	return nil
}

// ProgramError is a failed run of the power program. Power management
// logs it once, in its warning for the failed step, with Fields.
type ProgramError struct {
	Program, Action, AgentID string
	// Exit is its exit status; -1 when it did not exit by itself (it
	// could not start, was killed, or timed out).
	Exit    int
	Output  string // its stdout and stderr
	Elapsed time.Duration
	Err     error
}

func (e *ProgramError) Error() string {
	return fmt.Sprintf("%s %s %s: %v; output: %s", e.Program, e.Action, e.AgentID, e.Err, tailString(e.Output, 300))
}

func (e *ProgramError) Unwrap() error { return e.Err }

// Fields are the run's log fields: program, action, exit (when it
// exited), output (its last 2000 bytes), elapsed.
func (e *ProgramError) Fields() logrus.Fields {
	f := logrus.Fields{"program": e.Program, "action": e.Action, "output": tailString(e.Output, 2000),
		"elapsed": e.Elapsed.Round(time.Millisecond).String()}
	if e.Exit >= 0 {
		f["exit"] = e.Exit
	}
	return f
}

func envName(k string) string {
	var b strings.Builder
	for _, r := range strings.ToUpper(k) {
		if (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

func tailString(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}

// ---- webhook --------------------------------------------------------------

// WebhookProvider POSTs {"action": "off"|"on", "agent": Target} to a URL
// with a bearer token; any 2xx is success.
type WebhookProvider struct {
	URL     string
	Token   string
	Timeout time.Duration // default 30 s
	Client  *http.Client
}

// NewWebhookProvider checks the URL.
func NewWebhookProvider(rawURL, token string, timeout time.Duration) (*WebhookProvider, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("power provider webhook: %q is not an http(s) URL (--power-webhook-url)", rawURL)
	}
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	return &WebhookProvider{URL: rawURL, Token: token, Timeout: timeout, Client: &http.Client{Timeout: timeout}}, nil
}

func (p *WebhookProvider) Name() string { return "webhook " + redact(p.URL) }

func (p *WebhookProvider) PowerOff(ctx context.Context, t Target) error { return p.post(ctx, "off", t) }
func (p *WebhookProvider) PowerOn(ctx context.Context, t Target) error  { return p.post(ctx, "on", t) }

func (p *WebhookProvider) post(ctx context.Context, action string, t Target) error {
	body, err := json.Marshal(map[string]any{"action": action, "agent": t})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, p.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.URL, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if p.Token != "" {
		req.Header.Set("Authorization", "Bearer "+p.Token)
	}
	resp, err := p.Client.Do(req)
	if err != nil {
		return fmt.Errorf("power webhook %s: %w", redact(p.URL), err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("power webhook %s answered %d: %s", redact(p.URL), resp.StatusCode, strings.TrimSpace(string(b)))
	}
	return nil
}

func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(bad url)"
	}
	u.User = nil
	u.RawQuery = ""
	return u.String()
}

// ---- the emulator ---------------------------------------------------------

// EmulatorProvider uses the Mesos emulator's power API
// (POST /sim/agents/power-off?id=..., power-on): for the demo and tests.
type EmulatorProvider struct {
	BaseURL string
	Client  *http.Client
}

// NewEmulatorProvider talks to the emulator at base (its --listen URL).
func NewEmulatorProvider(base string) (*EmulatorProvider, error) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("power provider emulator: %q is not the emulator's http URL", base)
	}
	return &EmulatorProvider{BaseURL: strings.TrimRight(base, "/"), Client: &http.Client{Timeout: 10 * time.Second}}, nil
}

func (p *EmulatorProvider) Name() string { return "emulator" }

func (p *EmulatorProvider) PowerOff(ctx context.Context, t Target) error {
	return p.post(ctx, "/sim/agents/power-off", t)
}
func (p *EmulatorProvider) PowerOn(ctx context.Context, t Target) error {
	return p.post(ctx, "/sim/agents/power-on", t)
}

func (p *EmulatorProvider) post(ctx context.Context, path string, t Target) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.BaseURL+path+"?id="+url.QueryEscape(t.AgentID), nil)
	if err != nil {
		return err
	}
	resp, err := p.Client.Do(req)
	if err != nil {
		return fmt.Errorf("emulator %s: %w", path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("emulator %s %s: %d %s", path, t.AgentID, resp.StatusCode, strings.TrimSpace(string(b)))
	}
	return nil
}
