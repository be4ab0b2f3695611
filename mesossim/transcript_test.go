package mesossim

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
)

// exchange is one request/response pair of a transcript of a real Mesos
// 1.12 master (../../shared/mesos-transcripts).
type exchange struct {
	Title      string
	Method     string
	Path       string
	Header     http.Header
	Body       string
	Status     int
	RespHeader http.Header
	RespBody   string
}

// transcriptDir is the copy of ../shared/mesos-transcripts kept in
// testdata (the ground truth the emulator must match).
func transcriptDir(t *testing.T) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "testdata", "transcripts")
}

// parseTranscript reads the exchanges of one transcript file.
func parseTranscript(t *testing.T, name string) []exchange {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(transcriptDir(t), name))
	if err != nil {
		t.Fatal(err)
	}
	var out []exchange
	sections := strings.Split(string(raw), "\n=== ")
	for _, sec := range sections[1:] {
		lines := strings.Split(sec, "\n")
		ex := exchange{Title: lines[0], Header: http.Header{}, RespHeader: http.Header{}}
		i := 1
		for i < len(lines) && lines[i] != ">>> REQUEST" {
			i++
		}
		if i >= len(lines) {
			continue
		}
		i++
		parts := strings.Fields(lines[i])
		ex.Method, ex.Path = parts[0], parts[1]
		i++
		for ; i < len(lines) && lines[i] != ""; i++ {
			k, v, _ := strings.Cut(lines[i], ": ")
			ex.Header.Add(k, v)
		}
		i++
		var body []string
		for ; i < len(lines) && lines[i] != "<<< RESPONSE"; i++ {
			body = append(body, lines[i])
		}
		ex.Body = strings.TrimSpace(strings.Join(body, "\n"))
		if ex.Body == "(empty body)" {
			ex.Body = ""
		}
		i++
		if i >= len(lines) {
			continue // no response (the master crashed)
		}
		st := strings.Fields(lines[i])
		if len(st) < 2 {
			continue
		}
		ex.Status, _ = strconv.Atoi(st[1])
		i++
		for ; i < len(lines) && lines[i] != ""; i++ {
			k, v, _ := strings.Cut(lines[i], ": ")
			ex.RespHeader.Add(k, v)
		}
		i++
		body = body[:0]
		for ; i < len(lines) && !strings.HasPrefix(lines[i], "##"); i++ {
			body = append(body, lines[i])
		}
		ex.RespBody = strings.TrimSpace(strings.Join(body, "\n"))
		if ex.RespBody == "(empty body)" {
			ex.RespBody = ""
		}
		out = append(out, ex)
	}
	return out
}

// testMaster starts a Master on a free port; the returned URL has no path.
func testMaster(t *testing.T, cfg Config) (*Master, string) {
	t.Helper()
	if cfg.OfferInterval == 0 {
		cfg.OfferInterval = 50 * time.Millisecond
	}
	if cfg.TaskStartDelay == 0 {
		cfg.TaskStartDelay = 10 * time.Millisecond
	}
	if cfg.Logger == nil {
		l := logrus.New()
		l.SetOutput(io.Discard)
		cfg.Logger = l
	}
	m, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() { done <- m.ListenAndServe(ctx, "127.0.0.1:0", func(a net.Addr) { ready <- a }) }()
	var addr net.Addr
	select {
	case addr = <-ready:
	case err := <-done:
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); <-done })
	return m, "http://" + addr.String()
}

// rawSubscription is a JSON SUBSCRIBE held open by the test.
type rawSubscription struct {
	FrameworkID string
	StreamID    string
	Events      chan map[string]any
	body        io.Closer
}

func rawSubscribe(t *testing.T, base, body string) *rawSubscription {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, base+"/api/v1/scheduler", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		t.Fatalf("SUBSCRIBE: %d %s", resp.StatusCode, b)
	}
	s := &rawSubscription{StreamID: resp.Header.Get("Mesos-Stream-Id"), Events: make(chan map[string]any, 1024), body: resp.Body}
	t.Cleanup(func() { resp.Body.Close() })
	r := bufio.NewReader(resp.Body)
	next := func() (map[string]any, error) {
		line, err := r.ReadString('\n')
		if err != nil {
			return nil, err
		}
		n, err := strconv.Atoi(strings.TrimSpace(line))
		if err != nil {
			return nil, fmt.Errorf("RecordIO length %q: %v", line, err)
		}
		buf := make([]byte, n)
		if _, err := io.ReadFull(r, buf); err != nil {
			return nil, err
		}
		var ev map[string]any
		return ev, json.Unmarshal(buf, &ev)
	}
	first, err := next()
	if err != nil {
		t.Fatalf("first event: %v", err)
	}
	if first["type"] != "SUBSCRIBED" {
		t.Fatalf("first event is %v, want SUBSCRIBED", first["type"])
	}
	s.FrameworkID = first["subscribed"].(map[string]any)["framework_id"].(map[string]any)["value"].(string)
	go func() {
		defer close(s.Events)
		for {
			ev, err := next()
			if err != nil {
				return
			}
			select {
			case s.Events <- ev:
			default: // the test does not read them all
			}
		}
	}()
	return s
}

