// Package zktest runs a real, standalone Apache ZooKeeper server (Debian's
// package zookeeper) on loopback for tests: the masters' leader election
// of Mesos and sparkpack's --mesos-master zk:// are tested against it. A
// test on a machine without ZooKeeper is skipped with the command that
// installs it (scripts/deps.sh test does). It must not import other
// sparkpack packages.
package zktest
