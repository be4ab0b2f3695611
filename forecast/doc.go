// Package forecast predicts the jobs that will arrive: how many, how many
// cpus and how much memory they ask for, and how many carry a deadline, in
// any future interval, with an uncertainty band (p10/p50/p90). It learns
// from a history of submissions (Fit): a seasonal profile by time of day
// and day of week (time of day only, then the overall mean, while the
// history is too short), blended with the recent, exponentially weighted
// arrival rate. The band is a negative binomial whose over-dispersion is
// measured on the past buckets (Poisson when they show none).
//
// An empty or corrupt history (NaN, negative sizes, zero timestamps or
// ones more than ClockSkew ahead; within it a submission counts as made
// now) gives a Model that is not OK and says why (Reason); its
// Expect answers a zero Demand that is not OK either, so a caller falls
// back to what it does without a forecast. Nothing here panics on bad
// input.
//
// It is pure: no I/O, no clock (now is an argument), no goroutines. It must
// not import database/sql, net/http, mesos-go or any sparkpack package.
package forecast
