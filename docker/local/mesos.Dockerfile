# Local Mesos image: the real Apache Mesos 1.12.0 build of shared/mesos
# (bin/ and lib/, sent in the build context by build-images.sh) with its
# runtime libraries from Debian 12 (shared/mesos/README.md), and curl for
# the compose file's health checks. The same image runs mesos-master and
# mesos-agent (the compose file's command), configured by MESOS_* variables.
ARG BASE
FROM ${BASE}
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      libapr1 libarchive13 libcurl4 libgrpc29 libgrpc++1.51 libprotobuf32 libsasl2-2 libsasl2-modules \
      libsvn1 libunwind8 zlib1g libzookeeper-mt2 curl ca-certificates procps tini \
 && rm -rf /var/lib/apt/lists/*
COPY mesos /opt/mesos
# mesos-master / mesos-agent on PATH; libmesos where the compose file's
# MESOS_NATIVE_JAVA_LIBRARY expects it (the Mesos RPM's /usr/lib64).
RUN ln -s /opt/mesos/bin/mesos-master /opt/mesos/bin/mesos-agent /usr/local/bin/ \
 && mkdir -p /usr/lib64 && ln -s /opt/mesos/lib/libmesos-1.12.0.so /usr/lib64/libmesos.so \
 && /usr/local/bin/mesos-master --version \
 && if ldd /opt/mesos/bin/mesos-agent | grep 'not found'; then exit 1; fi
# The programs an agent starts (executors, fetcher, ...).
ENV MESOS_LAUNCHER_DIR=/opt/mesos/bin
# tini as PID 1: mesos-master and mesos-agent install no SIGTERM handler, and
# PID 1 ignores a signal it does not handle, so `docker compose stop/down`
# waited out its 10 s timeout on every Mesos container; tini also reaps the
# executors' orphans.
ENTRYPOINT ["/usr/bin/tini", "--"]
