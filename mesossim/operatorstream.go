package mesossim

import (
	"net/http"
	"sync"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/master"
)

// opStream is one operator API subscriber: its events queued, sent in
// order by operatorSubscribe.
type opStream struct {
	media    string
	recordio bool
	mu       sync.Mutex
	q        []*master.Event
	notify   chan struct{}
	done     chan struct{}
	once     sync.Once
}

func (s *opStream) send(ev *master.Event) {
	s.mu.Lock()
	s.q = append(s.q, ev)
	s.mu.Unlock()
	select {
	case s.notify <- struct{}{}:
	default:
	}
}

func (s *opStream) close() { s.once.Do(func() { close(s.done) }) }

func (m *Master) publishLocked(ev *master.Event) {
	for s := range m.opSubs {
		s.send(ev)
	}
}

func (m *Master) publishTaskLocked(t *task) {
	if len(m.opSubs) == 0 {
		return
	}
	m.publishLocked(&master.Event{Type: master.Event_TASK_ADDED, TaskAdded: &master.Event_TaskAdded{Task: m.taskProtoLocked(t)}})
}

func (m *Master) publishTaskUpdatedLocked(t *task) {
	if len(m.opSubs) == 0 || t.status == nil {
		return
	}
	s := t.state
	m.publishLocked(&master.Event{Type: master.Event_TASK_UPDATED, TaskUpdated: &master.Event_TaskUpdated{
		FrameworkID: mesos.FrameworkID{Value: t.fw.id}, Status: *cloneStatus(t.status), State: &s}})
}

func (m *Master) publishFrameworkRemovedLocked(fw *framework) {
	if len(m.opSubs) == 0 {
		return
	}
	m.publishLocked(&master.Event{Type: master.Event_FRAMEWORK_REMOVED, FrameworkRemoved: &master.Event_FrameworkRemoved{FrameworkInfo: fw.info}})
}

// operatorSubscribe serves the operator event stream: SUBSCRIBED with a
// GET_STATE snapshot, HEARTBEATs, TASK_ADDED, TASK_UPDATED,
// FRAMEWORK_REMOVED, AGENT_ADDED and AGENT_REMOVED.
func (m *Master) operatorSubscribe(w http.ResponseWriter, r *http.Request, reqMedia string) {
	media, recordio, herr := responseMedia(r, reqMedia)
	if herr != nil {
		writeError(w, herr)
		return
	}
	s := &opStream{media: media, recordio: recordio, notify: make(chan struct{}, 1), done: make(chan struct{})}
	m.mu.Lock()
	if m.ctx.Err() != nil {
		m.mu.Unlock()
		writeError(w, errorf(http.StatusServiceUnavailable, "Master is shutting down"))
		return
	}
	hb := m.cfg.HeartbeatInterval.Seconds()
	s.send(&master.Event{Type: master.Event_SUBSCRIBED, Subscribed: &master.Event_Subscribed{GetState: m.getStateLocked(media != mediaProtobuf), HeartbeatIntervalSeconds: &hb}})
	s.send(&master.Event{Type: master.Event_HEARTBEAT})
	m.opSubs[s] = true
	m.mu.Unlock()
	defer func() {
		m.mu.Lock()
		delete(m.opSubs, s)
		m.mu.Unlock()
	}()
	if recordio {
		w.Header().Set("Content-Type", mediaRecordIO)
		w.Header().Set("Message-Content-Type", media)
	} else {
		w.Header().Set("Content-Type", media)
	}
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	tick := time.NewTicker(m.cfg.HeartbeatInterval)
	defer tick.Stop()
	for {
		s.mu.Lock()
		q := s.q
		s.q = nil
		s.mu.Unlock()
		for _, ev := range q {
			b, err := encodeMessage(media, ev)
			if err != nil {
				return
			}
			if _, err := w.Write(recordIO(b)); err != nil {
				return
			}
		}
		if flusher != nil {
			flusher.Flush()
		}
		select {
		case <-s.notify:
		case <-tick.C:
			s.send(&master.Event{Type: master.Event_HEARTBEAT})
		case <-s.done:
			return
		case <-r.Context().Done():
			return
		case <-m.ctx.Done():
			return
		}
	}
}
