#!/usr/bin/env bash
# Two or more `share` builds running the same drop through one `share worker`,
# in alternating runs (A B A B …), each into a new database of one throwaway
# PostgreSQL (loopback, fsync=off) and a new container. Prints each run's
# `share ingest --db` wall seconds and the worker's user and system CPU
# seconds (it and the helpers it reaped, /usr/bin/time), then each build's
# medians. Compare builds side by side in one run: this machine is noisy.
#
#   bash bench/worker-ab.sh DROP ROUNDS SHARE_BIN...
#   THREADS=2 bash bench/worker-ab.sh /tmp/share-scale/text-20000 7 /tmp/a/share /tmp/b/share
#
# LOCAL=1 also runs each build's local `share ingest` of the drop (no
# database) in every round, right after its worker run, and prints each
# build's worker wall over local wall per round and their median (issue 59's
# "one worker ≤ 1.0× local").
#
# (bench/scale.sh makes the drops: SIZES=20000 MODES=1 bash bench/scale.sh.)
set -euo pipefail
[ $# -ge 3 ] || { sed -n 2,12p "$0" >&2; exit 2; }
cd "$(dirname "$0")/.."
drop=$1 rounds=$2
shift 2
threads=${THREADS:-2}
count=$(find "$drop" -type f ! -name '.*' | wc -l)
work=$(mktemp -d)
chmod 755 "$work"
port=$((40000 + RANDOM % 20000))
url=""
cleanup() {
  [ -n "$url" ] && bash scripts/pg-throwaway.sh stop "$work/pg" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
url=$(bash scripts/pg-throwaway.sh start "$work/pg" "$port")
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
n=0
for ((r = 1; r <= rounds; r++)); do
  for b in "$@"; do
    n=$((n + 1))
    db="ab_$n"
    bash scripts/pg-throwaway.sh sql "$port" postgres "CREATE DATABASE $db" >/dev/null
    u="${url%/*}/$db"
    "$b" db migrate --db "$u" >/dev/null 2>&1
    /usr/bin/time -f "%U %S" -o "$work/worker.time" "$b" worker --db "$u" --concurrency "$threads" --quiet --name "ab-$n" 2>>"$work/worker.log" &
    timer=$!
    # Timed from when the worker is live (its start is not the drop's).
    until "$b" status --db "$u" --json | grep -q '"liveWorkers":[1-9]'; do sleep 0.1; done
    /usr/bin/time -f "%e" -o "$work/ingest.time" "$b" ingest --quiet --db "$u" --container "$work/c$n" "$drop" >"$work/out" 2>"$work/ingest.err" || {
      status=$?; [ "$status" -eq 1 ] || { cat "$work/ingest.err" >&2; exit 1; }
    }
    kill -TERM "$(pgrep -P "$timer")"
    wait "$timer" || true
    # A run counts only if it did the work: every item ingested.
    ingested=$("$b" status --db "$u" --json | sed -n 's/.*"ingested":\([0-9]*\).*/\1/p' | head -n 1)
    [ "$ingested" = "$count" ] || { echo "$b: run $n ingested ${ingested:-?} of $count" >&2; exit 1; }
    # (A worker stopped by SIGTERM exits 143: time says so on a first line.)
    read -r user system < <(tail -n 1 "$work/worker.time")
    echo "$r $b $(cat "$work/ingest.time") $user $system" | tee -a "$work/runs"
    rm -rf "$work/c$n"
    if [ "${LOCAL:-0}" = 1 ]; then
      /usr/bin/time -f "%e" -o "$work/local.time" "$b" ingest --quiet --container "$work/l$n" "$drop" >"$work/out" 2>"$work/ingest.err" || {
        status=$?; [ "$status" -eq 1 ] || { cat "$work/ingest.err" >&2; exit 1; }
      }
      echo "$r $b $(cat "$work/local.time")" | tee -a "$work/local"
      rm -rf "$work/l$n"
    fi
  done
done
for b in "$@"; do
  echo "$b: median ingest wall $(awk -v b="$b" '$2 == b { print $3 }' "$work/runs" | median) s," \
    "worker user $(awk -v b="$b" '$2 == b { print $4 }' "$work/runs" | median) s," \
    "worker system $(awk -v b="$b" '$2 == b { print $5 }' "$work/runs" | median) s"
done
if [ "${LOCAL:-0}" = 1 ]; then
  for b in "$@"; do
    awk -v b="$b" 'FILENAME ~ /runs$/ && $2 == b { w[$1] = $3 } FILENAME ~ /local$/ && $2 == b { l[$1] = $3 }
      END { for (r = 1; r in w; r++) if (r in l) printf "%s round %d: worker %s s, local %s s, worker/local %.3f\n", b, r, w[r], l[r], w[r] / l[r] }' \
      "$work/runs" "$work/local" | tee -a "$work/ratios"
    echo "$b: median worker/local $(awk -v b="$b" '$1 == b { print $NF }' "$work/ratios" | median), median local wall $(awk -v b="$b" '$2 == b { print $3 }' "$work/local" | median) s"
  done
fi
if [ $# -eq 2 ]; then
  # Per round: B's worker user CPU over A's (the same round, the same load).
  awk -v a="$1" -v b="$2" '$2 == a { ua[$1] = $4 } $2 == b { ub[$1] = $4 }
    END { for (r = 1; r in ua; r++) if (r in ub) printf "round %d: user B/A %.3f\n", r, ub[r] / ua[r] }' "$work/runs"
fi
