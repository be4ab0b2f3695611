package offers

import (
	"context"
	"crypto/tls"
	"io"
	stdlog "log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/sparkpack/sparkpack/internal/tlsutil"
	"github.com/sparkpack/sparkpack/mesossim"
)

// serveTLS serves h over TLS with a certificate for 127.0.0.1 issued by ca.
func serveTLS(t *testing.T, ca *tlsutil.CA, h http.Handler) string {
	t.Helper()
	certPEM, keyPEM, err := ca.Issue([]string{"127.0.0.1"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h, ErrorLog: stdlog.New(io.Discard, "", 0)}
	go srv.Serve(tls.NewListener(ln, &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{pair}}))
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

// TestMasterOverTLS: the operator API of the (emulated) master over
// https with a CA generated here, through a leader redirect; a client
// without the CA, or an http:// master with a CA file, is refused.
func TestMasterOverTLS(t *testing.T) {
	ca, err := tlsutil.NewCA("test Mesos CA", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	quiet := logrus.New()
	quiet.SetOutput(io.Discard)
	m, err := mesossim.New(mesossim.Config{Logger: quiet, DisableSpark: true})
	if err != nil {
		t.Fatal(err)
	}
	m.Start()
	defer m.Close()
	leader := serveTLS(t, ca, m.Handler())
	// A non-leading master redirects to the leader, as Mesos does (//host:port/path).
	follower := serveTLS(t, ca, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", "//"+leader+r.URL.Path)
		w.WriteHeader(http.StatusTemporaryRedirect)
	}))
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(caFile, ca.CertPEM(), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := tlsutil.ClientConfig(caFile)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	for _, master := range []string{"https://" + follower, follower} { // host:port with a CA means https
		ep, err := NewEndpoint(master, "sparkpack", "secret", WithTLS(cfg))
		if err != nil {
			t.Fatal(err)
		}
		agents, err := NewOperator(ep).GetAgents(ctx)
		if err != nil {
			t.Fatalf("GET_AGENTS over TLS via %s: %v", master, err)
		}
		if len(agents) != 14 {
			t.Fatalf("%d agents, want the 14 of thesis14", len(agents))
		}
		if !ep.TLS() || ep.Base() != "https://"+leader {
			t.Fatalf("after the redirect the endpoint is %s (TLS %v), want https://%s", ep.Base(), ep.TLS(), leader)
		}
	}

	// Without the CA: refused by certificate verification.
	plain, _ := NewEndpoint("https://"+leader, "", "")
	if _, err := NewOperator(plain).GetAgents(ctx); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("a client without the CA: %v", err)
	}
	if _, err := NewEndpoint("http://"+leader, "", "", WithTLS(cfg)); err == nil || !strings.Contains(err.Error(), "https://") {
		t.Fatalf("http:// with a CA file: %v", err)
	}
}
