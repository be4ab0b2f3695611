package api

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"sync"
	"time"
)

// Event stream tickets. A browser's EventSource cannot send an
// Authorization header, so under --protect-reads the dashboard first
// trades its token for a ticket (POST /api/v1/events/ticket, with the
// token in the header as usual) and opens /api/v1/events?ticket=...: the
// ticket is good for one connection, within TicketTTL, and carries the
// token's name and scopes. Only digests of tickets are kept; the access
// log never shows query strings.

// TicketTTL is how long a ticket may wait to be used.
const TicketTTL = 30 * time.Second

// maxTickets bounds the tickets kept at once (unused ones expire).
const maxTickets = 10000

type ticket struct {
	p       Principal
	expires time.Time
}

type tickets struct {
	mu  sync.Mutex
	now func() time.Time
	m   map[[32]byte]ticket
}

// issue makes a ticket for p; ok is false when too many are outstanding.
func (t *tickets) issue(p Principal) (string, time.Time, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	if t.m == nil {
		t.m = map[[32]byte]ticket{}
	}
	if len(t.m) >= maxTickets {
		for k, v := range t.m {
			if now.After(v.expires) {
				delete(t.m, k)
			}
		}
		if len(t.m) >= maxTickets {
			return "", time.Time{}, false
		}
	}
	var b [32]byte
	_, _ = rand.Read(b[:])
	s := hex.EncodeToString(b[:])
	exp := now.Add(TicketTTL)
	t.m[sha256.Sum256([]byte(s))] = ticket{p: p, expires: exp}
	return s, exp, true
}

// redeem uses a ticket up: it returns its principal if it was valid.
func (t *tickets) redeem(s string) (Principal, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	k := sha256.Sum256([]byte(s))
	tk, ok := t.m[k]
	if !ok {
		return Principal{}, false
	}
	delete(t.m, k)
	if t.now().After(tk.expires) {
		return Principal{}, false
	}
	return tk.p, true
}

// TicketResponse is the answer of POST /api/v1/events/ticket.
type TicketResponse struct {
	Ticket    string    `json:"ticket"`
	ExpiresAt time.Time `json:"expiresAt"`
	// URL is the event stream's address with the ticket.
	URL string `json:"url"`
}

// issueTicket is POST /api/v1/events/ticket (read scope, as the stream).
func (s *Server) issueTicket(w http.ResponseWriter, r *http.Request) {
	p, _ := PrincipalFrom(r.Context())
	tk, exp, ok := s.tickets.issue(p)
	if !ok {
		w.Header().Set("Retry-After", "30")
		writeError(w, http.StatusTooManyRequests, "", "too many event stream tickets outstanding; retry in 30s")
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, TicketResponse{Ticket: tk, ExpiresAt: exp.UTC(), URL: "/api/v1/events?ticket=" + tk})
}

// streamAuth admits the event stream by ticket (?ticket=) or, without
// one, as any read (a header token under --protect-reads, else open).
func (s *Server) streamAuth(h http.HandlerFunc) http.HandlerFunc {
	reading := s.reading(h)
	return func(w http.ResponseWriter, r *http.Request) {
		tk := r.URL.Query().Get("ticket")
		if tk == "" || r.Header.Get("Authorization") != "" {
			reading(w, r)
			return
		}
		p, ok := s.tickets.redeem(tk)
		if !ok {
			s.guard.Count(r, ListenerAPI, RefusedBadTicket)
			writeError(w, http.StatusUnauthorized, "ticket", "this event stream ticket is unknown, used or expired; get a new one with POST /api/v1/events/ticket")
			return
		}
		if n := noteFrom(r.Context()); n != nil {
			n.Principal = p.Name
			if p.Name == "" {
				n.Principal = "(" + p.Via + ")"
			}
		}
		h(w, r.WithContext(context.WithValue(r.Context(), principalKey{}, p)))
	}
}
