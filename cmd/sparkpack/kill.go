package main

import (
	"context"
	"io"
)

// runKill is `sparkpack kill ID...`, another name for `sparkpack cancel`:
// DELETE /api/v1/jobs/{id} for each job, the same path as every other
// kill (a waiting job is cancelled, one that holds resources has its
// driver killed and its reservations released).
func runKill(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return cancelJobs(ctx, "kill", args, stdout, stderr)
}
