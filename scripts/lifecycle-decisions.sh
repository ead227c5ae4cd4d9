#!/usr/bin/env bash
# Decisions about items, jobs and batches taken outside ItemLifecycle (issue 53):
# a retry count or limit, a backoff, or a state an item, a job or a batch is
# put in, spelled out in the library's code. Prints each, and exits 1, if
# there is any; prints nothing and exits 0 otherwise. Excluded: the lifecycle
# itself and the migrations' SQL (history: the schema as it was then).
# (Pauses between attempts at a lost connection of the worker's own, not an
# item's, are the transport's: they are not matched.)
set -uo pipefail
cd "$(dirname "$0")/.."
found=$(grep -rnE "'(waiting|queued|running|done|failed|claimed|manifesting|abandoned|collected)'|\"(waiting|queued|running)\":? |pow\(2|backoff\(|maxAttempts *[<>]|lostAttempts *\+=|attempts *= *0|restartGrace *=|\?\? *3\b|Attempts *= *3|\? *\.(failed|running) *: *\.(failed|running)|max\(1, *maxAttempts\)" \
    Sources/ShareIngestCore --include=*.swift \
  | grep -v -e 'Pipeline/ItemLifecycle.swift:' -e 'Distributed/QueueSchema.swift:' \
      -e "UPDATE items SET next = '?'" -e 'DROP TABLE items; UPDATE batches' \
      -e "AND batch_id IN (SELECT id FROM batches WHERE state IN ('claimed', 'running', 'manifesting'))")
if [ -n "$found" ]; then
  echo "$found"
  exit 1
fi
