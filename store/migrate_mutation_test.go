package store

import (
	"context"
	"database/sql"
	"os"
	"strings"
	"testing"

	"github.com/sparkpack/sparkpack/internal/pgtest"
)

// Tests written for the mutants of migrate.go that mutation testing found
// alive (scripts/mutation.sh store; docs/testing.md).

// TestMigrateCountsWhatItApplied: on an empty database Migrate applies
// and counts every migration file (counted here from the folder), and
// nothing the second time.
func TestMigrateCountsWhatItApplied(t *testing.T) {
	entries, err := os.ReadDir("migrations")
	if err != nil {
		t.Fatal(err)
	}
	files := 0
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".sql") {
			files++
		}
	}
	db, err := sql.Open("postgres", pgtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s := &Store{db: db, log: quietLog(), gc: &groupCommit{}}
	ctx := context.Background()
	if n, err := s.Migrate(ctx); err != nil || n != files {
		t.Fatalf("first Migrate applied %d, %v; want %d (the files)", n, err, files)
	}
	if n, err := s.Migrate(ctx); err != nil || n != 0 {
		t.Fatalf("second Migrate applied %d, %v; want 0", n, err)
	}
}
