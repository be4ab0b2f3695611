// Package realmesos runs sparkpack's end-to-end scenarios against a REAL
// Apache Mesos 1.12 master and three real agents on loopback, and checks
// that the emulator of package mesossim behaves the same way.
//
// What is here:
//
//   - Find locates a Mesos build: $MESOS_BIN, or else shared/mesos/bin in
//     the repository's parent directory (or one of its ancestors), the way
//     a CI clone sits beside ../shared. Without one, the tests skip with a
//     line saying how to enable them.
//   - Start runs a master and agents with the resources and the
//     instance_type/price/location attributes of a clusterspec.Cluster
//     (posix launcher, work directories in a temporary directory, free
//     ports), and Close tears every framework down, stops the daemons and
//     kills whatever process is left in the work directories.
//   - Observer reads a master's state over the v1 operator API (protobuf):
//     the same code reads the real master and the emulator, so that the two
//     can be compared.
//   - fakespark (a main package built by the tests, never part of the
//     sparkpack binary) stands in for spark-submit on the agents: it
//     behaves like Spark 3.5's coarse-grained Mesos backend.
//   - probe records, in a normalised form, what a framework sees from a
//     master (offers, status updates, errors); the real master's record is
//     kept in mesossim/testdata/real and the emulator is
//     checked against it in every test run.
//
// Real Mesos agents run real processes: a test that starts a cluster must
// Close it (the tests share one cluster and close it in TestMain).
//
// This package is for tests. It must not import the sparkpack scheduler,
// store, api or offers packages, nor the emulator (its tests may): it
// observes Mesos from the outside.
package realmesos
