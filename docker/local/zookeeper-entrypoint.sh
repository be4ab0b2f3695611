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
cp /etc/zookeeper/conf/log4j.properties /tmp/log4j.properties 2>/dev/null || true
CP=/etc/zookeeper/conf
for j in /usr/share/java/*.jar; do CP=$CP:$j; done
exec java -Dzookeeper.log.dir=/tmp -Dzookeeper.root.logger=INFO,CONSOLE \
  -Dlog4j.configuration=file:/etc/zookeeper/conf/log4j.properties \
  -cp "$CP" org.apache.zookeeper.server.quorum.QuorumPeerMain /tmp/zoo.cfg
