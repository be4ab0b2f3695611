package api

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/sparkpack/sparkpack/internal/pgtest"
	"github.com/sparkpack/sparkpack/store"
)

// BenchmarkCreateJob: POST /api/v1/jobs from 64 concurrent clients over
// HTTP against a real PostgreSQL (the scratch server: fsync off, so this
// measures sparkpack's own cost per submission; scripts/bench-scale.sh
// measures durable submissions). Profile with -cpuprofile.
func BenchmarkCreateJob(b *testing.B) {
	quiet := logrus.New()
	quiet.SetOutput(io.Discard)
	st, err := store.Open(context.Background(), pgtest.URL(b), store.WithLogger(quiet))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	srv := httptest.NewServer(New(Config{Store: st, Log: quiet, DBTimeout: 5 * time.Second}).Handler())
	defer srv.Close()
	tr := &http.Transport{MaxIdleConnsPerHost: 128}
	client := &http.Client{Transport: tr}
	b.SetParallelism(32) // 64 clients on 2 cores
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			resp, err := client.Post(srv.URL+"/api/v1/jobs", "application/json", strings.NewReader(goodJob))
			if err != nil {
				b.Error(err)
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusCreated {
				b.Errorf("status %d", resp.StatusCode)
				return
			}
		}
	})
}
