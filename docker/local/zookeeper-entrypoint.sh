#!/bin/sh
# Starts Debian's ZooKeeper in the foreground, standalone, like the
# official image: /data, /datalog, ZOO_4LW_COMMANDS_WHITELIST.
set -e
cat > /tmp/zoo.cfg <<CFG
tickTime=2000
initLimit=10
syncLimit=5
dataDir=/data
dataLogDir=/datalog
clientPort=2181
admin.enableServer=false
4lw.commands.whitelist=${ZOO_4LW_COMMANDS_WHITELIST:-srvr}
CFG
# Debian's classpath (zookeeper.jar's manifest names its dependencies),
# logging to the console.
exec java -Dzookeeper.log.dir=/tmp -Dzookeeper.root.logger=INFO,CONSOLE -Dzookeeper.console.threshold=INFO \
  -cp /etc/zookeeper/conf:/usr/share/java/zookeeper.jar:/usr/share/java/slf4j-simple.jar \
  org.apache.zookeeper.server.quorum.QuorumPeerMain /tmp/zoo.cfg
