#!/usr/bin/env bash
# Baseline for the mixed scenario: the shell pipeline a user would write.
# find | xargs -P2, per file: a new name, cp, `file --mime-type`, then by MIME
# type vipsthumbnail (images, PDF) or ffprobe + ffmpeg (video; ffprobe for
# audio), one JSON line appended per file; then the lines are assembled into a
# manifest, then one sync.
# Usage: mixed.sh DROP OUT
set -euo pipefail
drop="$1" out="$2"
mkdir -p "$out/media" "$out/thumbs"
: >"$out/lines.jsonl"
find "$drop" -type f -print0 | sort -z | xargs -0 -P2 -n1 sh -c '
  o="$1"; f="$2"; b=$(basename "$f")
  id=$(cat /proc/sys/kernel/random/uuid)
  case "$b" in *.*) ext="${b##*.}" ;; *) ext=bin ;; esac
  cp -- "$f" "$o/media/$id.$ext"
  mime=$(file -b --mime-type "$f")
  thumb=null; dur=null; kind=file
  case "$mime" in
    image/*|application/pdf)
      [ "$mime" = application/pdf ] || kind=image
      vipsthumbnail -s 360 -o "$o/thumbs/$id.jpg" "$f" 2>/dev/null && thumb="\"$o/thumbs/$id.jpg\"" ;;
    video/*)
      kind=video
      d=$(ffprobe -v error -show_entries format=duration -of csv=p=0 "$f" 2>/dev/null) && [ -n "$d" ] && dur=$d
      ffmpeg -nostdin -v error -y -ss 1 -i "$f" -frames:v 1 -vf scale=360:360:force_original_aspect_ratio=decrease "$o/thumbs/$id.jpg" 2>/dev/null &&
        [ -s "$o/thumbs/$id.jpg" ] && thumb="\"$o/thumbs/$id.jpg\"" ;;
    audio/*)
      d=$(ffprobe -v error -show_entries format=duration -of csv=p=0 "$f" 2>/dev/null) && [ -n "$d" ] && dur=$d ;;
  esac
  printf "{\"path\":\"file://%s\",\"fileName\":\"%s\",\"type\":\"%s\",\"mimeType\":\"%s\",\"thumbnail\":%s,\"duration\":%s}\n" \
    "$o/media/$id.$ext" "$b" "$kind" "$mime" "$thumb" "$dur" >>"$o/lines.jsonl"
' _ "$out"
{ printf "["; paste -sd, "$out/lines.jsonl"; printf "]\n"; } >"$out/manifest.json"
sync
