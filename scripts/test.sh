#!/usr/bin/env bash
# Runs every test: the package's Swift tests (on the real libvips and libav,
# including the end-to-end tests of the built `share` binary), then the example
# host-app package (Examples/HostAppTests), which uses the library as an app's
# test suite would, then the memory check (scripts/memcheck.sh: `share` under
# valgrind on small, odd-size and committed media). Exits non-zero if any fails.
set -euo pipefail
cd "$(dirname "$0")/.."

# Passing tests are summarised; failures, issues and the closing line are kept.
summarise() { awk '!/^(◇|↳)/ && !(/^✔ (Test|Suite) / && !/^✔ Test run with/)'; }
build_noise='warning: (prohibited flag|'"'"'main'"'"': Source files)'

bash scripts/setup.sh
swift build --build-tests 2>&1 | grep -vE "$build_noise" | tail -n 3
# The release binary, for the test that runs it with every test switch set and
# sees them ignored (they exist only in debug builds). Only `share` (about 6
# minutes on 2 cores, before the suite: the suite's own processes would slow it).
swift build -c release --product share 2>&1 | grep -vE "$build_noise" | tail -n 1
export SHARE_RELEASE_BINARY="$PWD/.build/release/share"
main=0
swift test --skip-build 2>&1 | summarise || main=$?

# The example package builds share-ingest again in its own .build (slow the first time).
# Its lines are prefixed, so the main suite's closing "Test run with N tests" line
# stays the only unprefixed one.
example=0
echo "Examples/HostAppTests: building"
{ swift build --build-tests --package-path Examples/HostAppTests 2>&1 | grep -vE "$build_noise" | tail -n 3 \
    && swift test --skip-build --package-path Examples/HostAppTests 2>&1 | summarise; } \
  | sed -u 's/^/HostAppTests: /' || example=$?

# The debug `share` built above, with debug info, under valgrind (a few minutes).
memcheck=0
bash scripts/memcheck.sh || memcheck=$?

if [ "$main" -ne 0 ]; then exit "$main"; fi
if [ "$example" -ne 0 ]; then exit "$example"; fi
exit "$memcheck"
