package store

import (
	"context"
	"errors"
	"fmt"
)

// Actor is who asked for a change: the name of the token (never the token
// itself) and the client address. The API puts it in the request's
// context; every event the store writes under that context records it, and
// a job created under it remembers Name as its submitter. The scheduler's
// own changes carry no actor.
type Actor struct {
	// Name is the token's name; empty when no tokens are configured.
	Name string
	// Client is the client's IP address.
	Client string
	// OwnOnly limits Cancel to jobs this actor submitted (a token with the
	// cancel scope but not admin).
	OwnOnly bool
}

type actorKey struct{}

// WithActor returns ctx carrying a.
func WithActor(ctx context.Context, a Actor) context.Context {
	return context.WithValue(ctx, actorKey{}, a)
}

// ActorFrom returns the actor ctx carries (the zero Actor when none).
func ActorFrom(ctx context.Context) Actor {
	a, _ := ctx.Value(actorKey{}).(Actor)
	return a
}

// ErrNotOwner: the actor may cancel only the jobs it submitted, and this
// job was submitted by another token.
var ErrNotOwner = errors.New("job was submitted by another token")

// CountWaitingBy returns how many of the jobs submitted by the token named
// name are still waiting (SUBMITTED or QUEUED).
func (s *Store) CountWaitingBy(ctx context.Context, name string) (int, error) {
	var n int
	err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM jobs
		WHERE submitted_by = $1 AND submitted_by <> '' AND state IN ('SUBMITTED','QUEUED')`, name).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count waiting jobs of %q: %w", name, err)
	}
	return n, nil
}

// SubmittedBy returns the name of the token that submitted a job ("" when
// none did).
func (s *Store) SubmittedBy(ctx context.Context, id string) (string, error) {
	var by string
	err := s.db.QueryRowContext(ctx, `SELECT submitted_by FROM jobs WHERE id = $1`, id).Scan(&by)
	if err != nil {
		return "", fmt.Errorf("read submitter of job %s: %w", id, err)
	}
	return by, nil
}
