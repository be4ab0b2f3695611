// Package sparksubmit builds the spark-submit command line that runs a
// job's Spark driver on Mesos, as an argument vector: user strings are
// separate arguments, never pasted into a shell. The settings follow
// MESOS_PROTOCOL.md's pinning recipe (the job's own role, spark.cores.max
// at the reserved cpus, executor size and overhead, a short
// spark.mesos.rejectOfferDuration).
//
// spark-submit has no "--" to end its options, so Command puts every user
// value before the application where spark-submit takes it as an option's
// value, and refuses (with scheduler.Spec.CheckCommandValues) an
// application resource it could read as an option and the main classes
// that make it read the application's arguments as options.
// parser_test.go models spark-submit's argument parser and checks, also by
// fuzzing, that every valid job's command means exactly that job.
//
// It is a pure function of the job; it must not import Mesos, SQL or HTTP
// packages.
package sparksubmit
