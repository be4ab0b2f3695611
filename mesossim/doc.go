// Package mesossim EMULATES an Apache Mesos 1.12 master and its agents for
// tests and demos of sparkpack. It is a stand-in written from the public
// Mesos documentation, from transcripts of a real Mesos 1.12.0 master
// (../../shared/mesos-transcripts, copied to testdata/transcripts) and
// from a recorded session against a real master and real agents
// (testdata/real/probe.json, see package integration/realmesos/probe);
// it is not Mesos, not a mock to be used in production, and it runs no
// real processes: tasks "run" for a simulated duration.
//
// # Checked against a real master
//
// Every test run compares the emulator with the real master's recorded
// session (TestEmulatorMatchesTheRealMasterRecording), runs mesos-go's
// example scheduler and fakespark (the Spark stand-in of the real-Mesos
// tests) against it, and, with a Mesos build at hand (MESOS_BIN or
// ../shared/mesos/bin), Mesos' own mesos-execute. integration/realmesos
// runs sparkpack's end-to-end scenarios against a real master and the
// emulator at once and requires the same outcome.
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
//     while protobuf clients work), HEARTBEAT, OFFERS per role (legacy
//     "role"/"reservation" format, or the "reservations" array for
//     RESERVATION_REFINEMENT frameworks; allocation_info only for
//     MULTI_ROLE frameworks, as the real master strips it for the others;
//     resources in a fresh real master's order: ports, reservations,
//     unreserved cpus/mem/disk; executor_ids of the framework's executors
//     on the agent), RESCIND,
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
//     RECONCILE_OPERATIONS, UPDATE_FRAMEWORK, TEARDOWN. Command tasks get
//     the command executor's updates (TASK_STARTING, TASK_RUNNING, then
//     TASK_FINISHED "Command exited with status 0", TASK_FAILED "...status
//     N" without a reason, TASK_KILLED "Command terminated with signal
//     Terminated", with TASK_KILLING first for TASK_KILLING_STATE
//     frameworks) carrying container_status with an executor pid; tasks
//     with a custom executor start at TASK_RUNNING. The scheduler API is
//     also served under /master/api/v1/scheduler (Mesos' C++ scheduler
//     library, e.g. mesos-execute, uses that path). Status codes and
//     text/plain error texts follow the transcripts (e.g. a missing or wrong
//     Mesos-Stream-Id is 400; an invalid SUBSCRIBE is 200 with one ERROR
//     event; call type UNKNOWN is 400 where the real master crashes).
//     Failover: a re-SUBSCRIBE with the framework id keeps the tasks and the
//     old stream gets ERROR "Framework failed over"; a framework that stays
//     disconnected past its failover_timeout is removed and its tasks
//     killed. After Restart a framework that does not subscribe again is
//     listed by GET_FRAMEWORKS as recovered (active and connected false)
//     and keeps its tasks, with no failover timeout, until it subscribes
//     or an operator TEARDOWN removes it, as a real 1.12 master showed for
//     a Spark stand-in whose driver exited when the master restarted
//     (failover_timeout 0; docs/deploy.md).
//   - The v1 operator API, POST /api/v1 (and /master/api/v1): GET_HEALTH,
//     GET_VERSION, GET_MASTER, GET_AGENTS, GET_FRAMEWORKS, GET_TASKS (live,
//     unreachable and completed tasks, those of removed frameworks in JSON
//     only, as a real 1.12 master's protobuf answer leaves them out, with
//     every status and resources in the post-refinement format),
//     GET_EXECUTORS
//     (empty), GET_STATE, GET_ROLES, GET_QUOTA, UPDATE_QUOTA (quota v2
//     guarantees and limits, 400 for a limit below consumption unless
//     force), RESERVE_RESOURCES / UNRESERVE_RESOURCES (202; offers on the
//     agent are rescinded to make room; 409 text/plain when unallocated
//     resources are short; same role and labels merge; on a disconnected
//     agent still listed, applied to the master's view only: the agent
//     re-registers with what it checkpointed, as on a real master), TEARDOWN, and the
//     SUBSCRIBE event stream (TASK_ADDED, TASK_UPDATED, FRAMEWORK_REMOVED,
//     AGENT_ADDED, AGENT_REMOVED).
//   - A simple allocator (see allocateLocked): offers per (framework, role)
//     on a configurable interval and shortly after events, honouring
//     filters, suppression, reservations and quota limits (unreserved
//     scalars cut to limit minus consumption; reservations count as
//     consumption but are never cut). Like Mesos' hierarchical allocator it
//     works in batches: every allocation interval (and after a framework
//     event: SUBSCRIBE, REVIVE, UPDATE_FRAMEWORK, teardown, agents and
//     quota changing) it visits every agent; between those, events that
//     free or change one agent's resources (DECLINE, ACCEPT, a task ending,
//     an operator RESERVE or UNRESERVE) queue that agent as an allocation
//     candidate for the next batch (100 ms at most). Decline filters are
//     indexed by role and agent, and a role capped by its quota limit costs
//     nothing on agents without its reservations, so clusters of tens of
//     thousands of agents are allocated every interval (`sparkpack mesos-sim
//     --pprof` serves the emulator's profiles).
//   - Agents from package clusterspec (attributes instance_type, price,
//     location); AddAgent, RemoveAgent, LoseAgent, CrashAgent and
//     RestartAgent (the agent process dies and returns; executors live
//     on), PowerOff and PowerOn (the machine; tasks die, see power.go) at
//     run time (also
//     under /sim/). A crash looks as on a real master: tasks of
//     non-checkpointing frameworks TASK_LOST "Agent <host> disconnected",
//     of partition-aware ones TASK_UNREACHABLE "health check timed out"
//     (and TASK_RUNNING "Unreachable agent re-reregistered" when the agent
//     returns), FAILURE to every framework, the agent gone from GET_AGENTS.
//   - Task durations from the sparkpack.sim/duration-seconds label, a
//     pluggable DurationFunc or a plain "sleep N" command; exit status from
//     the sparkpack.sim/exit-code label; fault injection: failure and loss rates with a
//     seed, FailTask, LoseAgent, DropConnections, Restart, and status
//     update faults (SetUpdateFaults: random delay, so updates of
//     different tasks arrive reordered, duplicates, and terminal-only:
//     a framework shown only each task's terminal update, what it sees
//     when its own process acknowledged the earlier ones without taking
//     them; not what a real master does for a command task, whose
//     updates arrive in order, each after the previous was acknowledged).
//   - A simulated Spark 3.x coarse-grained driver for launched spark-submit
//     commands (see spark.go), timed, with Config.PerfTruth, by the
//     emulator's performance truth of the placement its executors got
//     (sparktruth.go, package perftruth) instead of its duration label.
//
// # Known differences from the real master
//
// A crashed agent (CrashAgent) is disconnected at once and marked
// unreachable after UnreachableAfter, as a real master does after its ping
// timeouts (75 s by default; tests set it short, ~3 s like the real-Mesos
// tests' cluster), and its executors give up after AgentRecoveryTimeout
// (an agent's --recovery_timeout: a simulated Spark driver among them ends
// its application; their tasks are reported TASK_FAILED when the agent
// comes back), but the status updates its surviving tasks send while it
// is disconnected (a task that ends meanwhile) reach the framework at once
// instead of when the agent re-registers; PowerOff reports every task on the machine lost at once ("Agent powered
// off"; a real master would say TASK_LOST "Agent <host> disconnected" at
// once only for frameworks that do not checkpoint, and TASK_UNREACHABLE /
// TASK_LOST "health check timed out" for the others when the agent turns
// unreachable); what a real agent reports for the tasks of a rebooted
// machine (PowerOn) is not emulated (they are forgotten); protobuf answers lack the Mesos
// 1.12 fields mesos-go v0.0.11 does not know (AgentInfo.checkpoint, a
// framework's offer_constraints: JSON answers have them); a real master's
// order of resources depends on the agent's history (the emulator always
// uses a fresh agent's order); the simulated Spark is not a process and
// registers without the HTTP API.
//
// # What is not covered
//
// Authentication and authorization (ACLs), static reservations and
// reservation refinement chains, persistent volumes and the other offer
// operations, SET resources, hierarchical roles beyond exact role matches,
// weights, quota guarantees in allocation, maintenance and inverse offers,
// agent draining, the v0 endpoints (/master/state, /master/reserve), leader
// election (a Master always leads; Follower answers as a non-leading master
// does, with the leader's 307 or 503 "No leader elected"), executors and
// the executor/agent APIs, partition-aware details beyond the task states,
// and exact DRF order.
//
// # Rules for this package
//
// It must not import the sparkpack scheduler, store or api packages: it
// stands in for Mesos and knows nothing of sparkpack beyond clusterspec.
package mesossim
