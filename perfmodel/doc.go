// Package perfmodel learns how long a Spark job runs from its finished runs
// (thesis ch. 3, dSpark) and turns that into decisions: predicted run times
// with residual quantiles (p50 for cost, p90 for deadlines), corrected user
// estimates, and right-sized executor counts.
//
// Per job signature (application + main class) it fits the dSpark
// completion-time model
//
//	T(E, I) = alpha(I) * E^beta(I) + gamma(I),  alpha, beta, gamma = u * I^v + w
//
// with E the executors and I the job's size (input size x iterations),
// multiplied by placement factors (1 + ShuffleCost x r) x (1 + Contention x l)
// with r the share of shuffle crossing agents and l the load of the busiest
// agent above half (0 to 1). With too few distinct sizes it fits the
// size-free form T(E) = a * E^b + c. A Book keeps the runs per signature and
// per application type and predicts along a fallback chain: signature, then
// application type, then a global prior (DAPTraits-like constants), with
// wider quantiles at each step back. A Book refits a key at every run it
// observes, cheaply: the form, exponents and placement sensitivities are
// searched again on a schedule counted in runs (SearchEvery), and in
// between only the curve's linear coefficients are solved again
// (RefitLinear). A signature's model is refitted as each run comes, so
// the same runs give it the same model however they came (live or
// reloaded); an application type's is refitted when next asked for.
//
// It is pure: no I/O, no goroutines, no clocks; it must not import
// database/sql, net/http, mesos-go nor the scheduler. A Book is not safe for
// concurrent use: its owner serialises calls.
package perfmodel
