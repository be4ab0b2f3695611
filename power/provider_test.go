package power

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var target = Target{AgentID: "S1", Hostname: "agent-1", Attributes: map[string]string{"instance_type": "m5.xlarge", "location": "cloud"}}

func script(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "power.sh")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestExecProvider(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	ok := script(t, `printf '%s|' "$@" > `+out+`; echo "$SPARKPACK_POWER_ACTION $SPARKPACK_AGENT_ID $SPARKPACK_AGENT_ATTR_INSTANCE_TYPE" >> `+out+"\n")
	p, err := NewExecProvider(ok, []string{"--region", "eu-west-1; rm -rf /"}, time.Minute, quiet())
	if err != nil {
		t.Fatal(err)
	}
	if err := p.PowerOff(context.Background(), target); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(out)
	// The argument vector arrives as given: no shell reads it.
	if want := "--region|eu-west-1; rm -rf /|off|S1|agent-1|off S1 m5.xlarge\n"; string(b) != want {
		t.Fatalf("the program saw %q, want %q", b, want)
	}
	fail := script(t, "echo 'quota exceeded' >&2; exit 3\n")
	p, _ = NewExecProvider(fail, nil, time.Minute, quiet())
	if err := p.PowerOn(context.Background(), target); err == nil || !strings.Contains(err.Error(), "quota exceeded") || !strings.Contains(err.Error(), "exit status 3") {
		t.Fatalf("failing program: %v", err)
	}
	hang := script(t, "exec sleep 30\n")
	p, _ = NewExecProvider(hang, nil, 200*time.Millisecond, quiet())
	start := time.Now()
	if err := p.PowerOn(context.Background(), target); err == nil || !strings.Contains(err.Error(), "timed out") {
		t.Fatalf("hanging program: %v", err)
	}
	if time.Since(start) > 20*time.Second {
		t.Fatal("the timeout did not stop the program")
	}
	if _, err := NewExecProvider(filepath.Join(t.TempDir(), "missing"), nil, 0, nil); err == nil {
		t.Fatal("a missing program was accepted")
	}
	if _, err := NewExecProvider("", nil, 0, nil); err == nil {
		t.Fatal("no program was accepted")
	}
}

func TestWebhookProvider(t *testing.T) {
	var got []map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer s3cret" {
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		var m map[string]any
		_ = json.NewDecoder(r.Body).Decode(&m)
		got = append(got, m)
		switch r.URL.Path {
		case "/fail":
			http.Error(w, "backend down", http.StatusBadGateway)
		case "/hang":
			time.Sleep(2 * time.Second)
		}
	}))
	defer srv.Close()
	p, err := NewWebhookProvider(srv.URL+"/ok", "s3cret", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.PowerOff(context.Background(), target); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0]["action"] != "off" || got[0]["agent"].(map[string]any)["id"] != "S1" {
		t.Fatalf("body %v", got)
	}
	p, _ = NewWebhookProvider(srv.URL+"/fail", "s3cret", time.Second)
	if err := p.PowerOn(context.Background(), target); err == nil || !strings.Contains(err.Error(), "502") {
		t.Fatalf("5xx: %v", err)
	}
	p, _ = NewWebhookProvider(srv.URL+"/hang", "s3cret", 200*time.Millisecond)
	if err := p.PowerOn(context.Background(), target); err == nil {
		t.Fatal("a hanging webhook succeeded")
	}
	p, _ = NewWebhookProvider(srv.URL+"/ok", "wrong", time.Second)
	if err := p.PowerOn(context.Background(), target); err == nil || !strings.Contains(err.Error(), "401") {
		t.Fatalf("wrong token: %v", err)
	}
	for _, bad := range []string{"", "ftp://x", "http://", "://"} {
		if _, err := NewWebhookProvider(bad, "", 0); err == nil {
			t.Errorf("url %q accepted", bad)
		}
	}
}

func TestEmulatorProvider(t *testing.T) {
	var paths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		paths = append(paths, r.Method+" "+r.URL.Path+"?"+r.URL.RawQuery)
		if r.URL.Query().Get("id") == "nope" {
			http.Error(w, "unknown agent", http.StatusNotFound)
		}
	}))
	defer srv.Close()
	p, err := NewEmulatorProvider(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := p.PowerOff(ctx, target); err != nil {
		t.Fatal(err)
	}
	if err := p.PowerOn(ctx, target); err != nil {
		t.Fatal(err)
	}
	if err := p.PowerOn(ctx, Target{AgentID: "nope"}); err == nil {
		t.Fatal("404 succeeded")
	}
	if paths[0] != "POST /sim/agents/power-off?id=S1" || paths[1] != "POST /sim/agents/power-on?id=S1" {
		t.Fatalf("paths %v", paths)
	}
}

