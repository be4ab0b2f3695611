package api

import (
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Limiter is a token-bucket rate limiter per key (a token's name or a
// client address): each key may make Burst requests at once and Rate a
// second after that. The buckets are golang.org/x/time/rate limiters; this
// type keys them and bounds how many it keeps: at most MaxKeys, and past
// that, buckets that have refilled completely are dropped first (they
// hold no state worth keeping), then arbitrary ones. It has no goroutine.
type Limiter struct {
	rate    float64
	burst   int
	maxKeys int
	now     func() time.Time

	mu      sync.Mutex
	buckets map[string]*rate.Limiter
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
	return &Limiter{rate: perSecond, burst: burst, maxKeys: DefaultLimiterKeys, now: time.Now, buckets: map[string]*rate.Limiter{}}
}

// bucket returns key's bucket, a new (full) one when it has none.
func (l *Limiter) bucket(key string, now time.Time) *rate.Limiter {
	b := l.buckets[key]
	if b == nil {
		if len(l.buckets) >= l.maxKeys {
			l.evict(now)
		}
		b = rate.NewLimiter(rate.Limit(l.rate), l.burst)
		l.buckets[key] = b
	}
	return b
}

// evict drops full buckets, then any, until a tenth of the room is free.
func (l *Limiter) evict(now time.Time) {
	target := l.maxKeys - l.maxKeys/10 - 1
	for k, b := range l.buckets {
		if b.TokensAt(now) >= float64(l.burst) {
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
	now := l.now()
	b := l.bucket(key, now)
	if b.AllowN(now, 1) {
		return true, 0
	}
	return false, l.wait(b, now)
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
	now := l.now()
	if b.TokensAt(now) >= 1 {
		return false, 0
	}
	return true, l.wait(b, now)
}

// wait is how long until b holds a whole token.
func (l *Limiter) wait(b *rate.Limiter, now time.Time) time.Duration {
	return time.Duration((1 - b.TokensAt(now)) / l.rate * float64(time.Second))
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
