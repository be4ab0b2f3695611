// Package chaos is sparkpack's chaos suite: it starts a scratch
// PostgreSQL (scripts/scratch-pg.sh), the Mesos emulator (`sparkpack
// mesos-sim`) and several `sparkpack serve` instances, each a process of
// its own, puts a steady load of jobs on them and faults them — the
// leader killed (kill -9) at random points and during recovery, stopped
// and continued (split brain), its renewals stalled in the database and
// its process paused, PostgreSQL stopped and its postmaster killed,
// hostile requests — and counts, per scenario, jobs lost, launched or
// ended twice, reservations, quotas and tasks leaked on the emulator,
// 5xx answers to client errors, 503s without Retry-After, unauthorised
// actions, and failover times. Any count but the failover times is a
// breach.
//
// cmd/sparkpack-chaos runs the full suite (scripts/chaos.sh); the short
// version runs in `make test` (TestChaosShort). It is a test harness, not
// part of the product. It must not import sparkpack's own packages: it
// sees the stack as an operator would, over HTTP, SQL and signals.
package chaos
