#!/usr/bin/env bash
# How far apart two builds' thumbnails are: PSNR of each item's thumbnail in two
# `share ingest --report` reports of the same drop, paired by source path, by
# ffmpeg's psnr filter (over Y, U and V of the JPEGs). Prints the count and the
# lowest and highest PSNR; identical thumbnails give "inf".
#
#   share-a ingest --container A --report a.json DROP; share-b ingest --container B --report b.json DROP
#   bash bench/thumbnail-psnr.sh a.json b.json
set -euo pipefail
export LC_ALL=C  # join wants the order jq sorts in
thumbnails() { jq -r '.items | sort_by(.source)[] | select(.thumbnail != null) | [.source, .thumbnail] | @tsv' "$1" | sed 's|\tfile://|\t|'; }
join -t $'\t' <(thumbnails "$1") <(thumbnails "$2") |
  while IFS=$'\t' read -r _ a b; do
    ffmpeg -nostdin -hide_banner -nostats -i "$a" -i "$b" -lavfi psnr -f null - 2>&1 | grep -o 'average:[0-9.inf]*' | cut -d: -f2
  done | sort -g | awk '{ v[NR] = $1 } END { print NR " thumbnails, PSNR min " v[1] " dB, max " v[NR] " dB" }'
