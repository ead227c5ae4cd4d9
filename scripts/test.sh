#!/usr/bin/env bash
# Runs every test: the package's Swift tests (on the real libvips and libav,
# including the end-to-end tests of the built `share` binary).
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh
swift build --build-tests 2>&1 | grep -vE "warning: (prohibited flag|'main': Source files)" | tail -n 3
# Passing tests are summarised; failures, issues and the closing line are kept.
swift test --skip-build 2>&1 | awk '!/^(◇|↳)/ && !(/^✔ (Test|Suite) / && !/^✔ Test run with/)'
exit "${PIPESTATUS[0]}"
