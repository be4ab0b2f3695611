// Command fakespark stands in for spark-submit on Mesos agents in
// sparkpack's tests against a real Mesos master (there is no Spark here).
// It is built by the tests and is never part of the sparkpack binary.
//
// Started by an agent as a job's driver (serve --spark-submit PATH), it
// parses the same arguments spark-submit gets, then behaves like Spark
// 3.5's coarse-grained Mesos backend in client mode: it registers a
// framework in spark.mesos.role (the legacy single-role way, no
// capabilities, failover timeout spark.mesos.driver.failoverTimeout = 0),
// takes offers, reserved or not, launching one executor task per
// spark.executor.cores cpus and spark.executor.memory + overhead
// (spark.mesos.executor.memoryOverhead, default max(384 MiB, 10%)) until
// spark.cores.max cores are held, round-robin over the offers, and
// declines the rest (spark.mesos.rejectOfferDuration once the cores are
// reached, or for unmet spark.mesos.constraints; no filter otherwise). A
// lost or failed executor gives its cores back and offers are revived.
// The executors only sleep.
//
// The application "runs" for the job's duration: $FAKESPARK_DURATION_SECONDS
// when set, else the driver task's label sparkpack.sim/duration-seconds
// (the job's estimatedDurationSeconds, read back from the master's
// GET_TASKS with $MESOS_FRAMEWORK_ID and $MESOS_EXECUTOR_ID, which the
// agent sets), else 10 s. Then the driver stops its executors, waits for
// them (spark.mesos.coarse.shutdownTimeout, 10 s), tears its framework
// down and exits with $FAKESPARK_EXIT_CODE (0 by default; a job passes it
// in app.environment to make its driver fail). SIGTERM (a killed driver
// task) stops it the same way, exiting 143 like the JVM.
package main
