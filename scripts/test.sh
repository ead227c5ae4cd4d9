#!/usr/bin/env bash
# Runs every test: the package's Swift tests (on the real libvips and libav,
# including the end-to-end tests of the built `share` binary), then the example
# host-app package (Examples/HostAppTests), which uses the library as an app's
# test suite would, a new package made of the README's library lines, `make
# install` into a scratch folder, the doc comments' symbol links
# (scripts/check-doc-links.sh), the decisions taken outside the lifecycles
# (scripts/lifecycle-decisions.sh), the folders' references without a cycle
# (scripts/folder-references.sh --strict), the sizes of functions and files
# (scripts/code-sizes.sh), the formatter's lint (`swift format lint --strict`),
# that every breakage still applies (`scripts/mutation-check.sh --stale`),
# then the memory check (scripts/memcheck.sh: `share` under valgrind on small,
# odd-size and committed media). Each part prints what it took. Exits non-zero
# if any fails. (The memory check once ran beside the suite at the lowest
# priority: the suite keeps both cores busy, so it finished no sooner.)
set -euo pipefail
cd "$(dirname "$0")/.."

# Passing tests are summarised; failures, issues and the closing line are kept.
summarise() { awk '!/^(◇|↳)/ && !(/^✔ (Test|Suite) / && !/^✔ Test run with/)'; }
build_noise='warning: (prohibited flag|'"'"'main'"'"': Source files)'
started=$SECONDS
took() { echo "test.sh: $1 took $((SECONDS - started)) s (at $SECONDS s)"; started=$SECONDS; }

bash scripts/setup.sh
# The doc comments' ``symbol`` links, each naming a declaration (a second: before
# the build, so a stale one is named at once; DocLinkTests runs it in the suite too).
docs=0
bash scripts/check-doc-links.sh || docs=$?
# Decisions about items and batches taken outside ItemLifecycle and BatchLifecycle
# (a grep: before the build too; LifecycleTests runs it in the suite as well).
bash scripts/lifecycle-decisions.sh || docs=$?
# The folders of Sources/ShareIngestCore without a cycle between them (their
# references only: before the build too; FolderReferenceTests runs it in the suite as well).
folders=$(bash scripts/folder-references.sh --strict) || { docs=$?; echo "$folders" | sed -n '/^cycles/,$p'; }
# Functions over 80 lines and files of ShareIngestCore over 500 (issue 60, size
# and form: a read of the sources, before the build too; CodeSizeTests runs it
# in the suite as well).
bash scripts/code-sizes.sh || docs=$?
# The formatter's lint (.swift-format: four-space indent, 120 columns; a few
# seconds, before the build too; FormatTests runs it in the suite as well).
swift format lint --strict --parallel --recursive Sources Tests Examples Plugins Fuzz Package.swift || docs=$?
# Every breakage of scripts/mutations/ still applies (its code found once, on a
# copy: a refactor that moves the code a breakage quotes is named here).
bash scripts/mutation-check.sh --stale || docs=$?
took "set-up and the source checks"
swift build --build-tests 2>&1 | grep -vE "$build_noise" | tail -n 3
took "the debug build"

# The release binary, for the test that runs it with every test switch set and
# sees them ignored (they exist only in debug builds). Only `share` (about 6
# minutes on 2 cores, before the suite: the suite's own processes would slow it).
swift build -c release --product share 2>&1 | grep -vE "$build_noise" | tail -n 1
# and share-helper, which the release share starts its helpers from (beside itself).
swift build -c release --product share-helper 2>&1 | grep -vE "$build_noise" | tail -n 1
took "the release build"
export SHARE_RELEASE_BINARY="$PWD/.build/release/share"
main=0
swift test --skip-build 2>&1 | summarise || main=$?
took "the suite"

# The example package builds share-ingest again in its own .build (slow the first time).
# Its lines are prefixed, so the main suite's closing "Test run with N tests" line
# stays the only unprefixed one.
example=0
echo "Examples/HostAppTests: building"
{ swift build --build-tests --package-path Examples/HostAppTests 2>&1 | grep -vE "$build_noise" | tail -n 3 \
    && swift test --skip-build --package-path Examples/HostAppTests 2>&1 | summarise; } \
  | sed -u 's/^/HostAppTests: /' || example=$?
took "Examples/HostAppTests"

# The README's library lines, exactly, as a new package (about 2 minutes: it builds
# ShareIngest in its own .build), and `make install` into a scratch folder: the man
# page opens in man, and bash finds the completion where bash-completion looks.
readme=0
bash scripts/check-readme-package.sh || readme=$?
installed="$(mktemp -d /tmp/share-install.XXXXXX)"
if make --no-print-directory install DESTDIR="$installed" >/dev/null \
    && MANPATH="$installed/usr/local/share/man" man -P cat share 2>/dev/null | grep -q "share ingest" \
    && bash --norc -c ". $installed/usr/local/share/bash-completion/completions/share && complete -p share" | grep -q _share \
    && [ -x "$installed/usr/local/bin/share-helper" ] \
    && { SHARE_HELPER_PATH= "$installed/usr/local/bin/share" doctor --json 2>/dev/null || true; } | grep -q "\"helperExecutable\":\"$installed/usr/local/bin/share-helper\""; then
    echo "make install: share, share-helper (found beside share by share doctor), share.1 and the completions installed and found"
else
    echo "make install: FAILED" >&2
    readme=1
fi
rm -rf "$installed"
took "the README's package and make install"

# The release `share` and `share-helper` built above, under valgrind (421 s for
# every batch, where the debug build took 980 s: its unoptimised Swift; a read
# one pixel past a libvips buffer is still reported, and the Swift compiler's
# optimised enum copies are the one pattern suppressed, scripts/memcheck.supp).
memcheck=0
bash scripts/memcheck.sh || memcheck=$?
took "the memory check"
echo "test.sh: $SECONDS s in all"

if [ "$main" -ne 0 ]; then exit "$main"; fi
if [ "$docs" -ne 0 ]; then exit "$docs"; fi
if [ "$example" -ne 0 ]; then exit "$example"; fi
if [ "$readme" -ne 0 ]; then exit "$readme"; fi
exit "$memcheck"
