// Package masterdetect finds the leading Apache Mesos master the way Mesos'
// own clients do, from what an operator writes in --mesos-master:
//
//   - one master, host:port or http(s)://host:port;
//   - several masters, host1:5050,host2:5050: each is tried in turn, and a
//     non-leading master's 307 redirect names the leader (package offers
//     follows it);
//   - ZooKeeper, zk://[user:password@]zk1:2181,zk2:2181/mesos: the leader
//     is the master whose json.info_ znode under the path has the lowest
//     sequence number (Mesos' leader contender); its content is the
//     master's MasterInfo in JSON, whose address the Watcher reads, and the
//     Watcher keeps a ZooKeeper watch on the path so that a new leader is
//     known as soon as ZooKeeper knows it.
//
// Parse turns the flag into a Spec; Watcher follows ZooKeeper. It must not
// import other sparkpack packages: package offers uses it.
package masterdetect
