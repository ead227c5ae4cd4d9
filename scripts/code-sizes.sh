#!/usr/bin/env bash
# The sizes of the code (issue 60, size and form): every function, initializer
# and deinitializer in Sources/**/*.swift longer than 80 lines (from the line of
# its declaration to the line of its closing brace), and every file of
# Sources/ShareIngestCore longer than 500 lines. Braces in comments and string
# literals are not counted (the code is read as scripts/check-doc-links.py
# reads it); closures are part of the function they are in.
#
# usage: scripts/code-sizes.sh
# Output: one line per finding, `path:line: name of N lines (over 80)` or
# `path: file of N lines (over 500)`; nothing when there is none.
# Exit status: 1 when it finds anything; 0 otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
exec python3 scripts/code-sizes.py "$@"
