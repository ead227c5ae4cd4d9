#!/usr/bin/env bash
# usage: bash bench/peak-by-process.sh SHARE_BIN DROP   (issue 59: /usr/bin/time %M is the largest of share and the helpers it waited for)
# The parent's own peak (VmHWM, sampled until it exits) and the helpers' (each share-helper's VmHWM, sampled).
b=$1; drop=$2
rm -rf "${WORK:-/tmp}/peak-by-process.C"; "$b" ingest --quiet --container "${WORK:-/tmp}/peak-by-process.C" "$drop" >/dev/null 2>&1 & p=$!
hwm=0; helpers=0
while kill -0 $p 2>/dev/null; do
  v=$(awk '/VmHWM/{print $2}' /proc/$p/status 2>/dev/null); [ -n "$v" ] && [ "$v" -gt "$hwm" ] && hwm=$v
  for c in $(pgrep -f share-helper); do h=$(awk '/VmHWM/{print $2}' /proc/$c/status 2>/dev/null); [ -n "$h" ] && [ "$h" -gt "$helpers" ] && helpers=$h; done
  sleep 0.05
done
echo "$b parent VmHWM ${hwm} kB, largest helper VmHWM ${helpers} kB"
