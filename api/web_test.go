package api

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/sirupsen/logrus"
)

// TestStaticAnswersHostilePathsWithJSON4xx: the dashboard's assets are
// served; any other path under /static/ (odd bytes, escapes, folders) gets
// a 4xx with a JSON body naming the path, never a 5xx or a folder listing.
func TestStaticAnswersHostilePathsWithJSON4xx(t *testing.T) {
	quiet := logrus.New()
	quiet.SetOutput(io.Discard)
	srv := httptest.NewServer(New(Config{Dashboard: true, Log: quiet}).Handler())
	defer srv.Close()
	for _, tc := range []struct {
		path string
		want int
	}{
		{"/static/app.js", 200},
		{"/static/app.js%ff%fe", 404},
		{"/static/%ff", 404},
		{"/static/", 404},
		{"/static/nope.js", 404},
		{"/static/%00", 404},
		{"/static/app.js%00", 404},
		{"/static/..%2f..%2fetc%2fpasswd", 404},
		{"/static/./app.js", 200},
		{"/static//app.js", 200},
	} {
		t.Run(tc.path, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodGet, srv.URL+tc.path, nil)
			req.URL.Opaque = tc.path // as sent, not cleaned by the client
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.want {
				t.Fatalf("GET %s: %d %q, want %d", tc.path, resp.StatusCode, body, tc.want)
			}
			if tc.want == 200 {
				if !strings.Contains(resp.Header.Get("Content-Type"), "javascript") {
					t.Fatalf("GET %s: Content-Type %q", tc.path, resp.Header.Get("Content-Type"))
				}
				return
			}
			var e struct {
				Error string `json:"error"`
				Field string `json:"field"`
			}
			if err := json.Unmarshal(body, &e); err != nil || e.Error == "" {
				t.Fatalf("GET %s: body %q is not a JSON error (%v)", tc.path, body, err)
			}
		})
	}
}
