package api

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/sparkpack/sparkpack/store"
)

func TestCheckQuery(t *testing.T) {
	for _, c := range []struct {
		raw   string
		field string // "-" accepted
		msg   string
	}{
		{"", "-", ""},
		{"state=QUEUED&state=RUNNING&label=team=a&limit=5&cursor=abc", "-", ""},
		{"label=team%3Da+b", "-", ""},
		{"&&limit=5&", "-", ""},
		{"label=a=%00", "label", "control characters"},
		{"label=%00=a", "label", "control characters"},
		{"label=a%0A", "label", "control characters"},
		{"label=%ff", "label", "UTF-8"},
		{"label=%zz", "label", "percent-encoding"},
		{"%zz=1", "", "not a parameter name"},
		{"%00=1", "", "not a parameter name"},
		{"=1", "", "not a parameter name"},
		{"limit=1;limit=2", "", "semicolon"},
		{"limit=1&limit=2", "limit", "more than once"},
		{"unknown=1", "unknown", "unknown query parameter"},
		{"Limit=1", "Limit", "unknown query parameter"},
		{"cursor=" + strings.Repeat("x", MaxQueryValueBytes+1), "cursor", "longer than"},
		{strings.Repeat("label=a&", MaxQueryBytes/8+1), "", "longer than"},
	} {
		v, err := CheckQuery(c.raw, listJobParams)
		if c.field == "-" {
			if err != nil {
				t.Errorf("%q refused: %v", c.raw, err)
			}
			want, _ := url.ParseQuery(c.raw)
			if len(want) != len(v) {
				t.Errorf("%q: values %v, url.ParseQuery %v", c.raw, v, want)
			}
			continue
		}
		qe, ok := err.(*QueryError)
		if !ok || qe.Field != c.field || !strings.Contains(qe.Msg, c.msg) {
			t.Errorf("%q: %v (%#v), want field %q and %q", c.raw, err, err, c.field, c.msg)
		}
	}
	if _, err := CheckQuery("x=1", noParams); err == nil || !strings.Contains(err.Error(), "takes no query parameters") {
		t.Errorf("a route without parameters: %v", err)
	}
}

// Every route reads its query string alike: a NUL, invalid UTF-8, a bad
// escape or an unknown parameter is a 400 naming the parameter, never a
// 500 (GET /api/v1/jobs?label=a=%00 answered 500 from PostgreSQL) nor
// ignored (GET /api/v1/cost ignored unknown parameters).
func TestEveryRouteChecksItsQuery(t *testing.T) {
	env := newEnv(t, func(c *Config) {
		c.Views = fixedViews{ClusterView{Agents: testAgents(3)}}
		c.Broker = NewBroker()
		c.Leader = func(context.Context) (any, error) { return map[string]any{"leader": "x"}, nil }
	})
	const id = "6f1d2c1e-8a7b-4c1d-9e2f-3a4b5c6d7e8f"
	routes := []struct{ method, path string }{
		{"GET", "/healthz"}, {"GET", "/readyz"}, {"POST", "/api/v1/jobs"}, {"GET", "/api/v1/jobs"},
		{"GET", "/api/v1/jobs/" + id}, {"DELETE", "/api/v1/jobs/" + id}, {"GET", "/api/v1/cluster"},
		{"GET", "/api/v1/queues"}, {"GET", "/api/v1/cost"}, {"GET", "/api/v1/events"},
		{"POST", "/api/v1/events/ticket"}, {"GET", "/api/v1/leader"},
	}
	for _, rt := range routes {
		for _, q := range []struct{ query, field string }{
			{"bogus=1", "bogus"},
			{"label=a=%00", "label"},
			{"label=%00=a", "label"},
			{"cursor=%ff", "cursor"},
			{"limit=%zz", "limit"},
			{"%00=1", ""},
		} {
			// The parameters a route takes are judged by their value.
			takes := map[string][]QueryParam{"/api/v1/jobs": listJobParams, "/api/v1/cluster": clusterParams,
				"/api/v1/queues": queuesParams, "/api/v1/events": eventParams}[rt.path]
			if rt.method != "GET" {
				takes = nil
			}
			field := q.field
			if field != "" {
				known := false
				for _, p := range takes {
					known = known || p.Name == field
				}
				if !known && q.query != "bogus=1" {
					field = strings.SplitN(q.query, "=", 2)[0]
				}
			}
			var body io.Reader
			ctype := ""
			if rt.method == "POST" {
				body, ctype = strings.NewReader(goodJob), "application/json"
			}
			resp, m := env.do(t, rt.method, rt.path+"?"+q.query, ctype, "", body)
			if resp.StatusCode != http.StatusBadRequest || m["field"] != field {
				t.Errorf("%s %s?%s: %d %v, want 400 naming %q", rt.method, rt.path, q.query, resp.StatusCode, m, field)
			}
		}
	}
	if jobs, _, _ := env.store.ListJobs(context.Background(), store.ListOptions{}); len(jobs) != 0 {
		t.Errorf("a refused request stored a job")
	}
	if strings.Contains(env.logs.String(), `"level":"error"`) {
		t.Errorf("a bad query logged an error: %s", env.logs.String())
	}
}

