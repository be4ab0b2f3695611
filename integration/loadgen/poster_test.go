package loadgen

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

// The poster speaks HTTP/1.1 on one kept-alive connection: each post
// reaches the API's path (under the prefix of --api, if any) with its body
// and headers, and the answer's status and body come back; a zero timeout
// means no deadline, not an expired one.
func TestPosterPostsUnderTheAPIPrefix(t *testing.T) {
	type seen struct{ path, ct, auth, body string }
	got := make(chan seen, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- seen{r.URL.Path, r.Header.Get("Content-Type"), r.Header.Get("Authorization"), string(b)}
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte(`{"ok":true}`))
	}))
	defer srv.Close()
	for _, tc := range []struct{ api, want string }{
		{srv.URL, "/api/v1/jobs"},
		{srv.URL + "/sparkpack/", "/sparkpack/api/v1/jobs"},
	} {
		p := newPoster(tc.api, "tok", 0)
		if p == nil {
			t.Fatalf("no poster for %s", tc.api)
		}
		for i := 0; i < 2; i++ { // the second post reuses the connection
			code, body, err := p.post(context.Background(), "/api/v1/jobs", []byte(`{"id":"x"}`))
			if err != nil || code != http.StatusCreated || string(body) != `{"ok":true}` {
				t.Fatalf("%s: post %d: %d %q %v", tc.api, i, code, body, err)
			}
			s := <-got
			if s.path != tc.want || s.ct != "application/json" || s.auth != "Bearer tok" || s.body != `{"id":"x"}` {
				t.Fatalf("%s: server saw %+v, want path %s", tc.api, s, tc.want)
			}
		}
		p.close()
	}
	if newPoster("https://example.invalid", "", 0) != nil {
		t.Fatal("a poster for https (it speaks plain http only)")
	}
}
