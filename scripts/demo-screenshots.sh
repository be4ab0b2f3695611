#!/usr/bin/env bash
# demo-screenshots.sh — takes the README's screenshots of the demo's
# dashboard (at start, busy and idle, and a running job's page) again: runs TestDemoShowsTheProduct
# (the demo at --sim-speed 8 in headless Chromium; about a minute) and copies
# its screenshots to docs/images/. Uses SPARKPACK_TEST_DATABASE_URL when
# set, else a PostgreSQL server of the test's own.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh test >&2
art=$(mktemp -d)
trap 'rm -rf "$art"' EXIT
echo "demo-screenshots: running TestDemoShowsTheProduct (about a minute)" >&2
SPARKPACK_ARTIFACTS="$art" go test -count=1 -timeout 10m -run '^TestDemoShowsTheProduct$' ./integration/
mkdir -p docs/images
for n in demo-start demo-busy demo-idle demo-job; do
  cp "$art/$n.png" "docs/images/$n.png"
  echo "demo-screenshots: docs/images/$n.png" >&2
done
