// Package leader elects one sparkpack instance among several that share a
// PostgreSQL database: the leader runs the scheduler core, the Mesos
// framework and everything that acts on the cluster; the others serve the
// API and wait.
//
// Leadership is a lease row in the database (package store implements
// Store) renewed by the leader, with a fencing token that grows with every
// new leader. Times come from the database's clock, so instances need not
// agree on theirs. A leader stops acting as soon as it cannot show that it
// still holds the lease: when a renewal fails, and in any case when its own
// monotonic clock says the last renewal plus the lease time has passed
// (less a safety margin). A paused process that wakes up finds its lease
// over before it can act. The store's leader-only writes check the
// token in the same transaction, so a write by a deposed leader fails.
//
// It must not import Mesos, HTTP or the scheduler; it talks to the store
// through the Store interface.
package leader
