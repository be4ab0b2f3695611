// Package perftruth is the emulator's performance truth: how long a
// simulated Spark application really runs, from the ACTUAL placement of
// its executors (executors, agents, executors per agent, share of shuffle
// crossing agents, load of the busiest agent) and from per-signature
// parameters that sparkpack is never told.
//
// The parameters of a signature (application resource + main class) come
// from a truth file (ParseFile, `sparkpack mesos-sim --perf-truth FILE`)
// or, for a signature the file does not list, are drawn deterministically
// from a hash of the signature within documented ranges (Derive). The
// scheduler's estimates, labels and learned models play no part: what the
// live system learns from finished runs it did not make up.
//
// The formula is deliberately not perfmodel's dSpark curve (see Seconds):
// a model that learns it must approximate it, as it would a real cluster.
//
// It is pure: no I/O besides parsing the bytes it is given, no clocks, no
// goroutines; it must not import the sparkpack scheduler, perfmodel, store,
// api nor mesos-go.
package perftruth
