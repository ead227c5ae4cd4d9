#!/usr/bin/env bash
# Drops of any size (issue 25): one-line files and small JPEGs, locally and
# through one and two `share worker`s on a throwaway PostgreSQL (loopback,
# fsync=off), recording for each run the wall time, items/s, the peak RSS of
# every process (ingest, each worker) and the store's size per item; then a
# worker's RSS after each of several equal batches in a row.
#
#   SHARE_BIN=.build/release/share bash bench/scale.sh
#   SIZES="1000 10000 100000 1000000" JPEGS=100000 MODES="local 1 2" SOAK="10 20000" bash bench/scale.sh
#
# SIZES: drops of one-line files; JPEGS: a drop of that many small JPEGs (0:
# none); MODES: `local` and/or a number of workers; SOAK: "BATCHES ITEMS" for
# the worker's memory over consecutive batches ("" to skip; "BATCHES ITEMS jpeg"
# for small JPEGs); OPS: N to time `share report --html --contact-sheet` and
# `share gc` on one share of N one-line files (see below). Drops are made
# once under $SCALE_DIR (default /tmp/share-scale) and kept for later runs.
set -euo pipefail
cd "$(dirname "$0")/.."
share=$(realpath "${SHARE_BIN:-.build/release/share}")
sizes=${SIZES:-"1000 10000 100000"}
jpegs=${JPEGS:-0}
modes=${MODES:-"local 1 2"}
soak=${SOAK:-""}
ops=${OPS:-""}
threads=${THREADS:-2}
root=${SCALE_DIR:-/tmp/share-scale}
mkdir -p "$root"
work=$(mktemp -d)
chmod 755 "$work"
port=$((40000 + RANDOM % 20000))
bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)
url=""
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  [ -n "$url" ] && bash scripts/pg-throwaway.sh stop "$work/pg" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

# Drops, made once: DIR/note-N.txt ("line N"), or DIR/photo-N.jpg (64x48 JPEGs).
make_text() {
  [ -f "$root/text-$1/.complete" ] && return
  python3 - "$root/text-$1" "$1" <<'EOF'
import os, sys
folder, count = sys.argv[1], int(sys.argv[2])
os.makedirs(folder, exist_ok=True)
for i in range(1, count + 1):
    with open(f"{folder}/note-{i}.txt", "w") as f:
        f.write(f"line {i}\n")
open(f"{folder}/.complete", "w").close()
EOF
}
make_jpegs() {
  [ -f "$root/jpeg-$1/.complete" ] && return
  mkdir -p "$root/jpeg-$1"
  # One small JPEG per colour, then hard links: the pipeline copies and decodes
  # each as a file of its own.
  for c in 0 1 2 3 4 5 6 7; do
    vips black "$root/jpeg-$1/.seed-$c.v" 64 48 --bands 3 && vips linear "$root/jpeg-$1/.seed-$c.v" "$root/jpeg-$1/.seed-$c.jpg" 1 $((c * 30)) --uchar
    rm -f "$root/jpeg-$1/.seed-$c.v"
  done
  python3 - "$root/jpeg-$1" "$1" <<'EOF'
import os, shutil, sys
folder, count = sys.argv[1], int(sys.argv[2])
for i in range(1, count + 1):
    # Copies, not links: every item is a file of its own on disk.
    shutil.copyfile(f"{folder}/.seed-{i % 8}.jpg", f"{folder}/photo-{i}.jpg")
open(f"{folder}/.complete", "w").close()
EOF
}

