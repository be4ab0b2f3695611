// Package mesossim EMULATES an Apache Mesos 1.12 master and its agents for
// tests and demos of sparkpack. It is a stand-in written from the public
// Mesos documentation and from transcripts of a real Mesos 1.12.0 master
// (../../../shared/mesos-transcripts); it is not Mesos, not a mock to be
// used in production, and it runs no real processes: tasks "run" for a
// simulated duration.
//
// # What is covered
//
//   - The v1 scheduler API, POST /api/v1/scheduler, in JSON and protobuf
//     (Content-Type / Accept; Accept: application/recordio with
//     Message-Accept is honoured too): SUBSCRIBE as a RecordIO stream with
//     the Mesos-Stream-Id header, SUBSCRIBED (framework id,
//     heartbeat_interval_seconds, MasterInfo with the capabilities a 1.12
//     master sends: AGENT_UPDATE, AGENT_DRAINING and QUOTA_V2 — the last is
//     not in mesos-go v0.0.11's enum, so a client using mesos-go's JSON
//     codec fails on SUBSCRIBED exactly as it does against a real master,
//     while protobuf clients work), HEARTBEAT, OFFERS per role with
//     allocation_info (legacy "role"/"reservation" format, or the
//     "reservations" array for RESERVATION_REFINEMENT frameworks), RESCIND,
//     UPDATE (with uuid, re-sent with backoff until acknowledged; the next
//     update of a task is held back until then), UPDATE_OPERATION_STATUS,
//     ERROR. Calls: ACCEPT (RESERVE, UNRESERVE, LAUNCH, LAUNCH_GROUP applied
//     in order and validated one by one as the master does: invalid ones are
//     dropped silently, or reported as OPERATION_ERROR when they carry an
//     operation id, or TASK_ERROR for tasks), DECLINE with refuse_seconds
//     filters (per framework, role and agent, subset semantics), SUPPRESS,
//     REVIVE, KILL, ACKNOWLEDGE, ACKNOWLEDGE_OPERATION_STATUS, RECONCILE
//     (explicit and implicit, no uuid, unknown or finished-and-acknowledged
//     tasks come back TASK_LOST "Reconciliation: Task is unknown"),
//     RECONCILE_OPERATIONS, UPDATE_FRAMEWORK, TEARDOWN. Status codes and
//     text/plain error texts follow the transcripts (e.g. a missing or wrong
//     Mesos-Stream-Id is 400; an invalid SUBSCRIBE is 200 with one ERROR
//     event; call type UNKNOWN is 400 where the real master crashes).
//     Failover: a re-SUBSCRIBE with the framework id keeps the tasks and the
//     old stream gets ERROR "Framework failed over"; a framework that stays
//     disconnected past its failover_timeout is removed and its tasks
//     killed.
//   - The v1 operator API, POST /api/v1: GET_HEALTH, GET_VERSION,
//     GET_MASTER, GET_AGENTS, GET_FRAMEWORKS, GET_TASKS, GET_EXECUTORS
//     (empty), GET_STATE, GET_ROLES, GET_QUOTA, UPDATE_QUOTA (quota v2
//     guarantees and limits, 400 for a limit below consumption unless
//     force), RESERVE_RESOURCES / UNRESERVE_RESOURCES (202; offers on the
//     agent are rescinded to make room; 409 text/plain when unallocated
//     resources are short; same role and labels merge), TEARDOWN, and the
//     SUBSCRIBE event stream (TASK_ADDED, TASK_UPDATED, FRAMEWORK_REMOVED,
//     AGENT_ADDED, AGENT_REMOVED).
//   - A simple allocator (see allocateLocked): offers per (framework, role)
//     on a configurable interval and shortly after events, honouring
//     filters, suppression, reservations and quota limits (unreserved
//     scalars cut to limit minus consumption; reservations count as
//     consumption but are never cut).
//   - Agents from package clusterspec (attributes instance_type, price,
//     location); AddAgent, RemoveAgent, PowerOff, PowerOn, LoseAgent at run
//     time (also under /sim/).
//   - Task durations from the sparkpack.sim/duration-seconds label or a
//     pluggable DurationFunc; fault injection: failure and loss rates with a
//     seed, FailTask, LoseAgent, DropConnections, Restart, and status
//     update faults (SetUpdateFaults: random delay, so updates of
//     different tasks arrive reordered, and duplicates).
//   - A simulated Spark 3.x coarse-grained driver for launched spark-submit
//     commands (see spark.go).
//
// # What is not covered
//
// Authentication and authorization (ACLs), static reservations and
// reservation refinement chains, persistent volumes and the other offer
// operations, SET resources, hierarchical roles beyond exact role matches,
// weights, quota guarantees in allocation, maintenance and inverse offers,
// agent draining, the v0 endpoints (/master/state, /master/reserve), HTTP
// redirects to a leading master, executors and the executor/agent APIs,
// partition-aware details beyond the task states, and exact DRF order.
//
// # Rules for this package
//
// It must not import the sparkpack scheduler, store or api packages: it
// stands in for Mesos and knows nothing of sparkpack beyond clusterspec.
package mesossim