// FuzzCheckQuery: any query string is accepted or refused with a
// *QueryError; what is accepted holds only the route's parameters, as
// valid UTF-8 without control characters, and agrees with url.ParseQuery.
func FuzzCheckQuery(f *testing.F) {
	for _, s := range []string{"", "state=QUEUED,RUNNING&label=team=a&limit=5", "label=a=%00", "label=%00=a", "limit=%zz",
		"x=%ff", "a;b", "label=a&label=b", "cursor=" + strings.Repeat("%41", 50), "+=+&%2B=%2B"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		v, err := CheckQuery(raw, listJobParams)
		if err != nil {
			if _, ok := err.(*QueryError); !ok {
				t.Fatalf("%q: error of type %T", raw, err)
			}
			return
		}
		want, perr := url.ParseQuery(raw)
		if perr != nil {
			t.Fatalf("%q accepted, but url.ParseQuery refuses it: %v", raw, perr)
		}
		for k, vals := range v {
			if len(want[k]) != len(vals) {
				t.Fatalf("%q: %s = %q, url.ParseQuery says %q", raw, k, vals, want[k])
			}
			for _, s := range vals {
				if !utf8.ValidString(s) || strings.ContainsRune(s, 0) {
					t.Fatalf("%q: accepted value %q", raw, s)
				}
			}
		}
	})
}

// FuzzListQuery: the query of GET /api/v1/jobs, once accepted, parses
// into options PostgreSQL can take (no NUL, valid UTF-8, limit 1-1000),
// or into a 400 naming a parameter of the route.
func FuzzListQuery(f *testing.F) {
	for _, s := range []string{"state=queued,RUNNING", "label=team=a&label=b=", "limit=0", "limit=1000", "state=", "label==", "label=a=%00", "label=a=1&label=a=2", "team=a%20b", "team="} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		v, err := CheckQuery(raw, listJobParams)
		if err != nil {
			return
		}
		o, field, err := parseListQuery(v)
		if err != nil {
			if field != "state" && field != "label" && field != "limit" && field != "team" && field != "q" {
				t.Fatalf("%q: error %v names %q", raw, err, field)
			}
			return
		}
		if o.Limit < 0 || o.Limit > 1000 {
			t.Fatalf("%q: limit %d", raw, o.Limit)
		}
		if len(o.Labels) != len(v["label"]) {
			t.Fatalf("%q: %d label filters read as %v", raw, len(v["label"]), o.Labels)
		}
		for k, val := range o.Labels {
			if !cleanQueryText(k) || !cleanQueryText(val) {
				t.Fatalf("%q: label %q=%q", raw, k, val)
			}
		}
	})
}

// FuzzViewQueries: the queries of GET /api/v1/cluster and /api/v1/queues
// parse or are refused naming one of their parameters.
func FuzzViewQueries(f *testing.F) {
	for _, s := range []string{"limit=5&cursor=a&state=idle", "state=bogus", "limit=5001", "limit=-1", "cursor=%00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		if v, err := CheckQuery(raw, clusterParams); err == nil {
			q, field, err := parseClusterQuery(v)
			if err != nil && field != "limit" && field != "state" && field != "cursor" {
				t.Fatalf("cluster %q: error %v names %q", raw, err, field)
			}
			if err == nil && (q.Limit < 0 || q.Limit > MaxClusterPageLimit) {
				t.Fatalf("cluster %q: limit %d", raw, q.Limit)
			}
		}
		if v, err := CheckQuery(raw, queuesParams); err == nil {
			if _, field, err := parseQueuesQuery(v); err != nil && field != "limit" && field != "cursor" {
				t.Fatalf("queues %q: error %v names %q", raw, err, field)
			}
		}
	})
}
