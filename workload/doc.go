// Package workload turns the public SWIM Facebook 2009 trace into Spark jobs
// and models how long a job runs on a given placement.
//
// It has three parts: the trace parser (Parse, one job a line: job id,
// submit time s, gap s, map input bytes, shuffle bytes, output bytes), the
// job model (Profile: application type from the shuffle/input ratio,
// executor count and size from the data size) and the performance model
// (Model.Duration: a pure function of a job profile and the placement of
// its executors, in which spreading a shuffle-heavy job over more agents
// slows it and packing CPU-bound executors onto a full agent slows them a
// little). The simulator (package simulate) and the Mesos emulator
// (package integration) both use it, so it depends on nothing of sparkpack
// but plain values.
//
// It must not import Mesos, SQL or HTTP packages, nor the scheduler core,
// and it does no I/O besides reading the io.Reader it is given.
package workload
