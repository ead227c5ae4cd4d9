#!/usr/bin/env bash
# False near-duplicates (issue 62, `similarTo`): COUNT distinct photo-like
# pictures (bench/similar-corpus.py: tiles of real photos at several scales,
# each with its own exposure, colour, size and JPEG quality), ingested by
# `share ingest` in one share; every item that carries `similarTo` is a false
# match. The same pictures through Python's imagehash.phash at the same
# threshold are the independent check.
#
#   bash bench/similar-false-matches.sh [COUNT]        (default 10000)
#   SHARE_BIN=.build/release/share WORK=/tmp/sim bash bench/similar-false-matches.sh
#
# The sources, none committed (their sizes), all read where they are:
#   - the repository's real phone photos (testdata/motion/real: Pixel 3a XL,
#     Galaxy S9+, Galaxy S22, Google's sample; testdata/privacy: iPhone 6,
#     iPhone 7; testdata/real: Vision Pro), licences in testdata/README.md;
#   - scikit-image's bundled sample pictures (pip install scikit-image; the
#     photographs among them, licences in its data/README.txt);
#   - OpenCV's sample pictures (Debian's opencv-doc, fetched with `apt-get
#     download`, never installed; Apache-2.0/BSD, the photographs among them,
#     one of each stereo pair or sequence).
# Needs libvips' command line (HEIC to PNG), Pillow, imagehash, scikit-image.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
count=${1:-10000}
share=${SHARE_BIN:-$here/.build/release/share}
work=${WORK:-$(mktemp -d)}
threshold=${THRESHOLD:-8}
mkdir -p "$work/sources"

# Real phone photos, upright, 8-bit sRGB.
for f in motion/real/pixel-3a-xl.MP.jpg motion/real/samsung-s9plus-microvideo.jpg \
  motion/real/samsung-s22-motion.heic motion/real/google-libmphoto-motion.jpg privacy/iphone6-gps.jpg \
  privacy/iphone7-gps.heic real/vision-pro.HEIC; do
  b=$(basename "$f")
  [ -s "$work/sources/real-${b%.*}.png" ] || vips thumbnail "$here/testdata/$f" "$work/sources/real-${b%.*}.png" 10000 --size down
done
# scikit-image's photographs (not its drawings, charts or single-channel scans of text).
skdata=$(python3 -c 'import os, skimage; print(os.path.join(os.path.dirname(skimage.__file__), "data"))')
for f in astronaut.png brick.png camera.png chelsea.png coffee.png coins.png grass.png gravel.png \
  hubble_deep_field.jpg ihc.png moon.png motorcycle_left.png retina.jpg rocket.jpg; do
  cp "$skdata/$f" "$work/sources/skimage-$f"
done
# OpenCV's photographs: one of each stereo pair, sequence or before/after.
if [ ! -d "$work/opencv" ]; then
  (cd "$work" && apt-get download opencv-doc >/dev/null && dpkg -x opencv-doc_*.deb opencv && rm opencv-doc_*.deb)
fi
ocv=$work/opencv/usr/share/doc/opencv-doc/examples/data
for f in aero1.jpg aloeL.jpg apple.jpg baboon.jpg basketball1.png board.jpg box_in_scene.png building.jpg \
  butterfly.jpg chicky_512.png ela_original.jpg fruits.jpg graf1.png home.jpg leuvenA.jpg messi5.jpg \
  orange.jpg rubberwhale1.png smarties.png squirrel_cls.jpg starry_night.jpg stuff.jpg; do
  cp "$ocv/$f" "$work/sources/opencv-$f"
done

rm -rf "$work/corpus" "$work/container"
python3 "$here/bench/similar-corpus.py" "$work/corpus" "$count" "$work/sources"/*

# share: one share of them all; the items that carry similarTo.
/usr/bin/time -f "%e s wall, %U s user, %S s system, %M KB" -o "$work/time" \
  "$share" ingest --quiet --container "$work/container" --report "$work/report.json" "$work/corpus" >/dev/null
python3 "$here/bench/similar-count.py" "$work" "$threshold"
echo "share: $(cat "$work/time")"
echo "work: $work (corpus/corpus.tsv, share-similar.tsv, imagehash-pairs.tsv)"
