package teams

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sirupsen/logrus"
)

// Holder keeps the teams configuration in force. Its methods are safe for
// concurrent use; the zero value holds no configuration (every team has
// the default settings), as does a nil *Holder.
type Holder struct {
	cfg atomic.Pointer[Config]
	// version counts the configurations put in force (the scheduler looks
	// at every waiting job again when it changes).
	version atomic.Uint64
}

// Get is the configuration in force (nil: none).
func (h *Holder) Get() *Config {
	if h == nil {
		return nil
	}
	return h.cfg.Load()
}

// Version counts the configurations put in force.
func (h *Holder) Version() uint64 {
	if h == nil {
		return 0
	}
	return h.version.Load()
}

// Set puts c in force.
func (h *Holder) Set(c *Config) {
	h.cfg.Store(c)
	h.version.Add(1)
}

// Watcher loads a teams file into a Holder: at start (Load), on demand
// (Reload), on a signal, and when the file's contents change (Run). A file
// that fails to parse, or that Check refuses, leaves the configuration in
// force as it was; the failure is logged.
type Watcher struct {
	Path   string
	Holder *Holder
	// Check, if set, is asked about every configuration before it is put
	// in force (serve checks the guarantees against the cluster when its
	// size is known).
	Check func(*Config) error
	Log   logrus.FieldLogger

	mu     sync.Mutex
	loaded [32]byte // digest of the contents in force
	failed [32]byte // digest of the last contents refused (logged once)
	// unreadable: the file could not be read at the last check (logged once).
	unreadable bool
}

// Load reads the file and puts it in force: what serve does at start (an
// error refuses to start).
func (w *Watcher) Load() error {
	_, err := w.Reload()
	return err
}

// Reload reads the file again and puts it in force; it reports whether
// the configuration changed. On error the previous one stays.
func (w *Watcher) Reload() (bool, error) {
	b, err := os.ReadFile(w.Path)
	if err != nil {
		return false, fmt.Errorf("teams file: %w", err)
	}
	sum := sha256.Sum256(b)
	w.mu.Lock()
	defer w.mu.Unlock()
	if sum == w.loaded && w.Holder.Get() != nil {
		return false, nil
	}
	c, err := Load(w.Path)
	if err == nil && w.Check != nil {
		if cerr := w.Check(c); cerr != nil {
			err = fmt.Errorf("teams file %s: %w", w.Path, cerr)
		}
	}
	if err != nil {
		w.failed = sum
		return false, err
	}
	w.loaded = sum
	w.Holder.Set(c)
	return true, nil
}

// RefusedError is Save's error for a configuration refused as bad (it
// does not parse, or Check refuses it); the message names the line.
type RefusedError struct{ Err error }

func (e *RefusedError) Error() string { return e.Err.Error() }
func (e *RefusedError) Unwrap() error { return e.Err }

// Save checks text as a teams file and, when it is good, writes it to the
// file (replacing it at once, by a rename) and puts it in force. A bad
// text is a *RefusedError and changes nothing.
func (w *Watcher) Save(text []byte) (*Config, error) {
	c, err := Parse(bytes.NewReader(text))
	if err == nil && w.Check != nil {
		err = w.Check(c)
	}
	if err != nil {
		return nil, &RefusedError{Err: err}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	tmp := w.Path + ".tmp"
	mode := os.FileMode(0o644)
	if fi, err := os.Stat(w.Path); err == nil {
		mode = fi.Mode().Perm()
	}
	if err := os.WriteFile(tmp, text, mode); err != nil {
		return nil, fmt.Errorf("write the teams file: %w", err)
	}
	if err := os.Rename(tmp, w.Path); err != nil {
		os.Remove(tmp)
		return nil, fmt.Errorf("replace the teams file: %w", err)
	}
	w.loaded = sha256.Sum256(text)
	w.Holder.Set(c)
	return c, nil
}

// Run reloads the file whenever a value arrives on hup (SIGHUP) or its
// contents change (checked every interval), until ctx ends. Refused
// contents are logged once (again on every signal).
func (w *Watcher) Run(ctx context.Context, interval time.Duration, hup <-chan os.Signal) {
	if interval <= 0 {
		interval = 2 * time.Second
	}
	log := w.Log
	if log == nil {
		log = logrus.StandardLogger()
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		signalled := false
		select {
		case <-ctx.Done():
			return
		case <-hup:
			signalled = true
		case <-t.C:
		}
		b, err := os.ReadFile(w.Path)
		w.mu.Lock()
		wasUnreadable := w.unreadable
		w.unreadable = err != nil
		unchanged, knownBad := false, false
		if err == nil {
			sum := sha256.Sum256(b)
			unchanged, knownBad = sum == w.loaded, sum == w.failed
		}
		w.mu.Unlock()
		if unchanged || (knownBad && !signalled) || (err != nil && wasUnreadable && !signalled) {
			continue
		}
		changed, err := w.Reload()
		switch {
		case err != nil:
			log.WithError(err).Error("teams file not reloaded; the previous teams configuration stays in force")
		case changed:
			log.WithFields(logrus.Fields{"file": w.Path, "teams": len(w.Holder.Get().Teams)}).Info("teams configuration reloaded")
		}
	}
}
