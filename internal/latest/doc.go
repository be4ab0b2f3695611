// Package latest keeps the latest value built from a source that changes:
// one owner goroutine (Value.Run) rebuilds the value when told that the
// source changed (Value.Changed), at most one build at a time, and
// publishes each result through an atomic pointer. Readers (Value.Load)
// take the value last published and never wait for a build nor build
// themselves; a burst of changes during a build costs one more build,
// which reads the source as it is by then.
//
// It is for views that are expensive to build and read often, such as
// the cluster view of tens of thousands of agents: building one on the
// request that finds it stale made that request wait for the build, for
// the source's lock and for cpu.
//
// It imports only the standard library and must stay that way.
package latest
