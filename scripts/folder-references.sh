#!/usr/bin/env bash
# The references between Sources/ShareIngestCore's folders (Pipeline, Journal,
# Stages, Model, …; the files at its top as "(top)"): for each folder, which
# other folders' types its files name (the types declared at a file's top
# level, found in the code with comments and strings left out; a name declared
# in two folders is not counted), then the cycles (folders that reach each
# other, as strongly connected sets) and the pairs that reference each other
# both ways.
#
# usage: scripts/folder-references.sh [--strict]
# Exit status: 0, whatever it finds; with --strict, 1 when there is a cycle.
# scripts/test.sh runs it with --strict (before the build), and FolderReferenceTests
# in the suite: the folders are layered (docs/design.md, "Layers").
set -euo pipefail
cd "$(dirname "$0")/.."
exec python3 scripts/folder-references.py "$@"
