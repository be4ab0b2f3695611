package main

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/sparkpack/sparkpack/internal/pgtest"
	"github.com/sparkpack/sparkpack/internal/tlsutil"
)

const securityTokens = `ci:ci-token-0123456789abcdef:submit,cancel
prom:prom-token-0123456789abcde:metrics
`

const sparkCreate = `{"action":"CreateSubmissionRequest","appArgs":["100"],"appResource":"local:///opt/spark/examples/jars/spark-examples.jar",
"clientSparkVersion":"3.5.8","environmentVariables":{},"mainClass":"org.apache.spark.examples.SparkPi",
"sparkProperties":{"spark.app.name":"Spark Pi","spark.executor.instances":"1","spark.master":"mesos://sparkpack:7077","spark.submit.deployMode":"cluster"}}`

// secureServe starts serve with tokens and a Spark REST listener; mod
// adjusts the configuration before it is validated.
func secureServe(t *testing.T, mod func(*serveConfig)) (api, spark string) {
	t.Helper()
	log := logrus.New()
	log.SetOutput(io.Discard)
	return secureServeLog(t, log, mod)
}

// secureServeLog is secureServe logging to log.
func secureServeLog(t *testing.T, log *logrus.Logger, mod func(*serveConfig)) (api, spark string) {
	t.Helper()
	dir := t.TempDir()
	tokens := filepath.Join(dir, "tokens")
	if err := os.WriteFile(tokens, []byte(securityTokens), 0o600); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	sln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := serveConfig{databaseURL: pgtest.URL(t), listen: ln.Addr().String(), policy: "bfd", logLevel: "info",
		shutdownTimeout: 5 * time.Second, tokensFile: tokens, protectReads: true,
		sparkRestListen: sln.Addr().String(), sparkRestLn: sln, sparkRestAllow: "127.0.0.1",
		rateLimit: "50", rateBurst: "500", maxWaiting: "0", tlsReload: 50 * time.Millisecond,
		mesos: mesosConfig{admission: "reject", reserveMode: "operator"}}
	if mod != nil {
		mod(&c)
	}
	if err := c.validate(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- serve(ctx, c, log, ln, ready) }()
	select {
	case addr := <-ready:
		t.Cleanup(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("serve: %v", err)
			}
		})
		return addr, sln.Addr().String()
	case err := <-done:
		cancel()
		t.Fatalf("serve stopped: %v", err)
	case <-time.After(60 * time.Second):
		cancel()
		t.Fatal("serve did not start")
	}
	return "", ""
}

func send(t *testing.T, client *http.Client, method, url, token, body string) (int, string, http.Header) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, _ := http.NewRequest(method, url, rd)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

