package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"time"
)

// Broker fans server-sent events out to every connected client. Publishers
// never block: a client that cannot keep up misses events and is told to
// reload (event "resync").
type Broker struct {
	mu      sync.Mutex
	clients map[chan Event]struct{}
	seq     uint64
}

// Event is one published update: its sequence number, name ("job",
// "cluster", "cost", "placement", "resync", ...) and JSON data.
type Event struct {
	ID   uint64
	Name string
	Data []byte
}

// NewBroker returns an empty broker.
func NewBroker() *Broker { return &Broker{clients: map[chan Event]struct{}{}} }

// Publish sends an event named name with data (marshalled as JSON) to
// every client.
func (b *Broker) Publish(name string, data any) {
	b.mu.Lock()
	if len(b.clients) == 0 {
		b.seq++ // nobody listens: spare the encoding
		b.mu.Unlock()
		return
	}
	b.mu.Unlock()
	raw, err := json.Marshal(data)
	if err != nil {
		raw = []byte(`{}`)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.seq++
	ev := Event{ID: b.seq, Name: name, Data: raw}
	for c := range b.clients {
		select {
		case c <- ev:
		default:
			// The client is slow: drop this event; it resyncs on the next one it gets.
			select {
			case c <- Event{ID: b.seq, Name: "resync", Data: []byte(`{}`)}:
			default:
			}
		}
	}
}

// Clients is the number of connected clients.
func (b *Broker) Clients() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.clients)
}

// Subscribe returns the events published from now on and a function that
// ends the subscription (call it when done). Like a browser, a subscriber
// that cannot keep up misses events and gets a "resync" instead.
func (b *Broker) Subscribe() (<-chan Event, func()) {
	c := b.subscribe()
	return c, func() { b.unsubscribe(c) }
}

func (b *Broker) subscribe() chan Event {
	c := make(chan Event, 64)
	b.mu.Lock()
	b.clients[c] = struct{}{}
	b.mu.Unlock()
	return c
}

func (b *Broker) unsubscribe(c chan Event) {
	b.mu.Lock()
	delete(b.clients, c)
	b.mu.Unlock()
}

// ServeHTTP streams events until the client goes away. The retry field
// makes browsers reconnect within 2 s after a server restart.
func (b *Broker) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	fl, ok := w.(http.Flusher)
	if !ok {
		writeError(w, http.StatusInternalServerError, "", "streaming is not supported by this server")
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("Connection", "keep-alive")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	c := b.subscribe()
	defer b.unsubscribe(c)
	fmt.Fprintf(w, "retry: 2000\nevent: hello\ndata: {}\n\n")
	fl.Flush()
	keepalive := time.NewTicker(15 * time.Second)
	defer keepalive.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-keepalive.C:
			fmt.Fprint(w, ": keepalive\n\n")
		case ev := <-c:
			fmt.Fprintf(w, "id: %d\nevent: %s\ndata: %s\n\n", ev.ID, ev.Name, ev.Data)
		}
		fl.Flush()
	}
}
