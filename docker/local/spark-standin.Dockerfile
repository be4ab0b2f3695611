# STAND-IN for the Spark 3.5 image (apache/spark:3.5.x): no Spark and no
# Java in it. It has the layout the compose file's spark-dist service
# copies to the agents (/opt/spark with RELEASE and jars/spark-mesos_*.jar,
# /opt/java/openjdk), but /opt/spark/bin/spark-submit is fakespark, the
# real-Mesos tests' stand-in (integration/realmesos/fakespark): it takes
# spark-submit's arguments, registers with the Mesos master like Spark 3.5's
# coarse-grained backend, launches executor tasks that only sleep, and
# exits. The jars are placeholder text files. See docs/deploy.md, "Try it
# on one machine".
ARG BASE
FROM ${BASE}
ARG SPARK_VERSION
COPY fakespark /opt/spark/bin/spark-submit
RUN mkdir -p /opt/spark/jars /opt/spark/examples/jars /opt/java/openjdk/bin \
 && echo "Spark ${SPARK_VERSION} (sparkpack STAND-IN: fakespark, no Spark inside)" > /opt/spark/RELEASE \
 && echo "placeholder: sparkpack's Spark stand-in has no Spark" > /opt/spark/jars/spark-mesos_2.12-${SPARK_VERSION}.jar \
 && echo "placeholder: sparkpack's Spark stand-in has no Spark" > /opt/spark/examples/jars/spark-examples_2.12-${SPARK_VERSION}.jar \
 && echo "placeholder: sparkpack's Spark stand-in has no Java" > /opt/java/openjdk/README \
 && /opt/spark/bin/spark-submit --version 2>&1 | head -2 || true
LABEL org.opencontainers.image.description="STAND-IN for Spark ${SPARK_VERSION}: fakespark as spark-submit, no Spark, no Java"