// TestServeTLSAndTokens runs serve with TLS on both listeners (a CA made
// here), tokens, --protect-reads and an allowlist: the API and the Spark
// REST listener answer over https to a client trusting the CA, refuse
// without a token, /metrics needs a token and counts the refusals, and a
// new certificate on disk is served without a restart.
func TestServeTLSAndTokens(t *testing.T) {
	ca, err := tlsutil.NewCA("serve test CA", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile, caFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key"), filepath.Join(dir, "ca.pem")
	writePair := func() string {
		c, k, err := ca.Issue([]string{"127.0.0.1", "localhost"}, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(keyFile+".new", k, 0o600)
		os.WriteFile(certFile+".new", c, 0o600)
		os.Rename(keyFile+".new", keyFile)
		os.Rename(certFile+".new", certFile)
		pair, _ := tls.X509KeyPair(c, k)
		return string(pair.Certificate[0])
	}
	first := writePair()
	os.WriteFile(caFile, ca.CertPEM(), 0o600)
	addr, sparkAddr := secureServe(t, func(c *serveConfig) { c.tlsCert, c.tlsKey = certFile, keyFile })

	tc, err := tlsutil.ClientConfig(caFile)
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: tc, DisableKeepAlives: true}, Timeout: 20 * time.Second}
	base := "https://" + addr
	job := `{"app":{"appResource":"local:///a.jar","mainClass":"a.B"},"executors":1,"executorCores":1,"executorMemoryMB":1024}`
	if code, body, _ := send(t, client, "POST", base+"/api/v1/jobs", "", job); code != 401 {
		t.Fatalf("submit without a token over TLS: %d %s", code, body)
	}
	if code, body, _ := send(t, client, "POST", base+"/api/v1/jobs", "ci-token-0123456789abcdef", job); code != 201 {
		t.Fatalf("submit with a token over TLS: %d %s", code, body)
	}
	if resp, err := http.Get("http://" + addr + "/healthz"); err == nil {
		resp.Body.Close()
		if resp.StatusCode == 200 {
			t.Fatal("plain http answered on the TLS listener")
		}
	}
	// Spark REST over TLS from the allowlisted address, without a token.
	if code, body, _ := send(t, client, "POST", "https://"+sparkAddr+"/v1/submissions/create", "", sparkCreate); code != 200 || !strings.Contains(body, `"success": true`) {
		t.Fatalf("Spark REST create over TLS from the allowlist: %d %s", code, body)
	}
	// /metrics under --protect-reads.
	if code, _, _ := send(t, client, "GET", base+"/metrics", "", ""); code != 401 {
		t.Fatalf("/metrics without a token: %d", code)
	}
	if code, _, _ := send(t, client, "GET", base+"/metrics", "ci-token-0123456789abcdef", ""); code != 403 {
		t.Fatalf("/metrics with a token without read or metrics: %d", code)
	}
	code, body, _ := send(t, client, "GET", base+"/metrics", "prom-token-0123456789abcde", "")
	if code != 200 || !strings.Contains(body, `sparkpack_requests_refused_total{listener="api",reason="no_credentials"} 2`) ||
		!strings.Contains(body, `sparkpack_requests_refused_total{listener="api",reason="missing_scope"} 1`) {
		t.Fatalf("/metrics with the scrape token: %d\n%s", code, grepLines(body, "refused"))
	}
	// A new pair on disk is served without a restart.
	second := writePair()
	deadline := time.Now().Add(20 * time.Second)
	for {
		conn, err := tls.Dial("tcp", addr, tc)
		if err == nil {
			got := string(conn.ConnectionState().PeerCertificates[0].Raw)
			conn.Close()
			if got == second {
				break
			}
			if got != first {
				t.Fatal("served a certificate that is neither the old nor the new one")
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the new certificate was not picked up (%v)", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// TestServeSparkRESTPlaintextAndRate: with --spark-rest-plaintext the
// Spark listener stays on http (for stock spark-submit) while the API is
// on TLS; the rate limit answers 429 with Retry-After.
func TestServeSparkRESTPlaintextAndRate(t *testing.T) {
	ca, _ := tlsutil.NewCA("serve test CA", time.Hour)
	dir := t.TempDir()
	c, k, _ := ca.Issue([]string{"127.0.0.1"}, time.Hour)
	os.WriteFile(filepath.Join(dir, "c"), c, 0o600)
	os.WriteFile(filepath.Join(dir, "k"), k, 0o600)
	_, spark := secureServe(t, func(sc *serveConfig) {
		sc.tlsCert, sc.tlsKey, sc.sparkRestPlaintext = filepath.Join(dir, "c"), filepath.Join(dir, "k"), true
		sc.rateLimit, sc.rateBurst = "0.001", "1"
	})
	client := &http.Client{Timeout: 20 * time.Second}
	if code, body, _ := send(t, client, "POST", "http://"+spark+"/v1/submissions/create", "", sparkCreate); code != 200 {
		t.Fatalf("plain http Spark REST create: %d %s", code, body)
	}
	code, body, hdr := send(t, client, "POST", "http://"+spark+"/v1/submissions/create", "", sparkCreate)
	if code != 429 || hdr.Get("Retry-After") == "" || !strings.Contains(body, "ErrorResponse") {
		t.Fatalf("second create past --rate-burst 1: %d %v %s", code, hdr, body)
	}
}

// TestServeStartupChecks: tokens with a Spark REST listener and no
// --spark-rest-allow refuse to start, saying what to set; bad values of
// the new flags are named.
func TestServeStartupChecks(t *testing.T) {
	dir := t.TempDir()
	tokens := filepath.Join(dir, "tokens")
	os.WriteFile(tokens, []byte(securityTokens), 0o600)
	code, _, errOut := runCmd(t, "serve", "--database-url", "postgres://127.0.0.1:1/x", "--listen", "127.0.0.1:0",
		"--tokens-file", tokens, "--spark-rest-listen", "127.0.0.1:0")
	if code != 1 || !strings.Contains(errOut, "--spark-rest-allow") || !strings.Contains(errOut, "none") {
		t.Fatalf("tokens + Spark REST without an allowlist: %d %s", code, errOut)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--tls-cert", "x.pem"}, "--tls-key"},
		{[]string{"--spark-rest-allow", "10.0.0.0/33"}, "--spark-rest-allow"},
		{[]string{"--rate-limit", "fast"}, "--rate-limit"},
		{[]string{"--rate-burst", "0"}, "--rate-burst"},
		{[]string{"--max-waiting-per-token", "-1"}, "--max-waiting-per-token"},
		{[]string{"--mesos-ca-file", "ca.pem"}, "--mesos-master"},
		{[]string{"--allow-spark-conf", "spark.mesos.role"}, "--allow-spark-conf spark.mesos.role: sparkpack sets this property itself"},
		{[]string{"--allow-spark-conf", "spark.eventLog.enabled"}, "--allow-spark-conf spark.eventLog.enabled: jobs may set"},
		{[]string{"--allow-env", "LDPRELOAD"}, "--allow-env LDPRELOAD"},
		{[]string{"--tls-cert", filepath.Join(dir, "none.crt"), "--tls-key", filepath.Join(dir, "none.key")}, "none.crt"},
	} {
		args := append([]string{"serve", "--database-url", "postgres://127.0.0.1:1/x", "--listen", "127.0.0.1:0"}, c.args...)
		code, _, errOut := runCmd(t, args...)
		if code != 1 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: %d %q, want an error naming %s", c.args, code, errOut, c.want)
		}
	}
}

// TestCertsAndHealth: sparkpack certs writes a CA and a server pair that
// serve uses and clients trusting ca.pem accept; a second run keeps them;
// sparkpack health probes the TLS listener as the image's HEALTHCHECK does.
func TestCertsAndHealth(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "certs")
	code, out, errOut := runCmd(t, "certs", "--dir", dir, "--hosts", "sparkpack,127.0.0.1", "--days", "2")
	if code != 0 || !strings.Contains(out, "wrote") {
		t.Fatalf("certs: %d %s %s", code, out, errOut)
	}
	for name, mode := range map[string]os.FileMode{"ca.pem": 0o644, "ca-key.pem": 0o600, "server.pem": 0o644, "server-key.pem": 0o600} {
		st, err := os.Stat(filepath.Join(dir, name))
		if err != nil || st.Mode().Perm() != mode {
			t.Fatalf("%s: %v mode %v, want %v", name, err, st.Mode().Perm(), mode)
		}
	}
	before, _ := os.ReadFile(filepath.Join(dir, "server.pem"))
	if code, out, _ := runCmd(t, "certs", "--dir", dir); code != 0 || !strings.Contains(out, "kept") {
		t.Fatalf("second run: %d %s", code, out)
	}
	after, _ := os.ReadFile(filepath.Join(dir, "server.pem"))
	if string(before) != string(after) {
		t.Fatal("a second run replaced the certificate")
	}
	os.Remove(filepath.Join(dir, "ca-key.pem"))
	if code, _, errOut := runCmd(t, "certs", "--dir", dir); code != 1 || !strings.Contains(errOut, "--force") {
		t.Fatalf("partial directory: %d %s", code, errOut)
	}

	addr, _ := secureServe(t, func(c *serveConfig) {
		c.tlsCert, c.tlsKey = filepath.Join(dir, "server.pem"), filepath.Join(dir, "server-key.pem")
	})
	tc, err := tlsutil.ClientConfig(filepath.Join(dir, "ca.pem"))
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: tc}, Timeout: 20 * time.Second}
	if code, body, _ := send(t, client, "GET", "https://"+addr+"/healthz", "", ""); code != 200 {
		t.Fatalf("healthz with the generated CA: %d %s", code, body)
	}
	t.Setenv("SPARKPACK_HEALTH_PORT", "")
	t.Setenv("SPARKPACK_LISTEN", addr)
	t.Setenv("SPARKPACK_TLS_CERT", filepath.Join(dir, "server.pem"))
	if code, out, errOut := runCmd(t, "health", "--path", "/healthz"); code != 0 || !strings.Contains(out, "200") {
		t.Fatalf("health over TLS: %d %s %s", code, out, errOut)
	}
	t.Setenv("SPARKPACK_TLS_CERT", "")
	if code, _, _ := runCmd(t, "health"); code == 0 {
		t.Fatal("health over plain http against the TLS listener succeeded")
	}
}
