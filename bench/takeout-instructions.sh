#!/usr/bin/env bash
# What a Takeout sidecar costs, in instructions (issue 34): the drops of
# bench/takeout.sh (N photos, each with its Takeout JSON, against the same
# photos without), each run once through `share ingest --isolation none` under
# valgrind's callgrind, which counts the instructions executed in user space.
# Unlike CPU time on a shared machine, the counts do not vary from run to run;
# they leave out the kernel (file creation, syncs) and the decoder helpers'
# inter-process round trips (decoding runs in-process here).
#
#   N=200 bash bench/takeout-instructions.sh                 # the release build
#   SHARE_BIN=/tmp/share-old N=200 bash bench/takeout-instructions.sh
#   TOP=40 …                                                 # also the 40 functions that differ most (inclusive)
#
# valgrind 3.19 cannot read the DWARF 5 debug information Swift writes: the
# binary is run from a copy without it (strip --strip-debug).
set -euo pipefail
cd "$(dirname "$0")/.."
share=$(realpath "${SHARE_BIN:-.build/release/share}")
n=${N:-200}
root=${TAKEOUT_DIR:-/tmp/share-takeout}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
[ -f "$root/$n/.complete" ] || { TAKEOUT_DIR="$root" SHARE_BIN="$share" N="$n" ROUNDS=1 bash bench/takeout.sh >/dev/null; }
cp "$share" "$work/share" && strip --strip-debug "$work/share"
for side in with without; do
  valgrind --tool=callgrind --callgrind-out-file="$work/$side.out" "$work/share" ingest --quiet --isolation none \
    --container "$work/c-$side" "$root/$n/$side/Takeout" >/dev/null 2>"$work/$side.err" || { cat "$work/$side.err" >&2; exit 1; }
done
with=$(sed -n 's/.*Collected : //p' "$work/with.err")
without=$(sed -n 's/.*Collected : //p' "$work/without.err")
awk -v a="$with" -v b="$without" -v n="$n" 'BEGIN {
  printf "with sidecars: %.1f M instructions; without: %.1f M\n", a / 1e6, b / 1e6
  printf "a sidecar: %+.0f k instructions; a photo (and its share of the start): %.0f k; %+.1f %%\n", (a - b) / n / 1e3, b / n / 1e3, (a / b - 1) * 100 }'
if [ "${TOP:-0}" -gt 0 ]; then
  for side in with without; do
    callgrind_annotate --inclusive=yes --threshold=100 "$work/$side.out" 2>/dev/null | grep -E '^ *[0-9,]+ \(' |
      sed -E 's/^ *([0-9,]+) \([ 0-9.]+%\) +(.*)$/\1\t\2/; s/\t\?\?\?:/\t/; s/ \[[^]]*\]$//' | tr -d , >"$work/$side.txt"
  done
  python3 - "$work/with.txt" "$work/without.txt" "$n" "$TOP" <<'PY'
import subprocess, sys
def load(path):
    table = {}
    for line in open(path):
        count, name = line.rstrip("\n").split("\t", 1)
        table[name] = table.get(name, 0) + int(count)
    return table
a, b, n, top = load(sys.argv[1]), load(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
rows = sorted(((a.get(k, 0) - b.get(k, 0), k) for k in set(a) | set(b)), reverse=True)[:top]
names = subprocess.run(["swift", "demangle", "--simplified"], input="\n".join(k for _, k in rows), capture_output=True, text=True).stdout.split("\n")
for (delta, _), name in zip(rows, names):
    print(f"{delta / n / 1e3:+9.1f} k per sidecar  {name[:120]}")
PY
fi
