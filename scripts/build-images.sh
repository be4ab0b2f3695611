#!/usr/bin/env bash
# build-images.sh — builds, on this machine and without any image registry,
# every image the compose stack needs (docker/local/images.env names them):
#
#   sparkpack-local/debian:bookworm      debootstrap --variant=minbase from the
#                                        Debian mirror of this machine's apt sources
#   sparkpack-local/golang:bookworm      that base + gcc + the host's Go (/usr/local/go)
#                                        + a file proxy of go.sum's modules
#   sparkpack:<SPARKPACK_VERSION>        the real docker/Dockerfile, with the two above
#                                        as GO_IMAGE and RUNTIME_IMAGE
#   sparkpack-local/mesos:1.12.0         the real Mesos 1.12 build (shared/mesos) + Debian libs
#   sparkpack-local/zookeeper, /postgres Debian's zookeeper and postgresql-15 packages
#   sparkpack-local/spark-standin        STAND-IN for Spark 3.5: fakespark as spark-submit
#
# An image is rebuilt only when its inputs changed (a hash of them is kept in
# the image's label sparkpack.inputs); the engine's data root is the cache.
# Needs a Docker engine (DOCKER_HOST from scripts/docker-engine.sh start),
# debootstrap (installed when missing) and root for debootstrap.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
export PATH=$PATH:/usr/local/go/bin
export DOCKER_BUILDKIT=0   # the classic builder: BuildKit would fetch the dockerfile:1 frontend from a registry

local_env=docker/local/images.env
val() { sed -n "s/^$1=//p" "$local_env" | tail -1; }
BASE=$(val RUNTIME_IMAGE)
GO_IMAGE=$(val GO_IMAGE)
SPARKPACK_IMAGE=sparkpack:$(val SPARKPACK_VERSION)
MESOS_IMAGE=$(val MESOS_IMAGE):$(val MESOS_VERSION)
ZOOKEEPER_IMAGE=$(val ZOOKEEPER_IMAGE):$(val ZOOKEEPER_VERSION)
POSTGRES_IMAGE=$(val POSTGRES_IMAGE):$(val POSTGRES_VERSION)
SPARK_IMAGE=$(val SPARK_IMAGE)
SPARK_VERSION=$(sed -n 's/^SPARK_VERSION=//p' docker/.env)

t0=$(date +%s)
step() { echo "==> [build-images +$(( $(date +%s) - t0 ))s] $*"; }

# inputs_of FILE... : a hash of the files' contents and of the extra words in $EXTRA.
inputs_of() { { printf '%s\n' "${EXTRA:-}"; for f in "$@"; do sha256sum "$f"; done; } | sha256sum | cut -c1-16; }
label_of() { docker image inspect -f '{{index .Config.Labels "sparkpack.inputs"}}' "$1" 2>/dev/null || true; }
# fresh IMAGE HASH: the image exists and was built from these inputs.
fresh() { [ "$(label_of "$1")" = "$2" ]; }
image_id() { docker image inspect -f '{{.Id}}' "$1"; }

# The images built in this run (build runs at the end of pipelines, in subshells).
builtlog=$(mktemp /tmp/sparkpack-built.XXXXXX)

# ---- base: debootstrap from this machine's configured Debian mirror ---------
debian_mirror() {
  # deb822 (*.sources): the URIs of a stanza whose Suites has bookworm;
  # one-line format: deb URI bookworm ...
  local f
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] || continue
    awk 'BEGIN{RS=""} /Suites:[^\n]*(^|[ \t])bookworm([ \t]|$|\n)/ && /Types:[^\n]*deb/ {
           if (match($0, /URIs:[ \t]*[^ \t\n]+/)) { s=substr($0, RSTART, RLENGTH); sub(/URIs:[ \t]*/, "", s); print s; exit } }' "$f"
  done
  cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null </dev/null |
    awk '$1=="deb" { i=2; if ($2 ~ /^\[/) { while ($i !~ /\]$/) i++; i++ } if ($(i+1)=="bookworm") print $i }' || true
}
base_hash=$(EXTRA="minbase bookworm v1" inputs_of)
if fresh "$BASE" "$base_hash"; then
  step "$BASE: cached"
