package api

import (
	"math"
	"sync"
	"time"
)

// Limiter is a token-bucket rate limiter per key (a token's name or a
// client address): each key may make Burst requests at once and Rate a
// second after that. It keeps at most MaxKeys buckets; past that, buckets
// that have refilled completely are dropped first (they hold no state
// worth keeping), then arbitrary ones. It has no goroutine.
type Limiter struct {
	rate    float64
	burst   float64
	maxKeys int
	now     func() time.Time

	mu      sync.Mutex
	buckets map[string]*bucket
}

type bucket struct {
	tokens float64
	last   time.Time
}

// DefaultLimiterKeys bounds the buckets a Limiter keeps.
const DefaultLimiterKeys = 100000

// NewLimiter returns a limiter allowing perSecond requests a second per
// key with bursts of burst (at least 1). It returns nil — no limit — when
// perSecond is not positive.
func NewLimiter(perSecond float64, burst int) *Limiter {
	if perSecond <= 0 || math.IsNaN(perSecond) || math.IsInf(perSecond, 0) {
		return nil
	}
	if burst < 1 {
		burst = 1
	}
	return &Limiter{rate: perSecond, burst: float64(burst), maxKeys: DefaultLimiterKeys, now: time.Now, buckets: map[string]*bucket{}}
}

// refill brings b up to date at now (b may be nil: a new, full bucket).
func (l *Limiter) refill(key string, now time.Time) *bucket {
	b := l.buckets[key]
	if b == nil {
		if len(l.buckets) >= l.maxKeys {
			l.evict(now)
		}
		b = &bucket{tokens: l.burst, last: now}
		l.buckets[key] = b
		return b
	}
	if el := now.Sub(b.last).Seconds(); el > 0 {
		b.tokens = math.Min(l.burst, b.tokens+el*l.rate)
		b.last = now
	}
	return b
}

// evict drops full buckets, then any, until a tenth of the room is free.
func (l *Limiter) evict(now time.Time) {
	target := l.maxKeys - l.maxKeys/10 - 1
	for k, b := range l.buckets {
		if b.tokens+now.Sub(b.last).Seconds()*l.rate >= l.burst {
			delete(l.buckets, k)
		}
	}
	for k := range l.buckets {
		if len(l.buckets) <= target {
			break
		}
		delete(l.buckets, k)
	}
}

// Allow takes one request from key's bucket. When the bucket is empty it
// takes nothing and returns false with how long until a request would be
// allowed.
func (l *Limiter) Allow(key string) (bool, time.Duration) {
	if l == nil {
		return true, 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.refill(key, l.now())
	if b.tokens >= 1 {
		b.tokens--
		return true, 0
	}
	return false, l.wait(b)
}

// Blocked reports, without taking anything, whether key's bucket is empty
// and for how long.
func (l *Limiter) Blocked(key string) (bool, time.Duration) {
	if l == nil {
		return false, 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok := l.buckets[key]
	if !ok {
		return false, 0
	}
	b = l.refill(key, l.now())
	if b.tokens >= 1 {
		return false, 0
	}
	return true, l.wait(b)
}

func (l *Limiter) wait(b *bucket) time.Duration {
	return time.Duration((1 - b.tokens) / l.rate * float64(time.Second))
}

// retryAfterSeconds is the Retry-After value for a wait: whole seconds,
// rounded up, at least 1.
func retryAfterSeconds(d time.Duration) int {
	s := int(math.Ceil(d.Seconds()))
	if s < 1 {
		s = 1
	}
	return s
}

// keyedMutex is a mutex per key, dropped when nobody holds or waits for it.
type keyedMutex struct {
	mu    sync.Mutex
	locks map[string]*refMutex
}

type refMutex struct {
	sync.Mutex
	refs int
}

// Lock locks key's mutex and returns its unlock.
func (k *keyedMutex) Lock(key string) func() {
	k.mu.Lock()
	if k.locks == nil {
		k.locks = map[string]*refMutex{}
	}
	m := k.locks[key]
	if m == nil {
		m = &refMutex{}
		k.locks[key] = m
	}
	m.refs++
	k.mu.Unlock()
	m.Lock()
	return func() {
		m.Unlock()
		k.mu.Lock()
		m.refs--
		if m.refs == 0 {
			delete(k.locks, key)
		}
		k.mu.Unlock()
	}
}
