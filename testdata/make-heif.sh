#!/usr/bin/env bash
# Regenerates testdata/heif/: small HEIF fixtures for the HEIC decode paths of
# issue 16 that testdata/fidelity/ does not cover. Run by hand, never by CI:
#
#     bash testdata/make-heif.sh
#
# | file              | what                                           | decoded by            |
# |-------------------|------------------------------------------------|-----------------------|
# | grid-2048-exif6.heic | 4x3 grid of 512x512 tiles cropped to 2000x1488, EXIF 6, no irot (iPhone 7 layout at 1/4 size) | libavcodec, reduced 1/4 |
# | thumb-480.heic    | 720x480 grid with a 480x320 `thmb` item         | the embedded thumbnail |
# | thumb-320.heic    | 720x480 grid with a 320x212 `thmb` item         | libavcodec (thmb too small) |
# | alpha.heic        | 320x240 with an alpha plane (right half 50 %)   | libheif                |
# | ten-bit.heic      | 320x240, 10-bit (from a 16-bit PNG)             | libheif                |
# | odd-size.heic     | 333x251 (libheif's encoder adds a `clap`)       | libavcodec             |
# | exif-thumb-480.jpg | JPEG 1200x900 stored, EXIF 6 (900x1200 shown), with a 480x360 EXIF thumbnail | the EXIF thumbnail |
#
# Every picture has a red square (220,24,24) at the displayed top-left and a blue
# one (24,48,220) at the bottom-right. The embedded thumbnails of
# `thumb-480.heic` and `exif-thumb-480.jpg` are a different picture (their
# marker is green, 24,200,60) so a test can tell which one made the thumbnail.
#
# Needs ffmpeg 5.1 (libx265), vips 8.14, heif-enc (libheif-examples 1.15),
# python3; bench/make-heic.py writes the grids.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
OUT="$HERE/heif"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
export LC_ALL=C.UTF-8 TZ=UTC VIPS_CONCURRENCY=1
for tool in ffmpeg vips heif-enc exiftool python3; do
  command -v "$tool" >/dev/null || { echo "missing tool: $tool (bash scripts/setup.sh)" >&2; exit 1; }
done
mkdir -p "$OUT"
find "$OUT" -maxdepth 1 -type f \( -name '*.heic' -o -name '*.jpg' \) -delete

FF=(ffmpeg -nostdin -v error -y)
HEIC=(python3 "$ROOT/bench/make-heic.py" encode --threads 1)

# picture W H OUT.png [MARKER_COLOUR]: testsrc2 with the corner markers.
picture() {
  local w=$1 h=$2 out=$3 marker=${4:-0xDC1818}
  local s=$(( (w < h ? w : h) / 10 ))
  "${FF[@]}" -f lavfi -i "testsrc2=size=${w}x${h}:rate=1" -frames:v 1 \
    -vf "drawbox=x=0:y=0:w=$s:h=$s:color=$marker@1:t=fill,drawbox=x=iw-$s:y=ih-$s:w=$s:h=$s:color=0x1830DC@1:t=fill" \
    -pix_fmt rgb24 "$out"
}

picture 2000 1488 "$WORK/big.png"
"${HEIC[@]}" --in "$WORK/big.png" --out "$OUT/grid-2048-exif6.heic" --tile 512 --exif-orientation 6 --crf 36

picture 720 480 "$WORK/720.png"
"${HEIC[@]}" --in "$WORK/720.png" --out "$OUT/thumb-320.heic" --tile 256 --thumb 320 --crf 32
# The thumbnail item is told apart by its green marker.
picture 720 480 "$WORK/720-green.png" 0x18C83C
"${HEIC[@]}" --in "$WORK/720.png" --out "$OUT/thumb-480.heic" --tile 256 --thumb 480 --thumb-from "$WORK/720-green.png" --crf 32

picture 320 240 "$WORK/320.png"
# Alpha: the right half 50 % transparent.
"${FF[@]}" -i "$WORK/320.png" -vf "format=rgba,geq=r='r(X,Y)':g='g(X,Y)':b='b(X,Y)':a='if(gt(X,W/2),128,255)'" "$WORK/alpha.png"
heif-enc -q 60 -o "$OUT/alpha.heic" "$WORK/alpha.png" >/dev/null
"${FF[@]}" -i "$WORK/320.png" -pix_fmt rgb48be "$WORK/320-16.png"
heif-enc -q 60 -b 10 -o "$OUT/ten-bit.heic" "$WORK/320-16.png" >/dev/null
picture 333 251 "$WORK/odd.png"
heif-enc -q 60 -o "$OUT/odd-size.heic" "$WORK/odd.png" >/dev/null

# A JPEG whose EXIF thumbnail is large enough to be the thumbnail; EXIF 6, so
# both are stored turned a quarter anticlockwise of how they are shown.
picture 900 1200 "$WORK/portrait.png"
picture 360 480 "$WORK/portrait-green.png" 0x18C83C
vips rot "$WORK/portrait.png" "$WORK/stored.png" d270
vips rot "$WORK/portrait-green.png" "$WORK/stored-green.png" d270
"${FF[@]}" -i "$WORK/stored.png" -q:v 6 -pix_fmt yuvj420p "$OUT/exif-thumb-480.jpg"
"${FF[@]}" -i "$WORK/stored-green.png" -q:v 8 -pix_fmt yuvj420p "$WORK/thumb.jpg"
exiftool -q -overwrite_original -n -Orientation=6 "-ThumbnailImage<=$WORK/thumb.jpg" "$OUT/exif-thumb-480.jpg"

ls -l "$OUT"
