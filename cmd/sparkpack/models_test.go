package main

import (
	"encoding/json"
	"io"
	"math"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/sirupsen/logrus"

	"github.com/sparkpack/sparkpack/api"
	"github.com/sparkpack/sparkpack/perfmodel"
)

// TestModelsCommand: `sparkpack models` shows what the API serves, in
// every output format, for all signatures or one (by id, by a signature
// without slashes, or by one with slashes).
func TestModelsCommand(t *testing.T) {
	const sig = "local:///jobs/etl.jar#com.example.ETL"
	m := api.NewBookModels(nil)
	for i := 0; i < 12; i++ {
		e := 1 + i%6
		if err := m.Observe(sig, "", perfmodel.Run{Executors: e, Size: 1, Seconds: 200*math.Pow(float64(e), -0.9) + 15}); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.Observe("adhoc", "", perfmodel.Run{Executors: 2, Size: 1, Seconds: 40}); err != nil {
		t.Fatal(err)
	}
	quiet := logrus.New()
	quiet.SetOutput(io.Discard)
	srv := httptest.NewServer(api.New(api.Config{Models: m, Log: quiet}).Handler())
	defer srv.Close()

	code, out, errOut := runCmd(t, "models", "--server", srv.URL)
	if code != 0 || !strings.Contains(out, "SIGNATURE") || !strings.Contains(out, sig) || !strings.Contains(out, "adhoc") ||
		!strings.Contains(out, "signature") || !strings.Contains(out, "1:215") {
		t.Fatalf("models: %d\n%s\n%s", code, out, errOut)
	}
	code, out, _ = runCmd(t, "models", "--server", srv.URL, "-o", "wide", "--executors", "1,3")
	if code != 0 || !strings.Contains(out, "SHUFFLE COST") || !strings.Contains(out, "3:") || strings.Contains(out, "16:") {
		t.Fatalf("models -o wide: %d\n%s", code, out)
	}
	code, out, _ = runCmd(t, "models", "--server", srv.URL, "-o", "name")
	if code != 0 || out != "adhoc\n"+sig+"\n" {
		t.Fatalf("models -o name: %d %q", code, out)
	}
	var all api.ModelsView
	code, out, _ = runCmd(t, "models", "--server", srv.URL, "-o", "json")
	if code != 0 || json.Unmarshal([]byte(out), &all) != nil || len(all.Models) != 2 {
		t.Fatalf("models -o json: %d %s", code, out)
	}
	var one api.ModelView
	code, out, _ = runCmd(t, "models", "--server", srv.URL, all.Models[1].ID, "-o", "json")
	if code != 0 || json.Unmarshal([]byte(out), &one) != nil || one.Signature != sig || one.Runs != 12 {
		t.Fatalf("models ID -o json: %d %s", code, out)
	}
	// The start of an id is enough, as for sparkpack job.
	one = api.ModelView{}
	code, out, _ = runCmd(t, "models", "--server", srv.URL, all.Models[1].ID[:6], "-o", "json")
	if code != 0 || json.Unmarshal([]byte(out), &one) != nil || one.Signature != sig {
		t.Fatalf("models ID-PREFIX -o json: %d %s", code, out)
	}
	code, out, _ = runCmd(t, "models", "--server", srv.URL, sig, "-o", "yaml")
	if code != 0 || !strings.Contains(out, "signature: "+sig) || strings.Contains(out, "adhoc") {
		t.Fatalf("models SIGNATURE -o yaml: %d %s", code, out)
	}
	code, _, errOut = runCmd(t, "models", "--server", srv.URL, "nosuch")
	if code == 0 || !strings.Contains(errOut, "nosuch") {
		t.Fatalf("models nosuch: %d %s", code, errOut)
	}
	code, _, errOut = runCmd(t, "models", "--server", srv.URL, "--executors", "0")
	if code == 0 || !strings.Contains(errOut, "executors") {
		t.Fatalf("models --executors 0: %d %s", code, errOut)
	}
}
