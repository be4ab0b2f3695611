package probe

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The probe talks JSON to the master and keeps every event as the master
// sent it (a generic map): fields that mesos-go does not know are kept
// too, so that nothing the master sends escapes the comparison.

type obj = map[string]any

// call posts a JSON call and returns the status code and body.
func post(ctx context.Context, hc *http.Client, url string, body any, header http.Header) (int, []byte, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return 0, nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(b))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	for k, vs := range header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	return resp.StatusCode, raw, err
}

// operator sends an operator call and decodes its JSON answer (nil for
// an empty body); a non-2xx answer is an error.
func (p *prober) operator(ctx context.Context, call obj) (obj, error) {
	code, raw, err := post(ctx, p.hc, p.url+"/api/v1", call, nil)
	if err != nil {
		return nil, fmt.Errorf("operator %v: %w", call["type"], err)
	}
	if code/100 != 2 {
		return nil, fmt.Errorf("operator %v: HTTP %d %s", call["type"], code, strings.TrimSpace(string(raw)))
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, nil
	}
	var out obj
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("operator %v: decode: %w", call["type"], err)
	}
	return out, nil
}

// framework is one subscription of the probe.
type framework struct {
	p        *prober
	name     string
	id       string
	streamID string
	body     io.ReadCloser

	mu     sync.Mutex
	queue  []obj
	notify chan struct{}
	ended  error
}

// subscribe opens a subscription and returns it once SUBSCRIBED arrived,
// with that event.
func (p *prober) subscribe(ctx context.Context, name string, info obj) (*framework, obj, error) {
	b, _ := json.Marshal(obj{"type": "SUBSCRIBE", "subscribe": obj{"framework_info": info}})
	req, err := http.NewRequest(http.MethodPost, p.url+"/api/v1/scheduler", bytes.NewReader(b))
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := p.stream.Do(req)
	if err != nil {
		return nil, nil, fmt.Errorf("SUBSCRIBE %s: %w", name, err)
	}
	if resp.StatusCode != http.StatusOK {
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return nil, nil, fmt.Errorf("SUBSCRIBE %s: HTTP %d %s", name, resp.StatusCode, raw)
	}
	f := &framework{p: p, name: name, streamID: resp.Header.Get("Mesos-Stream-Id"), body: resp.Body, notify: make(chan struct{}, 1)}
	go f.read(bufio.NewReader(resp.Body))
	ev, err := f.wait(ctx, 20*time.Second, func(e obj) bool { return e["type"] == "SUBSCRIBED" || e["type"] == "ERROR" })
	if err != nil {
		f.close()
		return nil, nil, err
	}
	if ev["type"] == "ERROR" {
		f.close()
		return nil, nil, fmt.Errorf("SUBSCRIBE %s: ERROR %v", name, ev["error"])
	}
	f.id = str(ev, "subscribed", "framework_id", "value")
	p.frameworks = append(p.frameworks, f.id)
	p.norm.frameworks[f.id] = name
	return f, ev, nil
}

// read parses the RecordIO stream: "<length>\n<json>" records.
func (f *framework) read(r *bufio.Reader) {
	var err error
	for {
		var line string
		line, err = r.ReadString('\n')
		if err != nil {
			break
		}
		n, cerr := strconv.Atoi(strings.TrimSpace(line))
		if cerr != nil || n < 0 || n > 64<<20 {
			err = fmt.Errorf("bad RecordIO length %q", line)
			break
		}
		buf := make([]byte, n)
		if _, err = io.ReadFull(r, buf); err != nil {
			break
		}
		var ev obj
		if err = json.Unmarshal(buf, &ev); err != nil {
			break
		}
		if ev == nil {
			// "null" decodes without an error: a nil event for the
			// readers of the queue.
			err = fmt.Errorf("RecordIO record %q is not a JSON object", buf)
			break
		}
		f.mu.Lock()
		f.queue = append(f.queue, ev)
		f.mu.Unlock()
		select {
		case f.notify <- struct{}{}:
		default:
		}
	}
	f.mu.Lock()
	f.ended = err
	f.mu.Unlock()
	select {
	case f.notify <- struct{}{}:
	default:
	}
}

func (f *framework) close() { f.body.Close() }

// wait removes and returns the first queued event match accepts (other
// events stay queued), waiting up to timeout.
func (f *framework) wait(ctx context.Context, timeout time.Duration, match func(obj) bool) (obj, error) {
	deadline := time.After(timeout)
	for {
		f.mu.Lock()
		for i, ev := range f.queue {
			if match(ev) {
				f.queue = append(f.queue[:i:i], f.queue[i+1:]...)
				f.mu.Unlock()
				return ev, nil
			}
		}
		ended := f.ended
		f.mu.Unlock()
		if ended != nil {
			return nil, fmt.Errorf("%s: the event stream ended: %v", f.name, ended)
		}
		select {
		case <-f.notify:
		case <-deadline:
			return nil, fmt.Errorf("%s: no matching event within %s", f.name, timeout)
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// drain removes and returns every queued event match accepts, after
// waiting d for more to arrive.
func (f *framework) drain(d time.Duration, match func(obj) bool) []obj {
	time.Sleep(d)
	f.mu.Lock()
	defer f.mu.Unlock()
	var out, keep []obj
	for _, ev := range f.queue {
		if match(ev) {
			out = append(out, ev)
		} else {
			keep = append(keep, ev)
		}
	}
	f.queue = keep
	return out
}

// call sends a scheduler call with the framework id and stream id.
func (f *framework) call(ctx context.Context, typ string, body obj) error {
	c := obj{"type": typ, "framework_id": obj{"value": f.id}}
	if body != nil {
		c[strings.ToLower(typ)] = body
	}
	h := http.Header{}
	h.Set("Mesos-Stream-Id", f.streamID)
	code, raw, err := post(ctx, f.p.hc, f.p.url+"/api/v1/scheduler", c, h)
	if err != nil {
		return fmt.Errorf("%s %s: %w", f.name, typ, err)
	}
	if code/100 != 2 {
		return fmt.Errorf("%s %s: HTTP %d %s", f.name, typ, code, strings.TrimSpace(string(raw)))
	}
	return nil
}

// ack acknowledges a status update that carries a uuid.
func (f *framework) ack(ctx context.Context, ev obj) error {
	st, _ := get(ev, "update", "status").(obj)
	if st == nil || st["uuid"] == nil {
		return nil
	}
	return f.call(ctx, "ACKNOWLEDGE", obj{"agent_id": st["agent_id"], "task_id": st["task_id"], "uuid": st["uuid"]})
}

// get walks nested maps; nil when a key is missing.
func get(v any, path ...string) any {
	for _, k := range path {
		m, ok := v.(obj)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

func str(v any, path ...string) string {
	s, _ := get(v, path...).(string)
	return s
}

func isType(types ...string) func(obj) bool {
	return func(e obj) bool {
		for _, t := range types {
			if e["type"] == t {
				return true
			}
		}
		return false
	}
}

// updateOf matches UPDATE events of one task.
func updateOf(taskID string) func(obj) bool {
	return func(e obj) bool {
		return e["type"] == "UPDATE" && str(e, "update", "status", "task_id", "value") == taskID
	}
}

var terminalStates = map[string]bool{"TASK_FINISHED": true, "TASK_FAILED": true, "TASK_KILLED": true, "TASK_LOST": true,
	"TASK_ERROR": true, "TASK_DROPPED": true, "TASK_GONE": true, "TASK_GONE_BY_OPERATOR": true, "TASK_UNREACHABLE": true, "TASK_UNKNOWN": true}
