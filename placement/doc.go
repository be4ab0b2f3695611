// Package placement decides where the executors of one Spark job go: given a
// cluster Snapshot and a job Demand it returns a Plan (agent -> executor
// count, the idle agents it activates and their hourly price) or a *NoFit
// that says why the job has to wait.
//
// Everything here is a pure function of its arguments: the package does no
// I/O, reads no clock, does not log, and must not import Mesos, SQL, HTTP or
// logging packages. The only exception to "pure Go" is the CBC solver used by
// the ilp policy, reached through cgo in ilp_cbc.go (the only file with
// import "C"); its calls are serialised by one package-level mutex because
// CBC keeps global state. CBC stops on a deterministic work bound (a node
// limit, one thread), so ilp is pure too, except when its wall-clock safety
// net stops a solve; ilp_cbc.go reads the clock around each solve only to
// tell, and the plan's Outcome ("time-limit", "time-limit-fallback-bfd")
// then says the plan depends on the machine's load.
//
// Policies (see Names, Get and New):
//
//   - bfd: thesis Algorithm 5, Best-Fit-Decreasing on Resource Availability: fill active agents by ascending RA, then activate the cheapest idle agent that fits one executor, and repeat.
//   - ilp: the cost-minimising MILP (integer count + binary activation per agent) solved by CBC, warm-started from and checked against the exact DP; CBC stops on a node bound (Options.ILPMaxNodes, default 100; "incumbent" when it stops there unproven) or, as a safety net only, on a wall-clock limit (Options.ILPTimeLimit, default 2 s; reported as "time-limit"); falls back to bfd when CBC has no usable answer.
//   - exact: pure-Go min-cost covering knapsack DP over agent capacities; optimal, with tie-breaks cheaper, then fewer agents, then more already-active agents.
//   - spread: Spark's default (spreadOut=true) round-robin, one executor per agent per round, agents by free cpus descending.
//   - consolidate: Spark's spreadOut=false, fill agents one after another, agents by free cpus descending.
//   - firstfit: First-Fit over agents by effective price (0 when active), cheapest first.
//   - morpheus: Morpheus-style low-cost packing: active agents first, then the agents that would be most loaded, max((cpu_load+cpu_job)/cpu_total, (mem_load+mem_job)/mem_total), are filled first.
//   - gio: hybrid local/cloud, thesis Algorithm 7: only local agents when they can hold the job, else agents by extra cost max(0, T_C - T_vm) * P_vm.
//
// Every policy first checks whether the job fits at all (the same check for
// all policies), so a policy either places exactly Demand.Executors
// executors within every agent's free cpus and memory or returns the same
// *NoFit as every other policy.
package placement