calc() { awk "BEGIN { printf \"%.${2:-2}f\", $1 }"; }
hwm() { awk '/VmHWM/ {print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }   # peak RSS, KB
rss() { awk '/VmRSS/ {print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }
# The RSS once the worker has gone idle after a batch (it gives freed memory back
# after a second of idleness): read every 0.2 s until it has not changed for
# three seconds, at most 20 s.
settled_rss() {
  local last now same=0 tries=0
  last=$(rss "$1")
  while ((same < 15 && tries < 100)); do
    sleep 0.2
    now=$(rss "$1")
    if [ "$now" = "$last" ]; then same=$((same + 1)); else same=0; last=$now; fi
    tries=$((tries + 1))
  done
  echo "$last"
}
live() { "$share" status --db "$url" --json | awk -F'"liveWorkers":' '/"summary"/ {split($2, a, /[,}]/); print a[1]}'; }
start_workers() {
  local before
  before=$(live)
  for w in $(seq "$1"); do "$share" worker --db "$url" --concurrency "$threads" --quiet --name "w$w-$RANDOM" 2>>"$work/workers.log" & pids+=($!); done
  until [ "$(live)" -ge $((before + $1)) ]; do sleep 0.1; done
}
stop_workers() { for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done; wait "${pids[@]}" 2>/dev/null || true; pids=(); }
# Runs `share ingest` under /usr/bin/time; prints "WALL PEAK_KB". Its redirect
# URL (the batch's key) is kept in $work/out for `delivered`.
timed() {
  /usr/bin/time -f "%e %M" -o "$work/time" "$share" ingest --quiet "$@" >"$work/out" 2>"$work/ingest.err" || {
    status=$?; [ "$status" -eq 1 ] || { cat "$work/ingest.err" >&2; exit 1; }
  }
  cat "$work/time"
}
# How many items the last `timed` batch delivered, by `share status` (of the
# container, or of the database with --db): a run is only timed if it did the work.
delivered() {  # [CONTAINER]
  local key
  key=$(sed -n 's/.*dataUrl=\([^#]*\)#.*/\1/p' "$work/out")
  if [ -n "${1:-}" ]; then "$share" status --container "$1" --json
  else "$share" status --db "$url" --json; fi | python3 -c '
import json, sys
key = sys.argv[1]
for line in sys.stdin:
    row = json.loads(line)
    if row.get("key") == key:
        print(row["ingested"]); break
else:
    print("?")' "$key"
}

needs_db=0
for mode in $modes; do [ "$mode" != local ] && needs_db=1; done
[ -n "$soak" ] && needs_db=1
if [ "$needs_db" = 1 ]; then
  url=$(bash scripts/pg-throwaway.sh start "$work/pg" "$port")
  "$share" db migrate --db "$url" >/dev/null 2>&1
fi

echo "machine: $(nproc) cores; $(uptime)"
echo "share: $share; worker threads: $threads"
echo
printf "%-22s %-9s %9s %10s %12s %14s %12s %10s\n" drop mode "wall s" "items/s" "ingest MiB" "workers MiB" "store B/item" delivered
run() {  # NAME DIR COUNT
  local name=$1 dir=$2 count=$3
  for mode in $modes; do
    local container="$work/c-$name-$mode"
    if [ "$mode" = local ]; then
      read -r wall peak < <(timed --container "$container" "$dir")
      local store
      store=$(du -cb "$container/.share-ingest/journal.sqlite"* | tail -n 1 | cut -f1)
      printf "%-22s %-9s %9.2f %10.1f %12.1f %14s %12.0f %10s\n" "$name" local "$wall" "$(calc "$count / $wall" 1)" "$(calc "$peak / 1024" 1)" "-" "$(calc "$store / $count" 0)" "$(delivered "$container")"
    else
      start_workers "$mode"
      local before
      before=$("$bin/psql" -X -Atq "$url" -c "SELECT pg_total_relation_size('share_jobs') + pg_total_relation_size('share_batches')")
      read -r wall peak < <(timed --db "$url" --container "$container" "$dir")
      local after workers=""
      after=$("$bin/psql" -X -Atq "$url" -c "SELECT pg_total_relation_size('share_jobs') + pg_total_relation_size('share_batches')")
      for pid in "${pids[@]}"; do workers="$workers$(calc "$(hwm "$pid") / 1024" 0)/"; done
      stop_workers
      printf "%-22s %-9s %9.2f %10.1f %12.1f %14s %12.0f %10s\n" "$name" "$mode w" "$wall" "$(calc "$count / $wall" 1)" "$(calc "$peak / 1024" 1)" "${workers%/}" "$(calc "($after - $before) / $count" 0)" "$(delivered)"
    fi
    rm -rf "$container"
  done
}
for n in $sizes; do
  make_text "$n"
  run "$n one-line files" "$root/text-$n" "$n"
done
if [ "$jpegs" -gt 0 ]; then
  make_jpegs "$jpegs"
  run "$jpegs small JPEGs" "$root/jpeg-$jpegs" "$jpegs"
fi

if [ -n "$soak" ]; then
  read -r batches items kind <<<"$soak"
  if [ "${kind:-text}" = jpeg ]; then make_jpegs "$items"; soaked="$root/jpeg-$items"; what="small JPEGs"
  else make_text "$items"; soaked="$root/text-$items"; what="one-line files"; fi
  echo
  echo "one worker, $batches batches of $items $what in a row: its RSS after each (MiB), and items/s"
  start_workers 1
  worker=${pids[0]}
  line="" rates=""
  for b in $(seq "$batches"); do
    read -r wall _ < <(timed --db "$url" --container "$work/soak-$b" "$soaked")
    line="$line $(calc "$(settled_rss "$worker") / 1024" 1)"
    rates="$rates $(calc "$items / $wall" 0)"
    done_items="${done_items:-} $(delivered)"
    rm -rf "$work/soak-$b"
  done
  peak=$(calc "$(hwm "$worker") / 1024" 1)
  stop_workers
  echo "RSS:$line (peak $peak)"
  echo "items/s:$rates"
  echo "delivered:$done_items"
fi
# The operator's commands on one large share (issue 32, item 7): OPS=N ingests
# N one-line files locally once (kept in $root/ops-N, reused by later runs),
# then times `share report --html --contact-sheet` and, on a copy of the
# container whose manifest is moved to manifests/consumed/ (what the host app
# does; `share open` refuses a manifest over 16 MiB), `share gc --older-than 0`.
if [ -n "$ops" ]; then
  make_text "$ops"
  kept="$root/ops-$ops"
  if [ ! -f "$kept/.complete" ]; then
    rm -rf "$kept"
    read -r wall peak < <(timed --key "Ops$ops" --container "$kept/c" "$root/text-$ops")
    echo "$wall $peak" > "$kept/.complete"
  fi
  read -r wall peak < "$kept/.complete"
  echo
  echo "the operator's commands on one share of $ops one-line files"
  printf "%-44s %9s %10s\n" command "wall s" "peak MiB"
  printf "%-44s %9.2f %10.1f\n" "ingest (when made)" "$wall" "$(calc "$peak / 1024" 1)"
  /usr/bin/time -f "%e %M" -o "$work/time" "$share" report "Ops$ops" --container "$kept/c" --html "$work/page.html" --contact-sheet "$work/sheet.jpg" >/dev/null 2>"$work/report.err" || { cat "$work/report.err" >&2; exit 1; }
  read -r wall peak < "$work/time"
  printf "%-44s %9.2f %10.1f\n" "report --html --contact-sheet" "$wall" "$(calc "$peak / 1024" 1)"
  sed 's/^/  /' "$work/report.err"
  cp -a "$kept/c" "$work/gc"
  sync   # the copy written back first: gc is timed on its own I/O
  mkdir -p "$work/gc/manifests/consumed"
  mv "$work/gc/manifests/Ops$ops.json" "$work/gc/manifests/consumed/"
  /usr/bin/time -f "%e %M" -o "$work/time" "$share" gc --container "$work/gc" --older-than 0 >/dev/null 2>"$work/gc.err" || { cat "$work/gc.err" >&2; exit 1; }
  read -r wall peak < "$work/time"
  printf "%-44s %9.2f %10.1f\n" "gc --older-than 0" "$wall" "$(calc "$peak / 1024" 1)"
  sed 's/^/  /' "$work/gc.err"
  rm -rf "$work/gc"
fi
echo
echo "done: $(uptime)"
