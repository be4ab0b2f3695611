package offers

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"sync"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/encoding/framing"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/sirupsen/logrus"
)

// MaxEventSize bounds one event of the scheduler stream. An OFFERS event
// carries an offer from every agent with resources for the framework's
// roles: about 350 bytes an agent, 10 MB on a cluster of 30,000 agents
// (mesos-go's default limit of 4 MiB cut the stream at about 12,000).
const MaxEventSize = 64 << 20

// SchedClient is a client of the Mesos scheduler API (POST /api/v1/scheduler).
type SchedClient struct {
	ep  *Endpoint
	log logrus.FieldLogger

	mu          sync.Mutex
	streamID    string
	frameworkID string
}

// NewSchedClient returns a scheduler API client on the endpoint.
func NewSchedClient(ep *Endpoint, log logrus.FieldLogger) *SchedClient {
	return &SchedClient{ep: ep, log: log}
}

// FrameworkID is the id the master gave in SUBSCRIBED ("" before).
func (c *SchedClient) FrameworkID() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.frameworkID
}

// ErrNotSubscribed is returned by Call while no subscription is open.
var ErrNotSubscribed = errors.New("not subscribed to the Mesos master")

// Call sends a call on the current subscription: the framework id and the
// Mesos-Stream-Id header are filled in. Mesos answers 202.
func (c *SchedClient) Call(ctx context.Context, call *scheduler.Call) error {
	c.mu.Lock()
	sid, fid := c.streamID, c.frameworkID
	c.mu.Unlock()
	if sid == "" {
		return ErrNotSubscribed
	}
	call.FrameworkID = &mesos.FrameworkID{Value: fid}
	name := call.GetType().String()
	resp, err := c.ep.post(ctx, "/api/v1/scheduler", name, call, protobufType, http.Header{"Mesos-Stream-Id": {sid}})
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted && resp.StatusCode != http.StatusOK {
		return readError(resp, name)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	return nil
}

// recordReader reads RecordIO frames ("<length>\n<bytes>", the scheduler
// stream's framing), each into a buffer of its own size: mesos-go's reader
// keeps a buffer of half its limit (32 MiB for events up to 64 MiB).
type recordReader struct {
	r   *bufio.Reader
	max int
}

func newRecordReader(r io.Reader, max int) *recordReader {
	return &recordReader{r: bufio.NewReaderSize(r, 64<<10), max: max}
}

// ReadFrame implements framing.Reader.
func (rr *recordReader) ReadFrame() ([]byte, error) {
	var n int
	digits := 0
	for {
		c, err := rr.r.ReadByte()
		if err != nil {
			if err == io.EOF && digits > 0 {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
		if c == '\n' {
			break
		}
		if c < '0' || c > '9' || digits >= 10 {
			return nil, fmt.Errorf("RecordIO: bad record length (byte %q)", c)
		}
		n = n*10 + int(c-'0')
		digits++
		if n > rr.max {
			return nil, fmt.Errorf("RecordIO: a record of more than %d bytes", rr.max)
		}
	}
	if digits == 0 {
		return nil, errors.New("RecordIO: empty record length")
	}
	buf := make([]byte, n)
	if _, err := io.ReadFull(rr.r, buf); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return buf, nil
}

// Stream is an open SUBSCRIBE stream.
type Stream struct {
	body       io.ReadCloser
	frames     framing.Reader
	StreamID   string
	Subscribed scheduler.Event_Subscribed
}

// Next reads the next event.
func (s *Stream) Next() (*scheduler.Event, error) {
	frame, err := s.frames.ReadFrame()
	if err != nil {
		return nil, err
	}
	var ev scheduler.Event
	if err := ev.Unmarshal(frame); err != nil {
		return nil, fmt.Errorf("decode Mesos event: %w", err)
	}
	return &ev, nil
}

// Close ends the stream.
func (s *Stream) Close() error { return s.body.Close() }

// Subscribe opens a subscription and reads up to its SUBSCRIBED event. An
// ERROR event instead (a SUBSCRIBE that failed validation, or a framework
// that was torn down) is returned as an error.
func (c *SchedClient) Subscribe(ctx context.Context, info mesos.FrameworkInfo) (*Stream, error) {
	call := &scheduler.Call{Type: scheduler.Call_SUBSCRIBE, Subscribe: &scheduler.Call_Subscribe{FrameworkInfo: &info}}
	if info.ID != nil {
		call.FrameworkID = info.ID
	}
	resp, err := c.ep.post(ctx, "/api/v1/scheduler", "SUBSCRIBE", call, protobufType, nil)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		defer resp.Body.Close()
		return nil, readError(resp, "SUBSCRIBE")
	}
	s := &Stream{body: resp.Body, frames: newRecordReader(resp.Body, MaxEventSize), StreamID: resp.Header.Get("Mesos-Stream-Id")}
	ev, err := s.Next()
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("SUBSCRIBE: reading the first event: %w", err)
	}
	switch {
	case ev.GetType() == scheduler.Event_SUBSCRIBED && ev.Subscribed != nil:
		s.Subscribed = *ev.Subscribed
	case ev.GetType() == scheduler.Event_ERROR && ev.Error != nil:
		s.Close()
		return nil, fmt.Errorf("SUBSCRIBE %w: %s", errRefused, ev.Error.Message)
	default:
		s.Close()
		return nil, fmt.Errorf("SUBSCRIBE: first event is %s, want SUBSCRIBED", ev.GetType())
	}
	if s.StreamID == "" {
		s.Close()
		return nil, errors.New("SUBSCRIBE: the master sent no Mesos-Stream-Id header")
	}
	c.mu.Lock()
	c.streamID = s.StreamID
	c.frameworkID = s.Subscribed.FrameworkID.Value
	c.mu.Unlock()
	return s, nil
}

// Handler receives what a subscription brings. Its methods are called from
// one goroutine, in order.
type Handler interface {
	// Subscribed is called after every (re)subscription.
	Subscribed(ctx context.Context, ev *scheduler.Event_Subscribed)
	// Event is called for every event after SUBSCRIBED but heartbeats.
	Event(ctx context.Context, ev *scheduler.Event)
	// Disconnected is called when the subscription is lost; outstanding
	// offers are invalid from then on.
	Disconnected(err error)
}

// RunOptions tune Run.
type RunOptions struct {
	// MissedHeartbeats is how many heartbeat intervals may pass without any
	// event before the subscription is considered dead (default 5).
	MissedHeartbeats int
	// MinBackoff and MaxBackoff bound the reconnect delay (defaults 500 ms, 30 s).
	MinBackoff, MaxBackoff time.Duration
	// ProbeEvery is how often the master is probed (GET /version) while
	// backing off after it could not be reached or answered 5xx: as soon
	// as it answers, the backoff ends and the framework subscribes
	// (default 500 ms). A master that refuses the subscription (4xx, an
	// ERROR event) is not probed: the backoff runs out.
	ProbeEvery time.Duration
}

// errRefused marks a subscription the master refused (an ERROR event):
// asking again at once would be refused again.
var errRefused = errors.New("refused by the Mesos master")

// probeWorthy reports whether a subscription that ended with err may be
// made again as soon as the master answers: it could not be reached, the
// stream broke, or the master was not ready (5xx).
func probeWorthy(err error) bool {
	if err == nil || errors.Is(err, errRefused) {
		return false
	}
	var se *StatusError
	if errors.As(err, &se) {
		return se.Code >= 500
	}
	return true
}

// Run subscribes and re-subscribes until ctx ends, with capped exponential
// backoff and jitter between attempts. info is called before every
// subscription so that the stored framework id is reused; when it fails,
// Run does not subscribe but waits and calls it again. A subscription
// that sees no event for MissedHeartbeats heartbeat intervals is dropped.
// Run returns nil when ctx ends. Every lost or refused subscription is
// handed to h.Disconnected first (a framework the master removed is
// refused for ever: Framework then forgets its id, see FrameworkRemoved).
func (c *SchedClient) Run(ctx context.Context, info func() (mesos.FrameworkInfo, error), h Handler, o RunOptions) error {
	if o.MissedHeartbeats <= 0 {
		o.MissedHeartbeats = 5
	}
	if o.MinBackoff <= 0 {
		o.MinBackoff = 500 * time.Millisecond
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = 30 * time.Second
	}
	if o.ProbeEvery <= 0 {
		o.ProbeEvery = 500 * time.Millisecond
	}
	attempt := 0
	for ctx.Err() == nil {
		fi, err := info()
		if err == nil {
			err = c.runOnce(ctx, fi, h, o)
		}
		c.mu.Lock()
		c.streamID = ""
		c.mu.Unlock()
		if ctx.Err() != nil {
			return nil
		}
		h.Disconnected(err)
		if err == nil {
			attempt = 0
		} else {
			attempt++
		}
		wait := backoff(attempt, o.MinBackoff, o.MaxBackoff, rand.Int64N)
		c.log.WithError(err).WithField("retry_in", wait.Round(time.Millisecond).String()).Warn("Mesos subscription lost; re-subscribing")
		if !c.backOff(ctx, wait, probeWorthy(err), o.ProbeEvery) {
			return nil
		}
	}
	return nil
}

// backOff waits before the next subscription: wait, or, with probe, until
// the master answers a probe (checked every probeEvery), whichever comes
// first. It returns false when ctx ends.
func (c *SchedClient) backOff(ctx context.Context, wait time.Duration, probe bool, probeEvery time.Duration) bool {
	done := time.NewTimer(wait)
	defer done.Stop()
	var tick <-chan time.Time
	if probe && c.ep != nil {
		t := time.NewTicker(probeEvery)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-ctx.Done():
			return false
		case <-done.C:
			return true
		case <-tick:
			if err := c.ep.Probe(ctx); err == nil {
				c.log.Info("the Mesos master answers again; re-subscribing now")
				return true
			}
		}
	}
}

