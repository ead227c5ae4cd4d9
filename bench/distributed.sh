#!/usr/bin/env bash
# Throughput of the distributed mode (issue 4): 1, 2 and 4 `share worker`
# processes (one thread each) against the local in-process pipeline, on the same
# drop, with a throwaway PostgreSQL on loopback. Prints wall seconds and items/s.
#   SHARE_BIN=.build/release/share DROP=bench/corpus/scale100 bash bench/distributed.sh
set -euo pipefail
cd "$(dirname "$0")/.."
share=${SHARE_BIN:-.build/release/share}
drop=${DROP:-bench/corpus/scale100}
rounds=${ROUNDS:-3}
work=$(mktemp -d)
chmod 755 "$work"  # the server runs as the postgres user
port=$((40000 + RANDOM % 20000))
url=$(bash scripts/pg-throwaway.sh start "$work/pg" "$port") || { cat "$work/pg/"*.log >&2; exit 1; }
trap 'bash scripts/pg-throwaway.sh stop "$work/pg"; rm -rf "$work"' EXIT
"$share" db migrate --db "$url" 2>/dev/null
items=$(find "$drop" -type f ! -name '.*' | wc -l)

median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
seconds() { local start=$(date +%s.%N); "$@" >/dev/null 2>&1; awk -v a="$(date +%s.%N)" -v b="$start" 'BEGIN { print a - b }'; }
calc() { awk "BEGIN { print $1 }"; }

echo "drop: $drop ($items items), rounds: $rounds, share: $share"
printf "%-10s %10s %10s %12s\n" mode "median s" "items/s" "ms/item"
local_times=$(for r in $(seq "$rounds"); do seconds "$share" ingest --quiet --container "$work/local-$r" "$drop"; done | median)
printf "%-10s %10.2f %10.1f %12.1f\n" local "$local_times" "$(calc "$items / $local_times")" "$(calc "1000 * $local_times / $items")"
for workers in 1 2 4; do
  times=$(for r in $(seq "$rounds"); do
    pids=()
    for w in $(seq "$workers"); do "$share" worker --db "$url" --concurrency 1 --quiet --name "w$w" & pids+=($!); done
    sleep 0.5
    seconds "$share" ingest --quiet --db "$url" --container "$work/dist-$workers-$r" "$drop"
    kill -TERM "${pids[@]}"; wait "${pids[@]}" 2>/dev/null || true
  done | median)
  printf "%-10s %10.2f %10.1f %12.1f\n" "$workers-worker" "$times" "$(calc "$items / $times")" "$(calc "1000 * $times / $items")"
done
