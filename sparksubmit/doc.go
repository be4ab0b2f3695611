// Package sparksubmit builds the spark-submit command line that runs a
// job's Spark driver on Mesos, as an argument vector: user strings are
// separate arguments, never pasted into a shell. The settings follow
// MESOS_PROTOCOL.md's pinning recipe (the job's own role, spark.cores.max
// at the reserved cpus, executor size and overhead, a short
// spark.mesos.rejectOfferDuration).
//
// It is a pure function of the job; it must not import Mesos, SQL or HTTP
// packages.
package sparksubmit
