#!/usr/bin/env bash
# Baseline for the videos scenario: per file ffprobe (duration), then
# ffmpeg -ss 1 -i F -frames:v 1 (poster scaled to fit 360x360), then cp; two
# files at a time (xargs -P2); then one sync.
# Usage: videos.sh DROP OUT
set -euo pipefail
drop="$1" out="$2"
mkdir -p "$out"
find "$drop" -maxdepth 1 -type f -print0 | sort -z | xargs -0 -P2 -n1 sh -c '
  o="$1"; f="$2"; b=$(basename "$f")
  ffprobe -v error -show_entries format=duration -of csv=p=0 "$f" >"$o/$b.duration"
  ffmpeg -nostdin -v error -y -ss 1 -i "$f" -frames:v 1 -vf scale=360:360:force_original_aspect_ratio=decrease "$o/$b.jpg"
  cp -- "$f" "$o/"
' _ "$out"
sync
