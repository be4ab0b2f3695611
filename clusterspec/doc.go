// Package clusterspec describes a cluster of Mesos agents as data: the
// built-in thesis14 cluster of the thesis' experiments and cluster files in
// JSON. The simulator and the Mesos emulator both build their agents from it.
//
// It must not import Mesos, SQL or HTTP packages: it is plain data and a parser.
package clusterspec
