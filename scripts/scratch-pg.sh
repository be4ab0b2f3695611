#!/usr/bin/env bash
# scratch-pg.sh — a throw-away PostgreSQL server for tests and the demo.
#
#   scripts/scratch-pg.sh start DIR   initdb into DIR and start a server listening
#                                     on a unix socket in DIR and on 127.0.0.1:<free
#                                     port>; prints the connection URL on stdout
#   scripts/scratch-pg.sh stop DIR    stop the server and delete DIR
#   scripts/scratch-pg.sh kill DIR    stop the server at once (-m immediate), keep DIR
#   scripts/scratch-pg.sh resume DIR  start a killed server again on the same port
#   scripts/scratch-pg.sh url DIR     print the URL of a started server
#
# SCRATCH_PG_DURABLE=1 at start keeps PostgreSQL's durable defaults (fsync,
# full_page_writes on), for benchmarks of durable writes; tests run without.
#
# When the PostgreSQL server binaries are missing it installs Debian's
# postgresql package (as root, or with sudo); otherwise it prints the command
# to run. initdb refuses to run as root, so as root the server runs as the
# "postgres" user (created by the package).
set -euo pipefail

die() { echo "scratch-pg: $*" >&2; exit 1; }
say() { echo "scratch-pg: $*" >&2; }

find_bindir() {
  local d
  for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
    [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ] && { echo "$d"; return 0; }
  done
  if command -v pg_ctl >/dev/null 2>&1 && command -v initdb >/dev/null 2>&1; then
    dirname "$(command -v pg_ctl)"; return 0
  fi
  return 1
}

install_pg() {
  local cmd="apt-get update && apt-get install -y postgresql"
  if [ "$(id -u)" = 0 ]; then
    say "PostgreSQL server not found; installing Debian's postgresql package (takes a minute)"
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql) >&2 \
      || die "installing postgresql failed; run: $cmd"
  elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    say "PostgreSQL server not found; installing it with sudo"
    (sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql) >&2 \
      || die "installing postgresql failed; run: sudo $cmd"
  else
    die "PostgreSQL server binaries not found. Install them with: sudo $cmd"
  fi
}

# as_owner runs a command as the user that owns the cluster.
as_owner() {
  if [ "$(id -u)" = 0 ]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

free_port() {
  local p
  for _ in $(seq 1 200); do
    p=$(( 20000 + RANDOM % 12000 ))  # below Linux's ephemeral port range
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
      echo "$p"; return 0
    fi
  done
  die "no free TCP port found on 127.0.0.1"
}

url_of() { # DIR
  local dir=$1
  [ -f "$dir/port" ] || die "no server in $dir (run: $0 start $dir)"
  echo "postgres://postgres@127.0.0.1:$(cat "$dir/port")/postgres?sslmode=disable"
}

# start_server starts the cluster in DIR on the port in DIR/port. With
# "retry" it picks another free port when that one is taken meanwhile.
# fsync is off (a scratch server survives a server crash, not an OS crash);
# synchronous_commit stays on, so a committed transaction is never lost.
start_server() { # DIR [retry]
  local dir=$1 retry=${2:-} bindir port attempt
  bindir=$(cat "$dir/bindir")
  local durability="-c fsync=off -c full_page_writes=off"
  [ -f "$dir/durable" ] && durability=""
  for attempt in 1 2 3 4 5; do
    port=$(cat "$dir/port")
    if as_owner "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
      -o "-p $port -k $dir -c listen_addresses=127.0.0.1 $durability -c max_connections=200" \
      start >&2; then
      return 0
    fi
    if [ -z "$retry" ] || ! grep -q "could not bind\|could not create any TCP" "$dir/server.log" 2>/dev/null; then
      break
    fi
    say "port $port is taken; trying another (attempt $attempt)"
    free_port > "$dir/port"
  done
  cat "$dir/server.log" >&2 2>/dev/null
  die "the server in $dir did not start; see the log above"
}

cmd=${1:-}; dir=${2:-}
[ -n "$cmd" ] && [ -n "$dir" ] || die "usage: $0 start|stop|kill|resume|url DIR"
case "$cmd" in
start)
  bindir=$(find_bindir) || { install_pg; bindir=$(find_bindir) || die "postgresql installed but initdb not found"; }
  [ -e "$dir/data" ] && die "$dir/data exists already; stop it first ($0 stop $dir)"
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd)
  [ ${#dir} -lt 90 ] || die "$dir is too long for a unix socket path; use a shorter directory"
  if [ "$(id -u)" = 0 ]; then
    id postgres >/dev/null 2>&1 || useradd --system --home-dir /var/lib/postgresql --shell /bin/bash postgres
    chown postgres "$dir"
    chmod 0755 "$dir"
  fi
  echo "$bindir" > "$dir/bindir"
  [ "${SCRATCH_PG_DURABLE:-}" = 1 ] && touch "$dir/durable"
  say "initdb in $dir/data"
  as_owner "$bindir/initdb" -D "$dir/data" -U postgres -A trust -E UTF8 --no-locale >"$dir/initdb.log" 2>&1 \
    || { cat "$dir/initdb.log" >&2; die "initdb failed; see the log above"; }
  free_port > "$dir/port"
  start_server "$dir" retry
  say "PostgreSQL up on 127.0.0.1:$(cat "$dir/port") (socket dir $dir)"
  url_of "$dir"
  ;;
resume)
  start_server "$dir"
  url_of "$dir"
  ;;
kill)
  as_owner "$(cat "$dir/bindir")/pg_ctl" -D "$dir/data" -m immediate -w stop >&2 || true
  ;;
stop)
  if [ -f "$dir/bindir" ] && [ -d "$dir/data" ]; then
    as_owner "$(cat "$dir/bindir")/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
  fi
  rm -rf "$dir"
  ;;
url)
  url_of "$dir"
  ;;
*)
  die "unknown command $cmd; use start|stop|kill|resume|url"
  ;;
esac
