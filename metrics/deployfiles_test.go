package metrics

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"go.yaml.in/yaml/v3"
)

// servedNames lists every metric family sparkpack's registry can serve,
// with the series names of histograms (_bucket, _sum, _count).
func servedNames(t *testing.T) map[string]bool {
	t.Helper()
	m := New(outcomes{met: 1, missed: 1})
	names := map[string]bool{}
	fq := regexp.MustCompile(`fqName: "([^"]+)"`)
	var walk func(v reflect.Value)
	walk = func(v reflect.Value) {
		for i := 0; i < v.NumField(); i++ {
			f := v.Field(i)
			if !v.Type().Field(i).IsExported() {
				continue
			}
			if f.Kind() == reflect.Struct {
				walk(f)
				continue
			}
			c, ok := f.Interface().(prometheus.Collector)
			if !ok || f.IsNil() {
				continue
			}
			ch := make(chan *prometheus.Desc, 16)
			go func() { c.Describe(ch); close(ch) }()
			for d := range ch {
				if mm := fq.FindStringSubmatch(d.String()); mm != nil {
					names[mm[1]] = true
				}
			}
		}
	}
	walk(reflect.ValueOf(m).Elem())
	fams, err := m.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		names[f.GetName()] = true
	}
	for n := range names {
		for _, s := range []string{"_bucket", "_sum", "_count"} {
			names[n+s] = true
		}
	}
	return names
}

// TestDeployFilesNameRealMetrics: the alert rules, the Grafana dashboard
// and the scrape configuration in docs/deploy name only metrics sparkpack
// serves, so a renamed metric cannot leave an alert that never fires.
func TestDeployFilesNameRealMetrics(t *testing.T) {
	served := servedNames(t)
	if !served["sparkpack_jobs"] || !served["sparkpack_deadline_jobs_ended_total"] || !served["sparkpack_placement_seconds_bucket"] {
		t.Fatalf("the registry walk missed metrics: %v", served)
	}
	files, _ := filepath.Glob("../docs/deploy/*")
	ref := regexp.MustCompile(`sparkpack_[a-z_]+`)
	checked := 0
	for _, f := range files {
		if !strings.HasSuffix(f, ".yml") && !strings.HasSuffix(f, ".json") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range ref.FindAllString(string(b), -1) {
			if name == "sparkpack_" || strings.HasPrefix(name, "sparkpack_prune") {
				continue
			}
			checked++
			if !served[name] {
				t.Errorf("%s names %s, which sparkpack does not serve", filepath.Base(f), name)
			}
		}
	}
	if checked < 20 {
		t.Fatalf("only %d metric references checked in docs/deploy: the files moved?", checked)
	}
}

// TestDeployFilesParse: the YAML and JSON files are well-formed and the
// alert rules have the fields Prometheus requires.
func TestDeployFilesParse(t *testing.T) {
	var rules struct {
		Groups []struct {
			Name  string
			Rules []struct {
				Alert, Expr string
				Labels      map[string]string
			}
		}
	}
	b, err := os.ReadFile("../docs/deploy/alerts.yml")
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, &rules); err != nil || len(rules.Groups) == 0 {
		t.Fatalf("alerts.yml: %v", err)
	}
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			if r.Alert == "" || strings.TrimSpace(r.Expr) == "" || r.Labels["severity"] == "" {
				t.Errorf("alerts.yml: rule %+v lacks alert, expr or a severity", r)
			}
		}
	}
	var any map[string]any
	for _, f := range []string{"prometheus.yml"} {
		b, _ := os.ReadFile("../docs/deploy/" + f)
		if err := yaml.Unmarshal(b, &any); err != nil || len(any) == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	for _, f := range []string{"grafana-dashboard.json", "marathon.json"} {
		b, _ := os.ReadFile("../docs/deploy/" + f)
		if err := json.Unmarshal(b, &any); err != nil || len(any) == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
}
