package main

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"strings"
	"testing"
)

// deployEnv reads the SPARKPACK_* settings of an example deployment file:
// docs/deploy/sparkpack.env (KEY=VALUE lines; commented ones are
// optional) or the "env" of docs/deploy/marathon.json (a secret stands
// for its value).
func deployEnv(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	env := map[string]string{}
	if strings.HasSuffix(path, ".json") {
		var app struct {
			Cmd string                     `json:"cmd"`
			Env map[string]json.RawMessage `json:"env"`
		}
		b, _ := io.ReadAll(f)
		if err := json.Unmarshal(b, &app); err != nil {
			t.Fatal(err)
		}
		for k, raw := range app.Env {
			var v string
			if json.Unmarshal(raw, &v) != nil {
				v = "postgres://sparkpack:secret@db:5432/sparkpack" // a Marathon secret: the database URL
			}
			env[k] = v
		}
		return env
	}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			t.Fatalf("%s: %q is not KEY=VALUE", path, line)
		}
		env[k] = v
	}
	return env
}

// TestDeployExamplesPassServesChecks: the settings of the example
// deployments (systemd's sparkpack.env, Marathon's app) are ones serve
// starts with, and their Spark REST listener is one spark-submit can use.
// Both set a tokens file and the Spark REST listener without
// --spark-rest-allow, so serve refused to start with them ("needs
// --spark-rest-allow"), and with TLS the listener served https, which
// Spark 3.5's spark-submit cannot speak.
func TestDeployExamplesPassServesChecks(t *testing.T) {
	for _, path := range []string{"../../docs/deploy/sparkpack.env", "../../docs/deploy/marathon.json"} {
		t.Run(path, func(t *testing.T) {
			env := deployEnv(t, path)
			for k, v := range env {
				if !strings.HasPrefix(k, "SPARKPACK_") {
					continue
				}
				t.Setenv(k, v)
			}
			var c serveConfig
			fs := serveFlags("serve", io.Discard, &c)
			if err := parseFlags(fs, nil); err != nil {
				t.Fatalf("flags from %s: %v", path, err)
			}
			if err := c.validate(); err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			if err := c.checkSparkRestAllow(c.tokensFile != ""); err != nil {
				t.Fatalf("%s: serve refuses to start: %v", path, err)
			}
			if c.sparkRestListen != "" && c.tlsCert != "" && !c.sparkRestPlaintext {
				t.Fatalf("%s: the Spark REST listener serves TLS, which Spark 3.5's spark-submit cannot use: set SPARKPACK_SPARK_REST_PLAINTEXT=true", path)
			}
		})
	}
}
