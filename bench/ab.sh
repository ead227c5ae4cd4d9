#!/usr/bin/env bash
# Two or more `share` builds on the same drop, in alternating runs (A B A B …),
# each run into a new container (none removed until the end); prints each
# run's wall and CPU seconds (share and the helpers it reaped), then each
# build's medians. Compare builds side by side in one run: this machine is noisy.
#
#   bash bench/ab.sh DROP ROUNDS SHARE_BIN...
#   TMPDIR=/mnt/bench/tmp bash bench/ab.sh /mnt/bench/takeout/2000/with/Takeout 7 /tmp/share-old /tmp/share-new
set -euo pipefail
[ $# -ge 3 ] || { sed -n 2,9p "$0" >&2; exit 2; }
drop=$1 rounds=$2
shift 2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
for ((r = 1; r <= rounds; r++)); do
  for b in "$@"; do
    n=$((${n:-0} + 1))
    /usr/bin/time -f "%e %U %S" -o "$work/time" "$b" ingest --quiet --container "$work/c$n" "$drop" >/dev/null 2>"$work/err" || { cat "$work/err" >&2; exit 1; }
    read -r wall user system <"$work/time"
    echo "$b $wall $(awk -v u="$user" -v s="$system" 'BEGIN { printf "%.2f", u + s }')" | tee -a "$work/runs"
  done
done
for b in "$@"; do
  echo "$b: median wall $(awk -v b="$b" '$1 == b { print $2 }' "$work/runs" | median) s, CPU $(awk -v b="$b" '$1 == b { print $3 }' "$work/runs" | median) s"
done
