// Package lifecycle is the per-job Mesos lifecycle as a pure state
// machine: Step(state, event) returns the next state and the actions to
// carry out (check the plan's agents, reserve, name and record a driver
// task, queue its launch, kill it, give everything back, report to the
// scheduler core, write a note). The executor in package offers performs
// the actions (Mesos calls, store writes) and feeds their results back as
// events; time passes as tick events that carry the time.
//
// Step does no I/O, reads no clock and starts no goroutine, so a job's
// whole life, crashes and lost answers included, is tested as transcripts
// of events in and actions out (step_test.go).
//
// It must not import mesos-go, net/http, database/sql or package offers:
// task states are the Mesos names as strings, and the retry-or-fail policy
// is the scheduler's (scheduler.EndOf, scheduler.RetryOrFail).
package lifecycle
