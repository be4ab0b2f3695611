#!/usr/bin/env bash
# demo.sh — runs sparkpack on a scratch PostgreSQL at http://127.0.0.1:8080
# until Ctrl-C, then stops the database. Set SPARKPACK_LISTEN to move it.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh build
mkdir -p bin
echo "demo: building sparkpack"
go build -o bin/sparkpack ./cmd/sparkpack
pgdir=$(mktemp -d /tmp/sparkpack-demo-pg.XXXXXX)
rmdir "$pgdir"
trap 'scripts/scratch-pg.sh stop "$pgdir" >/dev/null 2>&1 || true' EXIT
url=$(scripts/scratch-pg.sh start "$pgdir")
echo "demo: PostgreSQL at $url"
echo "demo: submit a job with: bin/sparkpack submit --app-resource local:///opt/spark/examples/jars/spark-examples.jar --main-class org.apache.spark.examples.SparkPi --executors 2 --executor-cores 1 --executor-memory-mb 1024"
bin/sparkpack serve --database-url "$url" --log-format text "$@"
