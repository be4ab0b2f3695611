package tlsutil

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/sirupsen/logrus"
)

// Reloader serves a certificate and key pair from two files and loads
// them again on demand (Reload), on a signal, or when their contents
// change (Run). A pair that fails to load leaves the previous one in
// service.
type Reloader struct {
	certFile, keyFile string
	log               logrus.FieldLogger

	mu     sync.RWMutex
	cert   *tls.Certificate
	loaded [32]byte // digest of the files the current pair came from
	failed [32]byte // digest of the last contents that failed (logged once)
}

// NewReloader loads the pair once; it fails when the files cannot be read
// or do not form a pair.
func NewReloader(certFile, keyFile string, log logrus.FieldLogger) (*Reloader, error) {
	if certFile == "" || keyFile == "" {
		return nil, errors.New("TLS needs both a certificate and a key file (--tls-cert and --tls-key)")
	}
	if log == nil {
		log = logrus.StandardLogger()
	}
	r := &Reloader{certFile: certFile, keyFile: keyFile, log: log}
	if _, err := r.Reload(); err != nil {
		return nil, fmt.Errorf("--tls-cert, --tls-key: %w (want a PEM certificate chain and its private key; sparkpack certs makes a pair)", err)
	}
	return r, nil
}

func (r *Reloader) read() ([]byte, []byte, [32]byte, error) {
	c, err := os.ReadFile(r.certFile)
	if err != nil {
		return nil, nil, [32]byte{}, fmt.Errorf("TLS certificate %s: %w", r.certFile, err)
	}
	k, err := os.ReadFile(r.keyFile)
	if err != nil {
		return nil, nil, [32]byte{}, fmt.Errorf("TLS key %s: %w", r.keyFile, err)
	}
	return c, k, sha256.Sum256(append(append(append([]byte{}, c...), 0), k...)), nil
}

// Reload loads the files again. It reports whether the pair in service
// changed; on error the previous pair stays.
func (r *Reloader) Reload() (bool, error) {
	c, k, sum, err := r.read()
	if err != nil {
		return false, err
	}
	r.mu.RLock()
	same := r.cert != nil && sum == r.loaded
	r.mu.RUnlock()
	if same {
		return false, nil
	}
	pair, err := tls.X509KeyPair(c, k)
	if err != nil {
		r.mu.Lock()
		r.failed = sum
		r.mu.Unlock()
		return false, fmt.Errorf("TLS pair %s / %s: %w", r.certFile, r.keyFile, err)
	}
	if pair.Leaf == nil {
		if leaf, err := x509.ParseCertificate(pair.Certificate[0]); err == nil {
			pair.Leaf = leaf
		}
	}
	r.mu.Lock()
	r.cert, r.loaded = &pair, sum
	r.mu.Unlock()
	return true, nil
}

// GetCertificate is tls.Config.GetCertificate.
func (r *Reloader) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.cert, nil
}

// Leaf is the certificate in service (for logs and tests).
func (r *Reloader) Leaf() *x509.Certificate {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.cert.Leaf
}

// ServerConfig is a TLS 1.2+ server configuration serving r's pair.
func (r *Reloader) ServerConfig() *tls.Config {
	return &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: r.GetCertificate}
}

// Run reloads the pair whenever a value arrives on hup (SIGHUP) or the
// files' contents change (checked every interval), until ctx ends. Every
// reload and every failure is logged (a failing content once).
func (r *Reloader) Run(ctx context.Context, interval time.Duration, hup <-chan os.Signal) {
	if interval <= 0 {
		interval = 2 * time.Second
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
		if _, _, sum, err := r.read(); err == nil {
			r.mu.RLock()
			unchanged := sum == r.loaded
			knownBad := sum == r.failed
			r.mu.RUnlock()
			if unchanged || (knownBad && !signalled) {
				continue
			}
		}
		changed, err := r.Reload()
		switch {
		case err != nil:
			r.log.WithError(err).Error("TLS certificate not reloaded; fix the files (the old certificate is still served)")
		case changed:
			l := r.Leaf()
			fields := logrus.Fields{"cert": r.certFile}
			if l != nil {
				fields["subject"], fields["not_after"] = l.Subject.String(), l.NotAfter.UTC().Format(time.RFC3339)
			}
			r.log.WithFields(fields).Info("TLS certificate reloaded")
		}
	}
}

// ClientConfig is a TLS 1.2+ client configuration that trusts the CA
// certificates in caFile (PEM), or the system roots when caFile is empty.
func ClientConfig(caFile string) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if caFile == "" {
		return cfg, nil
	}
	b, err := os.ReadFile(caFile)
	if err != nil {
		return nil, fmt.Errorf("CA file: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		return nil, fmt.Errorf("CA file %s holds no PEM certificate", caFile)
	}
	cfg.RootCAs = pool
	return cfg, nil
}
