#!/usr/bin/env bash
# Baseline for the photos scenario: what a user would run instead of share.
# vipsthumbnail -s 360 batched over the files in two processes in parallel
# (the list split into halves, xargs -P2), then cp of every file, then one sync.
# Usage: photos.sh DROP OUT
set -euo pipefail
drop="$1" out="$2"
mkdir -p "$out"
mapfile -d '' files < <(find "$drop" -maxdepth 1 -type f -print0 | sort -z)
half=$(((${#files[@]} + 1) / 2))
printf '%s\0' "${files[@]}" | xargs -0 -P2 -n"$half" vipsthumbnail -s 360 -o "$out/%s_thumb.jpg"
cp -- "${files[@]}" "$out/"
sync
