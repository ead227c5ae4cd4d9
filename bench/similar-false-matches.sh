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
python3 - "$work" "$threshold" <<'EOF'
import collections, json, os, sys
import imagehash
from PIL import Image

work, threshold = sys.argv[1], int(sys.argv[2])
folder = os.path.join(work, "container", "manifests")
manifest = [n for n in os.listdir(folder) if n.endswith(".json")]
entries = [e for e in json.load(open(os.path.join(folder, manifest[0]))) if e.get("type") == "image"]
similar = [e for e in entries if e.get("similarTo")]
print(f"share: {len(entries)} pictures, {len(similar)} with similarTo "
      f"({100 * len(similar) / max(1, len(entries)):.2f} %)")
distances = collections.Counter(e["similarTo"]["distance"] for e in similar)
print(f"share: by distance {dict(sorted(distances.items()))}")
with open(os.path.join(work, "share-similar.tsv"), "w") as out:
    for e in similar:
        out.write(f"{e['fileName']}\t{e['path']}\t{e['similarTo']['path']}\t{e['similarTo']['distance']}\n")

corpus = os.path.join(work, "corpus")
names = sorted(n for n in os.listdir(corpus) if n.endswith(".jpg"))
hashes = []
for name in names:
    with Image.open(os.path.join(corpus, name)) as picture:
        hashes.append(int(str(imagehash.phash(picture)), 16))
near_earlier, pairs = 0, []
for i, h in enumerate(hashes):
    found = False
    for j in range(i):
        d = bin(h ^ hashes[j]).count("1")
        if d <= threshold:
            pairs.append((names[j], names[i], d))
            found = True
    near_earlier += found
print(f"imagehash.phash: {len(names)} pictures, {near_earlier} within {threshold} bits of an earlier one "
      f"({100 * near_earlier / len(names):.2f} %), {len(pairs)} pairs")
with open(os.path.join(work, "imagehash-pairs.tsv"), "w") as out:
    out.writelines(f"{a}\t{b}\t{d}\n" for a, b, d in pairs)
EOF
echo "share: $(cat "$work/time")"
echo "work: $work (corpus/corpus.tsv, share-similar.tsv, imagehash-pairs.tsv)"
