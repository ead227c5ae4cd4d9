#!/usr/bin/env bash
# Checks that the public API of the ShareIngest library is the one listed in
# api/ShareIngest.api.txt (the test PublicAPITests, which dumps the built module
# with the toolchain's swift-api-digester and normalises it).
#
#   scripts/api-check.sh            # fails, with the added and removed lines, if the API changed
#   scripts/api-check.sh --record   # rewrites api/ShareIngest.api.txt after a deliberate change;
#                                   # review `git diff api/` and commit it with the change
# scripts/test.sh runs the same test with the rest of the suite.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "${1:-}" = "--record" ]; then
  export RECORD_API=1
elif [ $# -gt 0 ]; then
  echo "usage: scripts/api-check.sh [--record]" >&2
  exit 2
fi
swift build --build-tests 2>&1 | grep -vE "warning: (prohibited flag|'main': Source files)" | tail -n 1
status=0
swift test --skip-build --filter 'PublicAPITests' 2>&1 | awk '!/^(◇|↳)/' || status=$?
if [ "${RECORD_API:-}" = "1" ]; then
  # Recording always fails the test (so it cannot be left on); here it is what was asked.
  git --no-pager diff --stat -- api/ || true
  exit 0
fi
exit "$status"