func (c *SchedClient) runOnce(ctx context.Context, info mesos.FrameworkInfo, h Handler, o RunOptions) error {
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s, err := c.Subscribe(sctx, info)
	if err != nil {
		return err
	}
	defer s.Close()
	c.log.WithFields(logrus.Fields{"framework_id": s.Subscribed.FrameworkID.Value, "master": c.ep.Base()}).Info("subscribed to Mesos")
	h.Subscribed(ctx, &s.Subscribed)

	interval := 15 * time.Second
	if hb := s.Subscribed.HeartbeatIntervalSeconds; hb != nil && *hb > 0 {
		interval = time.Duration(*hb * float64(time.Second))
	}
	// The watchdog closes the stream when no event came for too long;
	// Next then fails and the subscription is re-made.
	// It also closes it when the endpoint moved to another master (a new
	// leader in ZooKeeper, a redirect seen by another call): the
	// subscription must be with the leader.
	alive := make(chan struct{}, 1)
	master, moved := c.ep.Base(), c.ep.Changed()
	go func() {
		t := time.NewTimer(interval * time.Duration(o.MissedHeartbeats))
		defer t.Stop()
		for {
			select {
			case <-sctx.Done():
				return
			case <-moved:
				if now := c.ep.Base(); now != master {
					c.log.WithFields(logrus.Fields{"from": master, "to": now}).Warn("the leading Mesos master changed; subscribing with the new leader")
					s.Close()
					return
				}
				moved = c.ep.Changed()
			case <-alive:
				if !t.Stop() {
					select {
					case <-t.C:
					default:
					}
				}
				t.Reset(interval * time.Duration(o.MissedHeartbeats))
			case <-t.C:
				c.log.WithField("missed", o.MissedHeartbeats).Warn("no heartbeat from Mesos; reconnecting")
				s.Close()
				return
			}
		}
	}()
	for {
		ev, err := s.Next()
		if err != nil {
			if sctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("Mesos event stream: %w", err)
		}
		select {
		case alive <- struct{}{}:
		default:
		}
		switch ev.GetType() {
		case scheduler.Event_HEARTBEAT:
			continue
		case scheduler.Event_ERROR:
			msg := ""
			if ev.Error != nil {
				msg = ev.Error.Message
			}
			return fmt.Errorf("Mesos sent ERROR (%w): %s", errRefused, msg)
		}
		h.Event(ctx, ev)
	}
}