const fw1Subscribe = `{"type":"SUBSCRIBE","subscribe":{"framework_info":{"user":"root","name":"sparkpack-fw1","roles":["sparkpack"],
 "capabilities":[{"type":"MULTI_ROLE"}],"failover_timeout":604800,"checkpoint":true}}}`

// replay sends the transcript's requests (with the real run's ids replaced
// by this run's) and compares status, content type and body.
func replay(t *testing.T, base string, exs []exchange, subst map[string]string, skipBody map[string]bool) {
	t.Helper()
	replace := func(s string) string {
		for from, to := range subst {
			s = strings.ReplaceAll(s, from, to)
		}
		return s
	}
	for _, ex := range exs {
		t.Run(ex.Title, func(t *testing.T) {
			req, err := http.NewRequest(ex.Method, base+ex.Path, strings.NewReader(replace(ex.Body)))
			if err != nil {
				t.Fatal(err)
			}
			for k, vs := range ex.Header {
				if k == "Content-Length" || k == "Host" {
					continue
				}
				for _, v := range vs {
					req.Header.Add(k, replace(v))
				}
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			resp, err := http.DefaultClient.Do(req.WithContext(ctx))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if resp.StatusCode != ex.Status {
				b, _ := io.ReadAll(resp.Body)
				t.Fatalf("status %d (%q), the real master answered %d (%q)", resp.StatusCode, b, ex.Status, ex.RespBody)
			}
			if want := ex.RespHeader.Get("Content-Type"); want != "" && !strings.HasPrefix(resp.Header.Get("Content-Type"), strings.Split(want, ";")[0]) {
				t.Errorf("Content-Type %q, the real master sent %q", resp.Header.Get("Content-Type"), want)
			}
			if skipBody[ex.Title] || ex.RespHeader.Get("Transfer-Encoding") == "chunked" {
				return
			}
			got, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
			want := replace(ex.RespBody)
			if strings.HasPrefix(ex.RespHeader.Get("Content-Type"), "application/json") {
				var g, w any
				if json.Unmarshal(got, &g) != nil || json.Unmarshal([]byte(want), &w) != nil || fmt.Sprint(g) != fmt.Sprint(w) {
					t.Errorf("body %s\nthe real master sent %s", got, want)
				}
				return
			}
			// The wording of a JSON parse error comes from the parser
			// (protobuf's in Mesos, mesos-go's here): only its prefix is
			// compared.
			if p := "Failed to convert JSON into Call protobuf: "; strings.HasPrefix(want, p) {
				if !strings.HasPrefix(string(got), p) {
					t.Errorf("body %q\nthe real master sent %q", got, want)
				}
				return
			}
			if strings.TrimSpace(string(got)) != want {
				t.Errorf("body %q\nthe real master sent %q", got, want)
			}
		})
	}
}

// TestSchedulerErrorsMatchTheRealMaster replays 03-scheduler-errors.txt.
func TestSchedulerErrorsMatchTheRealMaster(t *testing.T) {
	exs := parseTranscript(t, "03-scheduler-errors.txt")
	if len(exs) < 15 {
		t.Fatalf("parsed %d exchanges from 03-scheduler-errors.txt, want at least 15", len(exs))
	}
	_, base := testMaster(t, Config{})
	sub := rawSubscribe(t, base, fw1Subscribe)
	replay(t, base, exs, map[string]string{
		"021e23f3-b306-40bb-9bd8-9bf17a7e9e2f-0000": sub.FrameworkID,
		"87edd564-8ad9-472b-ac70-35168701ce22":      sub.StreamID,
	}, nil)
}

// TestOperatorErrorsMatchTheRealMaster replays 13-operator-errors.txt.
func TestOperatorErrorsMatchTheRealMaster(t *testing.T) {
	exs := parseTranscript(t, "13-operator-errors.txt")
	if len(exs) < 10 {
		t.Fatalf("parsed %d exchanges from 13-operator-errors.txt, want at least 10", len(exs))
	}
	_, base := testMaster(t, Config{})
	replay(t, base, exs, nil, nil)
}
