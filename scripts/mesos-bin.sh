#!/usr/bin/env bash
# mesos-bin.sh — prints the folder of the Mesos build that the real-Mesos
# tests (integration/realmesos) run: $MESOS_BIN when set, else
# shared/mesos/bin beside the repository (or beside one of its parent
# folders, for a git worktree), as ../shared sits beside a CI clone.
# Exits 1, printing nothing, when there is none or MESOS_BIN=off.
set -euo pipefail
if [ -n "${MESOS_BIN:-}" ]; then
  case "$MESOS_BIN" in off|none) exit 1 ;; esac
  echo "$MESOS_BIN"
  exit 0
fi
dir=$(dirname "$(cd "$(dirname "$0")/.." && pwd)")
while :; do
  if [ -x "$dir/shared/mesos/bin/mesos-master" ] && [ -x "$dir/shared/mesos/bin/mesos-agent" ]; then
    echo "$dir/shared/mesos/bin"
    exit 0
  fi
  [ "$dir" = / ] && exit 1
  dir=$(dirname "$dir")
done
