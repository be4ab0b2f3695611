#!/usr/bin/env bash
# deploy-test.sh — `make test-deploy`: brings the docker-compose deployment
# (docker/docker-compose.yml) up for real on this machine and checks it as an
# operator would (docs/deploy.md, "Try it on one machine"):
#
#   1. a Docker engine (scripts/docker-engine.sh: installs docker.io and starts
#      a dockerd of its own when none answers) and compose (docker-compose v1
#      from Debian, or the docker compose plugin);
#   2. the images, built locally (scripts/build-images.sh; cached between runs);
#   3. `up -d` of the compose file itself, with docker/.env but the image names
#      and versions of docker/local/images.env;
#   4. the checks (docker/deploy_test.go, build tag deploytest): jobs through
#      the REST API (TLS, token) and the Spark REST listener, reservations on
#      the real Mesos agents, released afterwards; the leader killed; the
#      master restarted;
#   5. `down -v`, then no container, network or volume of the project may be left.
#
# Exit status: 0 passed, 1 failed, 3 skipped (no Docker engine can be started
# here; the reason is printed). KEEP=1 leaves the stack up after a failure.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
export PATH=$PATH:/usr/local/go/bin

t0=$(date +%s)
step() { echo; echo "==> [deploy-test +$(( $(date +%s) - t0 ))s] $*"; }

step "Docker engine"
if ! engine=$(scripts/docker-engine.sh start); then
  echo "deploy-test: SKIPPED: no Docker engine can be started on this machine (see the messages above)"
  exit 3
fi
export "${engine?}"
echo "using $DOCKER_HOST"

if command -v docker-compose >/dev/null 2>&1; then
  compose_bin=(docker-compose)
elif docker compose version >/dev/null 2>&1; then
  compose_bin=(docker compose)
else
  echo "installing Debian's docker-compose"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q docker-compose >/dev/null
  compose_bin=(docker-compose)
fi
echo "compose: ${compose_bin[*]} ($("${compose_bin[@]}" version --short 2>/dev/null || true))"

step "images (scripts/build-images.sh)"
tb=$(date +%s)
scripts/build-images.sh
build_s=$(( $(date +%s) - tb ))

# The env file: docker/.env with the keys of docker/local/images.env replaced.
work=$(mktemp -d /tmp/sparkpack-deploy.XXXXXX)
keys=$(sed -n 's/^\([A-Z_0-9]*\)=.*/\1/p' docker/local/images.env | paste -sd'|')
{ grep -v -E "^($keys)=" docker/.env; cat docker/local/images.env; } > "$work/deploy.env"
val() { sed -n "s/^$1=//p" "$work/deploy.env" | tail -1; }
project=$(val COMPOSE_PROJECT_NAME)
compose=("${compose_bin[@]}" --env-file "$work/deploy.env" -f "$root/docker/docker-compose.yml" -p "$project")
hostport() { local v; v=$(val "$1"); case "$v" in *:*) echo "$v" ;; *) echo "127.0.0.1:$v" ;; esac; }

leftovers() {
  docker ps -aq --filter "label=com.docker.compose.project=$project"
  docker network ls -q --filter "label=com.docker.compose.project=$project"
  docker volume ls -q --filter "label=com.docker.compose.project=$project"
}
teardown() {
  step "down -v"
  "${compose[@]}" down -v --remove-orphans --timeout 20 2>&1 | sed 's/^/  /'
}
finish() {
  status=$?
  if [ "$status" != 0 ] && [ -n "${stack_up:-}" ]; then
    echo "deploy-test: FAILED; the last lines of the stack's logs:"
    "${compose[@]}" ps 2>&1 | sed 's/^/  /' || true
    "${compose[@]}" logs --no-color --tail 40 2>&1 | tail -300 || true
    if [ -n "${KEEP:-}" ]; then echo "KEEP=1: the stack stays up; take it down with: ${compose[*]} down -v"; rm -rf "$work"; exit "$status"; fi
    teardown || true
  fi
  rm -rf "$work"
  exit "$status"
}
trap finish EXIT

if [ -n "$(leftovers)" ]; then
  step "a previous run's stack is still there: taking it down first"
  teardown
fi

step "compiling the checks (docker/deploy_test.go, build tag deploytest)"
go test -c -tags deploytest -o "$work/deploy.test" ./docker

step "up -d (${compose[*]})"
stack_up=1
tu=$(date +%s)
"${compose[@]}" up -d --no-build 2>&1 | sed 's/^/  /'
upcmd_s=$(( $(date +%s) - tu ))
"${compose[@]}" run --rm --no-deps --entrypoint cat certs /certs/ca.pem > "$work/ca.pem"

step "checks (TestDeployStack)"
export DEPLOY_COMPOSE="${compose[*]}" DEPLOY_CA=$work/ca.pem DEPLOY_UP_STARTED=$tu \
  DEPLOY_API_1=https://$(hostport SPARKPACK_PORT) DEPLOY_API_2=https://$(hostport SPARKPACK_PORT_2) \
  DEPLOY_MESOS=http://$(hostport MESOS_MASTER_PORT)
(cd docker && "$work/deploy.test" -test.v -test.count=1 -test.timeout 30m -test.run '^TestDeployStack$') 2>&1 | tee "$work/checks.log" | grep --line-buffered -E -- '^(=== RUN|--- |PASS|FAIL|ok)|\[deploy|waiting for|deploy_test.go:[0-9]+: [^ ]' || true
if ! grep -q '^PASS$' "$work/checks.log"; then
  echo "deploy-test: the checks failed:"; grep -v '^\s*$' "$work/checks.log" | tail -40
  exit 1
fi
stack_up=
teardown
left=$(leftovers)
if [ -n "$left" ]; then
  echo "deploy-test: FAILED: down -v left these behind:"; echo "$left"
  exit 1
fi
echo "nothing left: no container, network or volume of project $project"

step "summary"
echo "images: ${build_s}s (scripts/build-images.sh; 'cached' above means nothing was rebuilt)"
echo "up -d returned after ${upcmd_s}s"
grep -o 'TIME .*' "$work/checks.log" | sed 's/^TIME /  /' || true
echo "deploy-test: PASSED in $(( $(date +%s) - t0 ))s"
