// Package retry calls a function until it succeeds or its context ends,
// with a capped exponential wait between attempts: for the reads a
// long-running component cannot go on without (a leader's recovery, the
// jobs a notification named).
//
// It must not import anything of sparkpack's: the scheduler core uses it.
package retry
