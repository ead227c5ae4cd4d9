#!/usr/bin/env bash
# Decisions about items, jobs and batches taken outside their lifecycle
# (issues 53 and 60), in Sources/ShareIngestCore. Two parts:
#
# 1. Items and jobs (issue 53): a retry count or limit, a backoff, or a state an
#    item or a job is put in, spelled out outside ItemLifecycle. Excluded: the
#    lifecycle itself and the migrations' SQL (history: the schema as it was
#    then). (Pauses between attempts at a lost connection of the worker's own,
#    not an item's, are the transport's: they are not matched.) Any finding
#    here is a failure.
# 2. Batches (issue 60): every decision about a batch's state is
#    BatchLifecycle's (Core/BatchLifecycle.swift). Listed: a batch's state
#    assigned outside it (in Swift, `x.state = .running`, which no longer
#    compiles: BatchRecord.state has no setter; in SQL, `UPDATE … batches SET
#    state` with a state that is not the lifecycle's, `\(BatchLifecycle.sql(…))`),
#    and a set of batch states spelled as a literal outside it (a Swift array
#    of states; an SQL `state IN (…)` / `NOT IN (…)` of literals instead of
#    `\(BatchLifecycle.sql(…))`). Excluded: the lifecycle itself and the
#    migrations (history: the schema as it was then; QueueSchema.swift and
#    BatchJournal's migration statements). Also listed: the fan-in's other
#    decisions taken elsewhere, a failure set on an item or a carried sidecar
#    (`x.failure = …`) outside the two lifecycles (ItemLifecycle.fail,
#    BatchLifecycle.failCarriedSidecars / fail), and "cheap to redo"
#    (`cheapToRedo = …`) computed other than by BatchLifecycle.cheapToRedo.
#    Any finding is a failure.
#
# usage: scripts/lifecycle-decisions.sh [--items | --strict]
#   --items   only part 1 (what LifecycleTests checks: prints nothing when clean)
#   --strict  the same as no option (kept for callers of the time when part 2
#             was only reported)
# Exit status: 1 if either part finds anything; 0 otherwise.
# Prints nothing when there is no finding.
set -uo pipefail
cd "$(dirname "$0")/.."
mode=${1:-}
case "$mode" in ""|--items|--strict) ;; *) echo "usage: $0 [--items | --strict]" >&2; exit 2 ;; esac

items=$(grep -rnE "'(waiting|queued|running|done|failed|claimed|manifesting|abandoned|collected)'|\"(waiting|queued|running)\":? |pow\(2|backoff\(|maxAttempts *[<>]|lostAttempts *\+=|attempts *= *0|restartGrace *=|\?\? *3\b|Attempts *= *3|\? *\.(failed|running) *: *\.(failed|running)|max\(1, *maxAttempts\)" \
    Sources/ShareIngestCore --include=*.swift \
  | grep -v -e 'Core/ItemLifecycle.swift:' -e 'Core/BatchLifecycle.swift:' -e 'Distributed/QueueSchema.swift:' \
      -e "UPDATE items SET next = '?'" -e 'DROP TABLE items; UPDATE batches' \
      -e "AND batch_id IN (SELECT id FROM batches WHERE state IN ('claimed', 'running', 'manifesting'))")
if [ "$mode" = --items ]; then
  [ -n "$items" ] && { echo "$items"; exit 1; }
  exit 0
fi

batch_states='claimed|running|manifesting|done|failed|abandoned|collected'
# Lines that are the lifecycle's or history's.
outside() {
  grep -v -e 'Core/BatchLifecycle.swift:' -e 'Distributed/QueueSchema.swift:' \
    -e 'DROP TABLE items; UPDATE batches' \
    -e "AND batch_id IN (SELECT id FROM batches WHERE state IN ('claimed', 'running', 'manifesting'))"
}
# A batch's state, assigned: a BatchRecord's `state` (Swift: a batch state, or
# another record's state) or a batches table's (SQL: anything but the
# lifecycle's `\(BatchLifecycle.sql(…))`).
assigned=$(grep -rnE "\.state = \.($batch_states)\b|(batch|record|abandoned|sealed)\.state = [a-zA-Z_.]+|UPDATE (share_)?batches( [a-z])? SET( [a-z_]+ = [^,]+,)* state = " \
    Sources/ShareIngestCore --include=*.swift \
  | grep -vE "UPDATE (share_)?batches( [a-z])? SET( [a-z_]+ = [^,]+,)* state = \\\\\(BatchLifecycle\.sql\(" | outside)
# A set of batch states as a literal: a Swift array of two or more states, or
# an SQL list of them (interpolated BatchStates or literals). A job's or an
# item's states (done, failed, queued… through JobQueue.State) are not batch
# states.
sets=$(grep -rnE "\[\.($batch_states)(, *\.($batch_states))+\]|state (NOT )?IN \(('\\\\\(BatchState\.|'($batch_states)')" \
    Sources/ShareIngestCore --include=*.swift \
  | grep -v -e "t\.state NOT IN ('done', 'failed')" | outside)

# The fan-in's other decisions: a failure set on an item or a carried sidecar,
# and "cheap to redo", outside the lifecycles.
decided=$(grep -rnE "[]a-zA-Z0-9_]\.failure = |\bcheapToRedo = " Sources/ShareIngestCore --include=*.swift \
  | grep -v -e 'Core/ItemLifecycle.swift:' -e '\bself\.failure = ' -e 'cheapToRedo = BatchLifecycle\.cheapToRedo(' | outside)

status=0
if [ -n "$items" ]; then
  echo "== item and job decisions outside ItemLifecycle (a failure):"
  echo "$items"
  status=1
fi
if [ -n "$assigned" ] || [ -n "$sets" ] || [ -n "$decided" ]; then
  echo "== batch decisions outside BatchLifecycle (a failure):"
  if [ -n "$assigned" ]; then echo "-- a batch's state assigned:"; echo "$assigned"; fi
  if [ -n "$sets" ]; then echo "-- a set of batch states spelled as a literal:"; echo "$sets"; fi
  if [ -n "$decided" ]; then echo "-- a failure or \"cheap to redo\" decided outside the lifecycles:"; echo "$decided"; fi
  status=1
fi
exit $status
