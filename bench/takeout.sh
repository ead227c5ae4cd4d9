#!/usr/bin/env bash
# Takeout at scale (issue 34): a Takeout-like drop of N photos, each with its
# JSON sidecar (`Takeout/Google Photos/Photos from <year>/IMG_n.jpg` +
# `IMG_n.jpg.json`, a tenth of them `.supplemental-metadata.json`), and the same
# photos without sidecars, each run through `share ingest` (release build);
# prints the wall time and the peak RSS of each and the cost of the sidecars.
# The issue's bound: at most 5 % more wall time with the sidecars, in the same
# memory bound as today's large drops.
#
#   N=5000 bash bench/takeout.sh                    # small, on a loaded machine
#   N=100000 SHARE_BIN=.build/release/share bash bench/takeout.sh
#   ROUNDS=3 N=2000 bash bench/takeout.sh           # medians of alternating rounds
#   bash bench/journaled-ext4.sh && TMPDIR=/mnt/bench/tmp TAKEOUT_DIR=/mnt/bench/takeout \
#     ROUNDS=3 N=2000 bash bench/takeout.sh           # drops and containers on an ext4 with a journal
#
# The photos are 8 small vips JPEGs (64x48, one colour each) hard-linked N/8
# times each (the pipeline copies, hashes and decodes each as a file of its
# own; the same 8 contents make duplicates, in both drops alike). With
# SEEDS=DIR, the JPEGs of DIR instead, in turn (SEEDS=bench/corpus/photos N=60:
# the 60 camera-sized photos of the photos scenario, each once): what the
# sidecars cost beside photos as phones take them. Drops are made once under
# $TAKEOUT_DIR (default /tmp/share-takeout) and kept for later runs.
# REMOVE_CONTAINERS=1 removes each run's container once it is measured, for
# drops whose containers do not fit on the disk together (on an ext4 with a
# journal only: see run() below). SETTLE=SECONDS syncs and waits that long
# before each run (the write-back of the last run's files no longer competes).
# Each round's with/without CPU ratio is printed too, and their median: on a
# noisy machine a ratio of two runs made side by side varies less than either.
set -euo pipefail
cd "$(dirname "$0")/.."
share=$(realpath "${SHARE_BIN:-.build/release/share}")
n=${N:-100000}
root=${TAKEOUT_DIR:-/tmp/share-takeout}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

seeds_from=${SEEDS:+$(realpath "$SEEDS")}
[ -n "$seeds_from" ] && root="$root/$(basename "$seeds_from")"

