#!/usr/bin/env bash
# Makes testdata/distributed/v2-queue/: a PostgreSQL queue at schema version 2,
# as the last share with that schema (commit 40313a1) left it, with the
# containers and drops it refers to. MigrationTests (Tests/CLITests) restores
# it, runs today's `share db migrate`, and finishes its work with today's workers.
#
# Two batches, each in a state an operator upgrading may have:
#   done      3 text files, finished: its manifest written.
#   inflight  testdata/sample-drop (7 items): sniffed, copied and probed; then a
#             thumbnail worker was killed (SIGKILL) after two thumbnails, so
#             some thumbnail jobs are done, one may be running under a dead
#             worker's lease, the rest are queued.
#
# The files live under a fixed root (/tmp/share-v2-queue); the dump names it
# and the test replaces it with its own folder.
#
# usage: bash testdata/distributed/make-v2-queue.sh V2_SHARE
#   V2_SHARE: a release build of 40313a1 (git worktree add /tmp/v2 40313a1 &&
#   cd /tmp/v2 && swift build -c release --product share)
set -euo pipefail
v2=$(realpath "${1:?usage: make-v2-queue.sh V2_SHARE}")
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
project="$(cd "$here/../.." && pwd)"
out="$here/v2-queue"
root=/tmp/share-v2-queue
rm -rf "$root" "$out"
mkdir -p "$root"
url=$(bash "$project/scripts/pg-throwaway.sh" start "$root/pg" 25433)
workers=()
stop() {
    for pid in "${workers[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done
    bash "$project/scripts/pg-throwaway.sh" stop "$root/pg" >/dev/null 2>&1 || true
}
trap stop EXIT
sql() { psql -X -q -t -A "$url" -c "$1"; }
# until SQL: waits (at most 60 s) until the query prints t.
until_true() {
    for _ in $(seq 1 600); do [[ "$(sql "$1")" == t ]] && return 0; sleep 0.1; done
    echo "make-v2-queue: gave up waiting for: $1" >&2
    exit 1
}

"$v2" db migrate --db "$url"

mkdir -p "$root/drop-done"
for i in 1 2 3; do printf 'done note %d\n' "$i" >"$root/drop-done/note-$i.txt"; done
cp -R "$project/testdata/sample-drop" "$root/drop-inflight"

"$v2" ingest --db "$url" --no-wait --key ShareKey-done --container "$root/container-done" "$root/drop-done"

"$v2" worker --db "$url" 2>"$root/worker-1.log" &
workers+=("$!")
until_true "SELECT state = 'done' FROM share_batches WHERE key = 'ShareKey-done'"
kill -TERM "${workers[0]}"
wait "${workers[0]}" || true

"$v2" ingest --db "$url" --no-wait --key ShareKey-inflight --container "$root/container-inflight" "$root/drop-inflight"
"$v2" worker --db "$url" --stages sniff,copy,probe 2>"$root/worker-2.log" &
workers+=("$!")
inflight="FROM share_jobs j JOIN share_batches b ON b.id = j.batch_id WHERE b.key = 'ShareKey-inflight'"
until_true "SELECT count(*) = 0 $inflight AND j.stage IN ('sniff', 'copy', 'probe') AND j.state <> 'done'"
kill -TERM "${workers[1]}"
wait "${workers[1]}" || true
# (a brake between stages, so the kill lands with work left)
SHARE_TEST_THROTTLE_MS=200 "$v2" worker --db "$url" --stages thumbnail --concurrency 1 2>"$root/worker-3.log" &
workers+=("$!")
until_true "SELECT count(*) >= 2 $inflight AND j.stage = 'thumbnail' AND j.state = 'done'"
kill -KILL "${workers[2]}"
wait "${workers[2]}" 2>/dev/null || true

mkdir -p "$out"
# Plain SQL that `psql -c` runs whole: INSERTs rather than COPY from stdin, and
# without pg_dump's \restrict lines (psql meta-commands).
pg_dump --no-owner --no-privileges --inserts "$url" | grep -vE '^\\(un)?restrict ' >"$out/queue.sql"
# The drops are made again by the test (three notes; a copy of testdata/sample-drop).
for name in done inflight; do cp -R "$root/container-$name" "$out/container-$name"; done
echo "make-v2-queue: wrote $out"
sql "SELECT b.key, j.stage, j.state, count(*) FROM share_jobs j JOIN share_batches b ON b.id = j.batch_id GROUP BY 1, 2, 3 ORDER BY 1, 2, 3"
