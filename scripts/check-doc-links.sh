#!/usr/bin/env bash
# Fails, naming file:line, on each ``symbol`` link (DocC's double-backtick
# symbol link) in a `///` doc comment under Sources/ that names nothing
# declared in the package's sources: a type, a member of the type the link
# names (``Type/member``), or a function, initialiser or case whose argument
# labels are exactly the link's (``Type/method(_:label:)``, ``init(row:)``);
# and on each relative link of README.md, BENCHMARKS.md and docs/*.md (the
# README and its pages, issue 60) to a file that does not exist or to an
# #anchor that is no heading of it.
# Prints nothing and exits 0 when every link resolves. The rules are in
# scripts/check-doc-links.py. Run by scripts/test.sh (through DocLinkTests).
set -euo pipefail
cd "$(dirname "$0")/.."
exec python3 scripts/check-doc-links.py "$@"
