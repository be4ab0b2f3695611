// Package probe records what a Mesos master shows a framework and an
// operator in a fixed session, in a normalised form, so that the
// emulator (mesossim) can be compared with the real Mesos
// 1.12 master: the real master's record is kept in
// mesossim/testdata/real/probe.json and every test run checks
// the emulator against it; with a real Mesos at hand the real master is
// checked against it too (and REALMESOS_RECORD=1 records it again).
//
// The session covers what the transcripts of ../shared/mesos-transcripts
// do not: a framework WITHOUT MULTI_ROLE (the way Spark registers) and
// its offers, reserved offers in the legacy format, command tasks that
// run on real agents (their status updates: finished, killed, failed),
// reconciliation, GET_TASKS with completed tasks, teardown, and, when the
// caller can kill an agent, what frameworks and operators see when an
// agent is lost and comes back.
//
// It expects a master whose agents are those of realmesos.ThreeAgents,
// with nothing else running. It must not import the emulator or
// sparkpack's own packages.
package probe
