// Package offers is sparkpack's Mesos adapter, on the v1 HTTP APIs with
// github.com/mesos/mesos-go v0.0.11's types: an operator API client
// (agents, reservations, quota), a scheduler API client (subscribe,
// heartbeats, calls with the stream id, leader redirects), and the
// reservation helpers of MESOS_PROTOCOL.md's pinning recipe.
//
// It speaks protobuf to Mesos by default: mesos-go's generated JSON decoder
// rejects enum values it does not know, such as the QUOTA_V2 capability a
// Mesos 1.12 master announces in SUBSCRIBED.
//
// Files by concept: the cluster adapter (cluster.go: scheduler.Cluster,
// restarts; clusterviews.go: snapshots and views; clusteragents.go:
// GET_AGENTS refresh and the leak sweep; follow.go: the executor of the
// per-job state machine of package offers/lifecycle, which decides every
// step), the framework (framework.go: subscription and status updates;
// frameworklaunch.go: driver launches; frameworkoffers.go: offer hygiene;
// frameworkroles.go: job roles for offer mode), the reservers (reserve.go:
// operator API, and teardown.go: tearing down the frameworks of gone
// drivers that hold a job's reservations; offermode.go: from offers) and the clients (operator.go,
// schedclient.go, transport.go).
//
// It must not import the api or store packages, nor SQL drivers: it talks
// to the scheduler core through the core's interfaces.
package offers
