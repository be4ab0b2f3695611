package docker

import (
	"encoding/json"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sparkpack/sparkpack/api"
)

// TestComposeSecurity checks the compose deployment's TLS and tokens:
// sparkpack serves TLS from the generated certificates and reaches the
// master over https trusting their CA; the master and every agent speak
// libprocess TLS with the same files; the tokens file parses; the Spark
// REST allowlist is the compose network and its port is published on
// loopback only; every SPARKPACK_* variable is one serve reads.
func TestComposeSecurity(t *testing.T) {
	compose := composeCommand(t)
	cf := resolved(t, compose)
	env := envFile(t)
	str := func(v any) string { s, _ := v.(string); return s }
	vols := func(name string) string {
		var b strings.Builder
		for _, v := range cf.Services[name].Volumes {
			b.Write(v)
			b.WriteByte(' ')
		}
		return b.String()
	}

	certs, ok := cf.Services["certs"]
	if !ok {
		t.Fatal("no certs service (sparkpack certs) writes the TLS certificates")
	}
	var cmd []string
	json.Unmarshal(certs.Command, &cmd)
	hosts := ""
	for i, a := range cmd {
		if a == "--hosts" && i+1 < len(cmd) {
			hosts = cmd[i+1]
		}
	}
	for _, h := range []string{"sparkpack", "mesos-master", "localhost"} {
		if !strings.Contains(","+hosts+",", ","+h+",") {
			t.Errorf("the certificate is not issued for %s (certs --hosts %q)", h, hosts)
		}
	}
	if len(cmd) == 0 || cmd[0] != "certs" || !strings.Contains(vols("certs"), "/certs") {
		t.Errorf("certs service: command %v, volumes %s", cmd, vols("certs"))
	}

	sp := cf.Services["sparkpack"]
	e := func(k string) string { return str(sp.Environment[k]) }
	if !strings.HasPrefix(e("SPARKPACK_TLS_CERT"), "/certs/") || !strings.HasPrefix(e("SPARKPACK_TLS_KEY"), "/certs/") || !strings.Contains(vols("sparkpack"), "/certs") {
		t.Errorf("sparkpack does not serve TLS from the certs volume: %q %q %s", e("SPARKPACK_TLS_CERT"), e("SPARKPACK_TLS_KEY"), vols("sparkpack"))
	}
	if !strings.HasPrefix(e("SPARKPACK_MESOS_MASTER"), "https://") || e("SPARKPACK_MESOS_CA_FILE") != "/certs/ca.pem" {
		t.Errorf("sparkpack does not reach the master over https with the CA: %q %q", e("SPARKPACK_MESOS_MASTER"), e("SPARKPACK_MESOS_CA_FILE"))
	}
	tokensPath := e("SPARKPACK_TOKENS_FILE")
	if tokensPath == "" || !strings.Contains(vols("sparkpack"), "sparkpack/tokens:"+tokensPath) {
		t.Errorf("SPARKPACK_TOKENS_FILE %q is not the mounted docker/sparkpack/tokens (%s)", tokensPath, vols("sparkpack"))
	}
	f, err := os.Open(filepath.Join("sparkpack", "tokens"))
	if err != nil {
		t.Fatal(err)
	}
	tokens, err := api.ParseTokens(f)
	f.Close()
	if err != nil || len(tokens.Warnings()) > 0 {
		t.Fatalf("docker/sparkpack/tokens: %v %v", err, tokens.Warnings())
	}
	names := strings.Join(tokens.Names(), " ")
	if !strings.Contains(names, "(admin)") || !strings.Contains(names, "(metrics)") {
		t.Errorf("the demo tokens should show an admin and a scrape-only token: %s", names)
	}

	allow, err := api.ParseAllowlist(e("SPARKPACK_SPARK_REST_ALLOW"))
	if err != nil || len(allow) == 0 {
		t.Fatalf("SPARKPACK_SPARK_REST_ALLOW %q: %v (tokens are configured: serve would refuse to start)", e("SPARKPACK_SPARK_REST_ALLOW"), err)
	}
	subnet, err := netip.ParsePrefix(env["NETWORK_SUBNET"])
	if err != nil {
		t.Fatalf("NETWORK_SUBNET %q: %v", env["NETWORK_SUBNET"], err)
	}
	for _, p := range allow {
		if !subnet.Contains(p.Addr()) || p.Bits() < subnet.Bits() {
			t.Errorf("the allowlist %s reaches beyond the compose network %s", p, subnet)
		}
	}
	if e("SPARKPACK_SPARK_REST_PLAINTEXT") != "true" {
		t.Error("Spark 3.5's spark-submit speaks http only: the Spark REST listener must stay plaintext (SPARKPACK_SPARK_REST_PLAINTEXT)")
	}
	for _, p := range sp.Ports {
		s := string(p)
		if strings.Contains(s, "7077") && !strings.Contains(s, "127.0.0.1") {
			t.Errorf("the Spark REST port is published beyond loopback: %s", s)
		}
	}

	// Every SPARKPACK_* variable is one serve reads (no typo silently ignored).
	src := ""
	matches, _ := filepath.Glob(filepath.Join("..", "cmd", "sparkpack", "*.go"))
	for _, m := range matches {
		if !strings.HasSuffix(m, "_test.go") {
			b, _ := os.ReadFile(m)
			src += string(b)
		}
	}
	for k := range sp.Environment {
		if strings.HasPrefix(k, "SPARKPACK_") && !strings.Contains(src, `"`+k+`"`) {
			t.Errorf("sparkpack's %s is read by no flag of serve", k)
		}
	}

	// The master and the agents: libprocess TLS from the certs volume.
	for name, s := range cf.Services {
		if name != "mesos-master" && !strings.HasPrefix(name, "agent-") {
			continue
		}
		if str(s.Environment["LIBPROCESS_SSL_ENABLED"]) != "true" || str(s.Environment["LIBPROCESS_SSL_SUPPORT_DOWNGRADE"]) != "true" {
			t.Errorf("%s: LIBPROCESS_SSL_ENABLED and _SUPPORT_DOWNGRADE must be true", name)
		}
		for _, k := range []string{"LIBPROCESS_SSL_CERT_FILE", "LIBPROCESS_SSL_KEY_FILE"} {
			if !strings.HasPrefix(str(s.Environment[k]), "/etc/mesos-tls/") {
				t.Errorf("%s: %s %q is not on the certs volume", name, k, s.Environment[k])
			}
		}
		if !strings.Contains(vols(name), "certs:/etc/mesos-tls") && !strings.Contains(vols(name), `"source":"certs"`) {
			t.Errorf("%s does not mount the certs volume: %s", name, vols(name))
		}
	}
	hc, _ := json.Marshal(cf.Services["mesos-master"].Healthcheck)
	if !strings.Contains(string(hc), "https://localhost:5050/health") || !strings.Contains(string(hc), "--cacert") {
		t.Errorf("the master's health check should go over TLS with the CA: %s", hc)
	}
}
