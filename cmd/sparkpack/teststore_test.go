package main

import (
	"context"
	"io"
	"testing"

	"github.com/sirupsen/logrus"

	"github.com/sparkpack/sparkpack/internal/pgtest"
	"github.com/sparkpack/sparkpack/store"
)

// quietStore opens the test database's store with a logger that writes
// nothing, closed when the test ends; the logger is for the test's other
// parts.
func quietStore(ctx context.Context, t *testing.T) (*store.Store, *logrus.Logger) {
	t.Helper()
	log := logrus.New()
	log.SetOutput(io.Discard)
	st, err := store.Open(ctx, pgtest.URL(t), store.WithLogger(log))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st, log
}
