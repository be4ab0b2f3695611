// Package learned is the live, concurrency-safe wrapper around package
// perfmodel (issue 27, docs/learning.md): one Model per sparkpack instance
// holds a perfmodel.Book (run-time models per job signature, then per
// application type, then the prior) and perfmodel.Estimates (how far the
// users' estimates were off, per signature and per team). It is loaded
// from the run history (store.RunHistory) at start and when the instance
// becomes leader, learns from every finished run the core reports (on the
// leader) or catches up with the runs the history gained (Catchup, on
// followers, store.RunsAfter), and answers the scheduler's questions
// (scheduler.RunModel: Predict, Traits, Predictor), the right-sizing of
// "executors": "auto" (RightSize) and the views (Summaries).
//
// It does no I/O of its own but Reload and Catchup, which read the history
// through the History and Follower interfaces before taking its lock; it
// starts no goroutine.
// It must not import net/http, database/sql, mesos-go nor package store
// (the history comes through an interface; its tests load a real one
// through package store).
package learned
