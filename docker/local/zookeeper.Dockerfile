# Local ZooKeeper image from Debian 12's zookeeper package (3.8.0), shaped
# like the official zookeeper image the compose file names: data in /data,
# transaction log in /datalog, client port 2181, ZOO_4LW_COMMANDS_WHITELIST.
ARG BASE
FROM ${BASE}
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends zookeeper netcat-openbsd \
 && rm -rf /var/lib/apt/lists/* \
 && mkdir -p /data /datalog
COPY zookeeper-entrypoint.sh /usr/local/bin/zookeeper-entrypoint.sh
VOLUME ["/data", "/datalog"]
EXPOSE 2181
ENTRYPOINT ["/usr/local/bin/zookeeper-entrypoint.sh"]
