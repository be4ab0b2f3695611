package tlsutil

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"io"
	stdlog "log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/sparkpack/sparkpack/internal/syncbuf"
)

func write(t *testing.T, path string, b []byte) {
	t.Helper()
	// Write then rename, as certificate managers do.
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

func issue(t *testing.T, ca *CA, hosts ...string) ([]byte, []byte) {
	t.Helper()
	c, k, err := ca.Issue(hosts, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return c, k
}

func serialOf(t *testing.T, certPEM []byte) string {
	t.Helper()
	b, _ := pem.Decode(certPEM)
	c, err := x509.ParseCertificate(b.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return c.SerialNumber.String()
}

// served returns the serial of the certificate the server presents.
func served(t *testing.T, url string, client *http.Client) (string, error) {
	t.Helper()
	resp, err := client.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, resp.Body)
	return resp.TLS.PeerCertificates[0].SerialNumber.String(), nil
}

func waitServed(t *testing.T, url string, client *http.Client, want string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		got, err := served(t, url, client)
		if err == nil && got == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("server still presents %s (%v), want %s", got, err, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestTLSRoundTripAndReload: a client trusting only the test CA talks to a
// server whose pair reloads when the files change and on SIGHUP; a broken
// pair leaves the old one in service; a client that does not trust the CA
// is refused.
func TestTLSRoundTripAndReload(t *testing.T) {
	ca, err := NewCA("sparkpack test CA", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile, caFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key"), filepath.Join(dir, "ca.pem")
	c1, k1 := issue(t, ca, "127.0.0.1", "localhost")
	write(t, certFile, c1)
	write(t, keyFile, k1)
	write(t, caFile, ca.CertPEM())

	logs := &syncbuf.Buffer{}
	log := logrus.New()
	log.SetOutput(logs)
	r, err := NewReloader(certFile, keyFile, log)
	if err != nil {
		t.Fatal(err)
	}
	// Not httptest's StartTLS: it would add its own certificate, which wins
	// over GetCertificate for clients that send no server name.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") }), ErrorLog: stdlog.New(io.Discard, "", 0)}
	go hs.Serve(tls.NewListener(ln, r.ServerConfig()))
	defer hs.Close()
	srv := struct{ URL string }{"https://" + ln.Addr().String()}

	ccfg, err := ClientConfig(caFile)
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: ccfg, DisableKeepAlives: true}, Timeout: 10 * time.Second}
	if got, err := served(t, srv.URL, client); err != nil || got != serialOf(t, c1) {
		t.Fatalf("first pair: %s %v", got, err)
	}
	// Plain http to the TLS port fails; a client with the system roots does not trust the test CA.
	if resp, err := http.Get(strings.Replace(srv.URL, "https", "http", 1)); err == nil && resp.StatusCode == 200 {
		t.Fatal("plain http accepted on the TLS listener")
	}
	sys, _ := ClientConfig("")
	if _, err := (&http.Client{Transport: &http.Transport{TLSClientConfig: sys}}).Get(srv.URL); err == nil {
		t.Fatal("a client without the test CA trusted the server")
	}

	ctx, cancel := context.WithCancel(context.Background())
	hup := make(chan os.Signal, 1)
	done := make(chan struct{})
	go func() { defer close(done); r.Run(ctx, 20*time.Millisecond, hup) }()

	// File change.
	c2, k2 := issue(t, ca, "127.0.0.1")
	write(t, keyFile, k2)
	write(t, certFile, c2)
	waitServed(t, srv.URL, client, serialOf(t, c2))

	// A broken pair: the old one stays, the failure is logged once.
	write(t, keyFile, []byte("not a key"))
	time.Sleep(200 * time.Millisecond)
	if got, err := served(t, srv.URL, client); err != nil || got != serialOf(t, c2) {
		t.Fatalf("after a broken key: %s %v", got, err)
	}
	if n := strings.Count(logs.String(), "TLS certificate not reloaded"); n != 1 {
		t.Fatalf("broken pair logged %d times:\n%s", n, logs)
	}
	cancel()
	<-done

	// SIGHUP only (the poll is too slow to notice).
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	go r.Run(ctx, time.Hour, hup)
	c3, k3 := issue(t, ca, "127.0.0.1")
	write(t, certFile, c3)
	write(t, keyFile, k3)
	if got, _ := served(t, srv.URL, client); got != serialOf(t, c2) {
		t.Fatalf("reloaded before the signal: %s", got)
	}
	hup <- syscall.SIGHUP
	waitServed(t, srv.URL, client, serialOf(t, c3))
	if !strings.Contains(logs.String(), "TLS certificate reloaded") {
		t.Error("reloads are not logged")
	}
}

func TestNewReloaderErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := NewReloader("", "", nil); err == nil || !strings.Contains(err.Error(), "--tls-key") {
		t.Fatalf("missing files: %v", err)
	}
	if _, err := NewReloader(filepath.Join(dir, "none.crt"), filepath.Join(dir, "none.key"), nil); err == nil {
		t.Fatal("missing files accepted")
	}
	ca, _ := NewCA("x", time.Hour)
	c, _ := issue(t, ca, "a")
	_, k := issue(t, ca, "b")
	write(t, filepath.Join(dir, "c"), c)
	write(t, filepath.Join(dir, "k"), k)
	if _, err := NewReloader(filepath.Join(dir, "c"), filepath.Join(dir, "k"), nil); err == nil {
		t.Fatal("mismatched pair accepted")
	} else if msg := err.Error(); !strings.Contains(msg, "--tls-cert") || strings.Contains(msg, "previous pair") {
		// At start there is no previous pair: the error names the flags
		// (it said "the previous pair stays in service").
		t.Fatalf("a bad pair at start: %q; want the flags named and no previous pair", msg)
	}
	write(t, filepath.Join(dir, "ca"), []byte("junk"))
	if _, err := ClientConfig(filepath.Join(dir, "ca")); err == nil {
		t.Fatal("a CA file without certificates accepted")
	}
	if _, _, err := ca.Issue(nil, time.Hour); err == nil {
		t.Fatal("certificate without hosts")
	}
	if _, err := tls.X509KeyPair(c, k); err == nil {
		t.Fatal("test setup: pair should not match")
	}
}
