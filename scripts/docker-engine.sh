#!/usr/bin/env bash
# docker-engine.sh — makes a Docker engine available for the deploy test
# (scripts/deploy-test.sh) and the local images (scripts/build-images.sh).
#
#   scripts/docker-engine.sh start   prints DOCKER_HOST=... for the engine to use
#   scripts/docker-engine.sh stop    stops the engine this script started (if any)
#
# An engine that already answers (DOCKER_HOST, or the default socket) is
# used as it is. Otherwise Debian's docker.io is installed when missing and
# a dockerd of our own is started with its own data root, exec root,
# pidfile and socket (SPARKPACK_DOCKER_ROOT, default /var/lib/sparkpack-docker),
# so that it never disturbs another engine on the machine; its images stay
# in the data root between runs (the image cache of build-images.sh).
# Exit status 3 means no engine can be had here (the caller skips).
set -euo pipefail

root=${SPARKPACK_DOCKER_ROOT:-/var/lib/sparkpack-docker}
run=${SPARKPACK_DOCKER_RUN:-/run/sparkpack-docker}
sock=$run/docker.sock
pidfile=$run/dockerd.pid
log=$root/dockerd.log

say() { echo "docker-engine: $*" >&2; }

answers() { timeout 20 docker ${1:+-H "$1"} info >/dev/null 2>&1; }

install() {
  if ! command -v dockerd >/dev/null 2>&1 || ! command -v docker >/dev/null 2>&1; then
    if [ "$(id -u)" != 0 ]; then say "docker.io is not installed and we are not root"; exit 3; fi
    say "installing Debian's docker.io"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q docker.io >&2 || { say "apt-get install docker.io failed"; exit 3; }
  fi
}

start() {
  if [ -n "${DOCKER_HOST:-}" ] && answers "$DOCKER_HOST"; then echo "DOCKER_HOST=$DOCKER_HOST"; return; fi
  if [ -z "${DOCKER_HOST:-}" ] && [ -S /var/run/docker.sock ] && answers unix:///var/run/docker.sock; then
    echo "DOCKER_HOST=unix:///var/run/docker.sock"; return
  fi
  if [ -S "$sock" ] && answers "unix://$sock"; then echo "DOCKER_HOST=unix://$sock"; return; fi
  install
  if [ "$(id -u)" != 0 ]; then say "starting dockerd needs root"; exit 3; fi
  mkdir -p "$root" "$run"
  say "starting dockerd (data root $root, exec root $run/exec, socket $sock, log $log)"
  # setsid: the engine outlives this script (stop it with: scripts/docker-engine.sh stop).
  setsid dockerd --data-root "$root/data" --exec-root "$run/exec" --pidfile "$pidfile" \
    -H "unix://$sock" \
    >>"$log" 2>&1 < /dev/null &
  for i in $(seq 1 60); do
    if answers "unix://$sock"; then
      say "dockerd is up after ${i}s ($(docker -H "unix://$sock" info --format '{{.ServerVersion}}, storage {{.Driver}}'))"
      echo "DOCKER_HOST=unix://$sock"; return
    fi
    if ! kill -0 "$!" 2>/dev/null; then break; fi
    sleep 1
  done
  say "dockerd did not start; the end of its log:"; tail -20 "$log" >&2 || true
  exit 3
}

stop() {
  if [ -f "$pidfile" ] && pid=$(cat "$pidfile") && kill -0 "$pid" 2>/dev/null; then
    say "stopping dockerd $pid"
    kill "$pid"
    for _ in $(seq 1 30); do kill -0 "$pid" 2>/dev/null || return 0; sleep 1; done
    say "dockerd $pid did not stop within 30 s"; exit 1
  fi
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  *) echo "usage: $0 start|stop" >&2; exit 2 ;;
esac