else
  mirror=$(debian_mirror | head -1 || true)
  if [ -z "$mirror" ]; then echo "build-images: no Debian bookworm mirror in /etc/apt/sources.list{,.d}" >&2; exit 1; fi
  command -v debootstrap >/dev/null || { step "installing debootstrap"; DEBIAN_FRONTEND=noninteractive apt-get install -y -q debootstrap; }
  dir=$(mktemp -d /var/tmp/sparkpack-debootstrap.XXXXXX)
  trap 'rm -rf "$dir"' EXIT
  step "$BASE: debootstrap --variant=minbase bookworm from $mirror (about 40 s)"
  debootstrap --variant=minbase bookworm "$dir" "$mirror" > "$dir.log" 2>&1 || { tail -20 "$dir.log" >&2; exit 1; }
  rm -f "$dir.log"
  rm -rf "$dir"/var/cache/apt/archives/*.deb "$dir"/var/lib/apt/lists/*
  step "$BASE: docker import ($(du -sh "$dir" | cut -f1))"
  tar -C "$dir" -c . | docker import --change "LABEL sparkpack.inputs=$base_hash" --change 'CMD ["/bin/bash"]' - "$BASE" >/dev/null
  rm -rf "$dir"; trap - EXIT
  echo "$BASE" >> "$builtlog"
fi
base_id=$(image_id "$BASE")

# build IMAGE HASH DOCKERFILE [docker build args...] < context tar
build() {
  local image=$1 hash=$2 dockerfile=$3; shift 3
  step "$image: docker build ($dockerfile)"
  local log; log=$(mktemp /tmp/sparkpack-build.XXXXXX.log)
  # Progress: the builder's steps; the whole output only on failure.
  if ! docker build -f "$dockerfile" --build-arg "BASE=$BASE" --label "sparkpack.inputs=$hash" -t "$image" "$@" - 2>&1 |
      tee "$log" | grep --line-buffered '^Step ' | while IFS= read -r l; do echo "    [+$(( $(date +%s) - t0 ))s] ${l:0:110}"; done; then
    echo "build-images: docker build of $image failed; its output:" >&2; tail -40 "$log" >&2; rm -f "$log"; exit 1
  fi
  rm -f "$log"
  echo "$image" >> "$builtlog"
}

# ---- Go builder: base + gcc + the host's Go ------------------------------------
goroot=$(go env GOROOT)
gover=$(go env GOVERSION)
need=$(sed -n 's/^go //p' go.mod)
if [ "$(printf '%s\n%s\n' "${need}" "${gover#go}" | sort -V | head -1)" != "$need" ]; then
  echo "build-images: the host's Go is $gover, go.mod needs go $need" >&2; exit 1
fi
# Go modules: containers here cannot use the module proxy (the network's TLS
# is not the one a fresh Debian trusts), so the builder image carries a file
# proxy of exactly go.sum's modules, made on the host from its module cache
# (downloading what is missing), and sets GOPROXY to it.
h=$(EXTRA="$base_id $gover" inputs_of docker/local/golang.Dockerfile go.mod go.sum)
if fresh "$GO_IMAGE" "$h"; then step "$GO_IMAGE: cached ($gover)"; else
  ctx=$(mktemp -d /tmp/sparkpack-golang.XXXXXX)
  step "$GO_IMAGE: the host's $gover and go.sum's modules (a file proxy) into the image"
  GOMODCACHE=$ctx/mod GOFLAGS=-modcacherw GOPROXY="file://$(go env GOMODCACHE)/cache/download,$(go env GOPROXY)" go mod download
  mv "$ctx/mod/cache/download" "$ctx/modproxy"; rm -rf "$ctx/mod"
  cp docker/local/golang.Dockerfile "$ctx/"
  tar -c -C "$ctx" golang.Dockerfile modproxy -C "$(dirname "$goroot")" --transform "s,^$(basename "$goroot"),go," "$(basename "$goroot")" |
    build "$GO_IMAGE" "$h" golang.Dockerfile
  rm -rf "$ctx"
fi
go_id=$(image_id "$GO_IMAGE")

# ---- sparkpack: the real docker/Dockerfile -------------------------------------
# Context: what `go build ./cmd/sparkpack` reads (Go sources but tests, go.mod,
# go.sum, embedded files), as git sees the tree (tracked and untracked, not
# ignored). Docs, tests, scripts and docker/ stay out, so that editing them
# neither rebuilds the image nor busts the builder's layer cache (the classic
# builder ignores docker/Dockerfile.dockerignore, which is about the same list).
files=$(git ls-files -co --exclude-standard |
  grep -v -E '^(\.ci|docs|docker|scripts|examples|artifacts|bin)/|_test\.go$|(^|/)testdata/|(^|/)[^/]*\.md$|(^|/)\.gitignore$' |
  while read -r f; do [ -f "$f" ] && echo "$f"; done)
h=$(EXTRA="$go_id $base_id $(val SPARKPACK_VERSION) $(sha256sum docker/Dockerfile)" inputs_of $files)
if fresh "$SPARKPACK_IMAGE" "$h"; then step "$SPARKPACK_IMAGE: cached"; else
  # The classic builder ignores <Dockerfile>.dockerignore, so the context is
  # made here from the same file list.
  { echo "$files"; echo docker/Dockerfile; } | tar -c -T - | build "$SPARKPACK_IMAGE" "$h" docker/Dockerfile \
    --build-arg "GO_IMAGE=$GO_IMAGE" --build-arg "RUNTIME_IMAGE=$BASE" --build-arg "VERSION=$(val SPARKPACK_VERSION)"
fi

# ---- Mesos 1.12 ----------------------------------------------------------------
mesos_bin=$(scripts/mesos-bin.sh) || { echo "build-images: no Mesos build (shared/mesos/bin; set MESOS_BIN)" >&2; exit 1; }
mesos_dir=$(cd "$mesos_bin/.." && pwd)
h=$(EXTRA="$base_id" inputs_of docker/local/mesos.Dockerfile "$mesos_dir"/bin/* "$mesos_dir"/lib/*)
if fresh "$MESOS_IMAGE" "$h"; then step "$MESOS_IMAGE: cached"; else
  tar -c -C docker/local mesos.Dockerfile -C "$(dirname "$mesos_dir")" --transform "s,^$(basename "$mesos_dir"),mesos," \
      "$(basename "$mesos_dir")/bin" "$(basename "$mesos_dir")/lib" |
    build "$MESOS_IMAGE" "$h" mesos.Dockerfile
fi

# ---- ZooKeeper and PostgreSQL from Debian ----------------------------------------
h=$(EXTRA="$base_id" inputs_of docker/local/zookeeper.Dockerfile docker/local/zookeeper-entrypoint.sh)
if fresh "$ZOOKEEPER_IMAGE" "$h"; then step "$ZOOKEEPER_IMAGE: cached"; else
  tar -c -C docker/local zookeeper.Dockerfile zookeeper-entrypoint.sh | build "$ZOOKEEPER_IMAGE" "$h" zookeeper.Dockerfile
fi
h=$(EXTRA="$base_id" inputs_of docker/local/postgres.Dockerfile docker/local/postgres-entrypoint.sh)
if fresh "$POSTGRES_IMAGE" "$h"; then step "$POSTGRES_IMAGE: cached"; else
  tar -c -C docker/local postgres.Dockerfile postgres-entrypoint.sh | build "$POSTGRES_IMAGE" "$h" postgres.Dockerfile
fi

# ---- Spark 3.5 STAND-IN: fakespark as spark-submit ---------------------------------
fs_files=$(git ls-files -co --exclude-standard integration/realmesos | grep '\.go$' | grep -v _test.go)
h=$(EXTRA="$base_id $gover $SPARK_VERSION" inputs_of docker/local/spark-standin.Dockerfile go.mod go.sum $fs_files)
if fresh "$SPARK_IMAGE" "$h"; then step "$SPARK_IMAGE: cached"; else
  ctx=$(mktemp -d /tmp/sparkpack-standin.XXXXXX)
  # Built as the real-Mesos tests build it (same flags: the build cache of
  # `make test` serves it); it runs on the same Debian 12 glibc as the host.
  step "$SPARK_IMAGE: go build ./integration/realmesos/fakespark (host Go)"
  go build -o "$ctx/fakespark" ./integration/realmesos/fakespark
  cp docker/local/spark-standin.Dockerfile "$ctx/"
  tar -c -C "$ctx" . | build "$SPARK_IMAGE" "$h" spark-standin.Dockerfile --build-arg "SPARK_VERSION=$SPARK_VERSION"
  rm -rf "$ctx"
fi

if [ -s "$builtlog" ]; then
  step "built $(wc -l < "$builtlog") image(s) in $(( $(date +%s) - t0 ))s: $(paste -sd' ' "$builtlog")"
else
  step "every image was cached ($(( $(date +%s) - t0 ))s)"
fi
rm -f "$builtlog"
