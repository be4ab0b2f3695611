package main

import (
	"sync"
	"time"
)

// recentIDs remembers the ids of jobs this instance handed to its own
// core, so that the database's notification of the same jobs (which every
// instance receives, the submitting one included) is not read back from
// PostgreSQL: at thousands of submissions a second that read-back cost as
// much as a tenth of serve's cpu. It keeps two generations and forgets the
// older one every rotate period, so it stays small; an id forgotten before
// its notification arrives is read back and ignored by the core, as before.
type recentIDs struct {
	mu      sync.Mutex
	rotate  time.Duration
	since   time.Time
	cur     map[string]struct{}
	prev    map[string]struct{}
	nowFunc func() time.Time
}

func newRecentIDs(rotate time.Duration) *recentIDs {
	return &recentIDs{rotate: rotate, cur: map[string]struct{}{}, nowFunc: time.Now}
}

func (r *recentIDs) roll() {
	now := r.nowFunc()
	switch age := now.Sub(r.since); {
	case age >= 2*r.rotate: // both generations are old
		r.prev, r.cur, r.since = nil, map[string]struct{}{}, now
	case age >= r.rotate:
		r.prev, r.cur, r.since = r.cur, make(map[string]struct{}, len(r.cur)), now
	}
}

// Add remembers id.
func (r *recentIDs) Add(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.roll()
	r.cur[id] = struct{}{}
}

// Unknown returns the ids of ids not remembered, forgetting the ones that
// were (a notification arrives once).
func (r *recentIDs) Unknown(ids []string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.roll()
	out := ids[:0:0]
	for _, id := range ids {
		_, a := r.cur[id]
		_, b := r.prev[id]
		if a || b {
			delete(r.cur, id)
			delete(r.prev, id)
			continue
		}
		out = append(out, id)
	}
	return out
}

// Reset forgets everything (a new term: its core starts from the store).
func (r *recentIDs) Reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.cur, r.prev, r.since = map[string]struct{}{}, nil, r.nowFunc()
}