func TestParseSelector(t *testing.T) {
	for _, c := range []struct {
		in      string
		err     bool
		host    string
		attrs   map[string]string
		matches bool
	}{
		{"", false, "x", nil, true},
		{"location=cloud", false, "x", map[string]string{"location": "cloud"}, true},
		{"location=cloud", false, "x", map[string]string{"location": "local"}, false},
		{"location=cloud", false, "x", nil, false},
		{"hostname=agent-*,location=cloud", false, "agent-7", map[string]string{"location": "cloud"}, true},
		{"hostname=agent-*", false, "db-1", nil, false},
		{"hostname=[", true, "", nil, false},
		{"novalue", true, "", nil, false},
		{"=x", true, "", nil, false},
	} {
		s, err := ParseSelector(c.in)
		if (err != nil) != c.err {
			t.Errorf("%q: err %v", c.in, err)
			continue
		}
		if err == nil && s.Match(c.host, c.attrs) != c.matches {
			t.Errorf("%q on %s %v: match %v", c.in, c.host, c.attrs, !c.matches)
		}
	}
}

func FuzzParseSelector(f *testing.F) {
	for _, s := range []string{"", "location=cloud", "hostname=a-*,x=y", "hostname=[", "=", ",,,"} {
		f.Add(s, "agent-1")
	}
	f.Fuzz(func(t *testing.T, s, host string) {
		sel, err := ParseSelector(s)
		if err != nil {
			return
		}
		sel.Match(host, map[string]string{"location": "cloud"})
		if _, err := ParseSelector(sel.String()); err != nil {
			t.Fatalf("%q parsed, but its String %q does not: %v", s, sel.String(), err)
		}
	})
}

// TestExampleScripts runs the example power programs of docs/power through
// the exec provider with a stand-in aws command that records its
// arguments (no AWS here): the right calls, with the instance id taken
// from the agent's attribute.
func TestExampleScripts(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "aws.log")
	fake := filepath.Join(dir, "aws")
	// Answers describe-auto-scaling-instances with the state in $ASG_STATE.
	if err := os.WriteFile(fake, []byte("#!/bin/sh\necho \"$*\" >> "+log+"\ncase \"$*\" in *describe-auto-scaling-instances*) echo \"$ASG_STATE\";; esac\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	tgt := Target{AgentID: "S3", Hostname: "ip-10-0-0-3", Attributes: map[string]string{"instance_id": "i-0abc", "location": "cloud"}}
	run := func(script string, args []string, on bool, state string) []string {
		t.Helper()
		os.Remove(log)
		t.Setenv("ASG_STATE", state)
		p, err := NewExecProvider(filepath.Join("..", "docs", "power", script), args, time.Minute, quiet())
		if err != nil {
			t.Fatal(err)
		}
		if on {
			err = p.PowerOn(context.Background(), tgt)
		} else {
			err = p.PowerOff(context.Background(), tgt)
		}
		if err != nil {
			t.Fatalf("%s: %v", script, err)
		}
		b, _ := os.ReadFile(log)
		return strings.Split(strings.TrimSpace(string(b)), "\n")
	}
	if got := run("aws-ec2.sh", nil, false, ""); len(got) != 1 || got[0] != "ec2 stop-instances --instance-ids i-0abc --output text" {
		t.Fatalf("ec2 off: %q", got)
	}
	if got := run("aws-ec2.sh", nil, true, ""); len(got) != 1 || got[0] != "ec2 start-instances --instance-ids i-0abc --output text" {
		t.Fatalf("ec2 on: %q", got)
	}
	got := run("aws-asg.sh", []string{"spark-agents"}, false, "InService")
	if len(got) != 3 || !strings.Contains(got[1], "enter-standby --auto-scaling-group-name spark-agents --instance-ids i-0abc") || !strings.HasPrefix(got[2], "ec2 stop-instances") {
		t.Fatalf("asg off: %q", got)
	}
	got = run("aws-asg.sh", []string{"spark-agents"}, true, "Standby")
	if len(got) != 3 || !strings.HasPrefix(got[0], "ec2 start-instances") || !strings.Contains(got[2], "exit-standby --auto-scaling-group-name spark-agents") {
		t.Fatalf("asg on: %q", got)
	}
}
