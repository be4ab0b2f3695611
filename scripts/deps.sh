#!/usr/bin/env bash
# deps.sh — installs what building and testing sparkpack needs on Debian or
# Ubuntu: Go modules, and the Debian packages named below (only those
# missing). Run as root, or as a user with passwordless sudo; otherwise it
# prints the command to run.
#
#   scripts/deps.sh build   packages to build and run sparkpack
#   scripts/deps.sh test    packages to run every test as well; with a
#                           Mesos build at hand (scripts/mesos-bin.sh:
#                           $MESOS_BIN or ../shared/mesos/bin), also the
#                           Debian 12 packages it needs at run time
set -euo pipefail
cd "$(dirname "$0")/.."

mode=${1:-test}
# coinor-libcbc-dev + pkgconf: the CBC MIP solver behind the ilp policy (cgo).
# postgresql: the scratch database of the tests and the demo.
pkgs=(coinor-libcbc-dev pkgconf postgresql)
mesos_bin=""
if [ "$mode" = test ]; then
  # chromium: the dashboard's browser tests; docker-compose: validates docker/;
  # zookeeper: --mesos-master zk:// is tested against a real ZooKeeper.
  pkgs+=(chromium docker-compose zookeeper)
  # The real Mesos 1.12 build of ../shared/mesos (its README lists these;
  # integration/realmesos keeps the same list in RuntimePackages).
  if mesos_bin=$(scripts/mesos-bin.sh); then
    pkgs+=(libapr1 libarchive13 libcurl4 libgrpc29 libgrpc++1.51 libprotobuf32 libsasl2-2 libsasl2-modules libsvn1 libunwind8 zlib1g libzookeeper-mt2)
  fi
fi

missing=()
for p in "${pkgs[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done

if [ ${#missing[@]} -gt 0 ]; then
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "deps: missing ${missing[*]} and this is not a Debian-like system; install their equivalents by hand" >&2
    exit 1
  fi
  sudo=""
  if [ "$(id -u)" != 0 ]; then
    if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
      sudo="sudo"
    else
      echo "deps: missing Debian packages: ${missing[*]}" >&2
      echo "deps: install them with: sudo apt-get update && sudo apt-get install -y ${missing[*]}" >&2
      exit 1
    fi
  fi
  echo "deps: installing ${missing[*]} (apt-get; this takes a few minutes the first time)"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if [ -n "$mesos_bin" ]; then
  if ! out=$("$mesos_bin/mesos-master" --version 2>&1); then
    echo "deps: the Mesos build in $mesos_bin does not run: $out" >&2
    echo "deps: check 'ldd $mesos_bin/mesos-master' for libraries not found, or set MESOS_BIN=off to test without a real Mesos" >&2
    exit 1
  fi
  echo "deps: real Mesos for the tests: $out ($mesos_bin)"
fi

if ! command -v go >/dev/null 2>&1; then
  echo "deps: Go is not on PATH; install Go 1.26 or later (https://go.dev/doc/install) and try again" >&2
  exit 1
fi
echo "deps: downloading Go modules"
go mod download
echo "deps: ready"