make_drops() {
  [ -f "$root/$n/.complete" ] && return
  rm -rf "$root/$n" && mkdir -p "$root/$n/seeds"
  if [ -n "$seeds_from" ]; then
    c=0
    for f in "$seeds_from"/*.[jJ][pP][gG]; do cp "$f" "$root/$n/seeds/$c.jpg"; c=$((c + 1)); done
  else
  for c in 0 1 2 3 4 5 6 7; do
    vips black "$root/$n/seeds/$c.v" 64 48 --bands 3
    vips linear "$root/$n/seeds/$c.v" "$root/$n/seeds/$c.jpg[Q=80,strip]" 1 $((c * 30)) --uchar
    rm -f "$root/$n/seeds/$c.v"
  done
  fi
  python3 - "$root/$n" "$n" <<'PY'
import json, os, sys
root, n = sys.argv[1], int(sys.argv[2])
seeds = len(os.listdir(f"{root}/seeds"))
for drop in ("with", "without"):
    for i in range(n):
        folder = f"{root}/{drop}/Takeout/Google Photos/Photos from {2015 + i % 10}"
        if i < 10:
            os.makedirs(folder, exist_ok=True)
        name = f"IMG_{i:06d}.jpg"
        os.link(f"{root}/seeds/{i % seeds}.jpg", f"{folder}/{name}")
        if drop == "with":
            taken = 1_420_000_000 + i * 600
            body = {"title": name, "description": "", "imageViews": "3",
                    "creationTime": {"timestamp": str(taken + 86400), "formatted": ""},
                    "photoTakenTime": {"timestamp": str(taken), "formatted": ""},
                    "geoData": {"latitude": 0.0, "longitude": 0.0, "altitude": 0.0, "latitudeSpan": 0.0, "longitudeSpan": 0.0},
                    "geoDataExif": {"latitude": 0.0, "longitude": 0.0, "altitude": 0.0, "latitudeSpan": 0.0, "longitudeSpan": 0.0},
                    "url": "https://photos.google.com/photo/x", "googlePhotosOrigin": {"mobileUpload": {"deviceType": "ANDROID_PHONE"}}}
            suffix = ".supplemental-metadata.json" if i % 10 == 0 else ".json"
            with open(f"{folder}/{name}{suffix}", "w") as f:
                f.write(json.dumps(body, indent=2) + "\n")
open(f"{root}/.complete", "w").close()
PY
}

# Runs `share ingest` under /usr/bin/time and the process's user+system CPU; prints "WALL PEAK_KB CPU".
# Each run gets a new container, and none is removed until the end: on an ext4
# without a journal (this machine's root), every new inode is checked against
# those freed in the last minute or more (ext4 `recently_deleted`), so removing the
# last run's container just before a run makes each file it creates cost more,
# and a drop that creates more files (one with sidecars) more than the other.
runs=0
run() {
  runs=$((runs + 1))
  if [ -n "${SETTLE:-}" ]; then sync; sleep "$SETTLE"; fi
  /usr/bin/time -f "%e %M %U %S" -o "$work/time" "$share" ingest --quiet --container "$work/c$runs" "$1" >/dev/null 2>"$work/err" || { cat "$work/err" >&2; exit 1; }
  awk '{ printf "%s %s %.2f\n", $1, $2, $3 + $4 }' "$work/time"
  [ "${REMOVE_CONTAINERS:-0}" = 1 ] && rm -rf "$work/c$runs"
  return 0
}

# The median of the numbers on standard input.
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

make_drops
rounds=${ROUNDS:-1}
echo "N=$n photos; share $share; $rounds round(s), with and without alternating"
: >"$work/with" && : >"$work/without"
for ((r = 1; r <= rounds; r++)); do
  run "$root/$n/with/Takeout" >>"$work/with"
  run "$root/$n/without/Takeout" >>"$work/without"
  echo "round $r: with $(tail -1 "$work/with"), without $(tail -1 "$work/without") (wall s, peak KiB, CPU s)"
done
for side in with without; do
  read -r "wall_$side" < <(cut -d' ' -f1 "$work/$side" | median)
  read -r "peak_$side" < <(cut -d' ' -f2 "$work/$side" | sort -g | tail -1)
  read -r "cpu_$side" < <(cut -d' ' -f3 "$work/$side" | median)
done
echo "with sidecars ($((2 * n)) items):  wall ${wall_with} s, peak RSS $((peak_with / 1024)) MiB, CPU (share and the helpers it reaped) ${cpu_with} s"
echo "without sidecars ($n items): wall ${wall_without} s, peak RSS $((peak_without / 1024)) MiB, CPU (share and the helpers it reaped) ${cpu_without} s"
awk -v a="$wall_with" -v b="$wall_without" -v c="$cpu_with" -v d="$cpu_without" \
  'BEGIN { printf "sidecars cost %+.1f %% wall, %+.1f %% CPU (medians; peak RSS: the largest of the rounds)\n", (a / b - 1) * 100, (c / d - 1) * 100 }'
paste -d' ' "$work/with" "$work/without" | awk '{ print $3 / $6 }' | sort -g >"$work/ratios"
echo "CPU with/without, round by round: min $(head -1 "$work/ratios"), median $(median <"$work/ratios"), max $(tail -1 "$work/ratios")"
