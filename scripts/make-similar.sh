#!/usr/bin/env bash
# Makes testdata/similar/: near-duplicates of one photo (issue 62, `similarTo`)
# and distinct pictures, with libvips' command line; then the oracle's hashes
# (scripts/phash-oracle.py, Python's imagehash.phash) in expected.json.
#   original.jpg        testdata/media/photo.jpg re-encoded at quality 95
#   copy-q40.jpg        original recompressed at quality 40
#   copy-half.jpg       original resized to ½, copy-quarter.jpg to ¼
#   copy.webp, copy.png original re-encoded
#   copy-crop.jpg       original cropped to 95 % of its area, from its top left
#   copy-crop-centre.jpg original cropped to 95 % of its area, centred
#   copy.heic           original re-encoded as HEIC (HEVC, quality 50; not in
#                       expected.json: the oracle's Pillow reads no HEIC)
# (A 5 % strip off one side, 14 to 16 bits away with imagehash too, is not
# one: a DCT hash of the whole frame moves with the frame.)
#   distinct-*.jpg      pictures unlike it and unlike each other
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
out="$here/testdata/similar"
mkdir -p "$out" "$here/testdata/flat"
cd "$out"
vips jpegsave "$here/testdata/media/photo.jpg" original.jpg --Q 95 --strip
vips jpegsave original.jpg copy-q40.jpg --Q 40 --strip
vips resize original.jpg copy-half.jpg[Q=90,strip] 0.5
vips resize original.jpg copy-quarter.jpg[Q=90,strip] 0.25
vips copy original.jpg copy.webp[Q=80,strip]
vips copy original.jpg copy.png[strip]
vips crop original.jpg copy-crop.jpg[Q=90,strip] 0 0 624 468
vips crop original.jpg copy-crop-centre.jpg[Q=90,strip] 8 6 624 468
vips heifsave original.jpg copy.heic --Q 50 --compression hevc --strip
# Distinct pictures: a zone plate, a sine grating, a gradient, two noise fields, and the repo's own.
vips zone t.v 640 480 && vips linear t.v t2.v 127 128 && vips cast t2.v t3.v uchar && vips jpegsave t3.v distinct-zone.jpg --Q 90 --strip
vips sines t.v 640 480 --hfreq 3 --vfreq 2 && vips linear t.v t2.v 127 128 && vips cast t2.v t3.v uchar && vips jpegsave t3.v distinct-sines.jpg --Q 90 --strip
vips xyz t.v 640 480 && vips extract_band t.v t2.v 0 && vips linear t2.v t3.v 0.4 0 && vips cast t3.v t4.v uchar && vips jpegsave t4.v distinct-gradient.jpg --Q 90 --strip
vips gaussnoise t.v 64 48 --mean 128 --sigma 60 --seed 1 && vips resize t.v t2.v 10 && vips cast t2.v t3.v uchar && vips jpegsave t3.v distinct-noise-1.jpg --Q 90 --strip
vips gaussnoise t.v 32 24 --mean 128 --sigma 60 --seed 7 && vips resize t.v t2.v 20 && vips cast t2.v t3.v uchar && vips jpegsave t3.v distinct-noise-2.jpg --Q 90 --strip
rm -f t.v t2.v t3.v t4.v
cp "$here/testdata/media/screenshot.png" distinct-screenshot.png
python3 "$here/scripts/phash-oracle.py" "$out" > "$out/expected.json"
# testdata/flat/ (issue 62): two plain colours (no detail: no perceptual hash, so no similarTo), two gradients.
cd "$here/testdata/flat"
vips black t.v 640 480 --bands 3 && vips linear t.v t2.v 1 128 && vips cast t2.v t3.v uchar && vips jpegsave t3.v plain-grey.jpg --Q 90 --strip
vips black t.v 480 640 --bands 3 && vips linear t.v t2.v "1 1 1" "40 90 200" && vips cast t2.v t3.v uchar && vips jpegsave t3.v plain-blue.jpg --Q 90 --strip
rm -f t.v t2.v t3.v
# Two smooth gradients (e^(2x/w + 2y/h), dark top left to light bottom right) of unlike colours and shapes: hashes alike, colours not.
gradient() {
  vips xyz t.v "$1" "$2" && vips extract_band t.v x.v 0 && vips extract_band t.v y.v 1
  vips linear x.v a.v "$(echo "2 / $1" | bc -l)" 0 && vips linear y.v b.v "$(echo "2 / $2" | bc -l)" 0 && vips add a.v b.v s.v && vips math s.v e.v exp
  vips linear e.v r.v $3 && vips linear e.v g.v $4 && vips linear e.v b.v $5 && vips bandjoin "r.v g.v b.v" j.v && vips cast j.v c.v uchar && vips jpegsave c.v "$6" --Q 90 --strip
  rm -f t.v x.v y.v a.v s.v e.v r.v g.v b.v j.v c.v
}
gradient 640 480 "3 90" "2.5 40" "0.8 10" gradient-warm.jpg
gradient 400 600 "0.8 10" "2 30" "3 90" gradient-cool.jpg
# Two such gradients with a sine grating on them (2 periods across, 1 down, ±12) that fixes the hash's
# bits, 30 levels apart in red and 20 in blue (issue 62's 0.1 %): hashes alike, quarters within 40 levels
# (the rule of a record of quarters), the 4×4 cells not (PerceptualHash.cellTolerance); and a half-size copy.
wavy() {
  vips xyz t.v "$1" "$2" && vips extract_band t.v x.v 0 && vips extract_band t.v y.v 1
  vips linear x.v a.v "$(echo "2 / $1" | bc -l)" 0 && vips linear y.v b.v "$(echo "2 / $2" | bc -l)" 0 && vips add a.v b.v s.v && vips math s.v e.v exp
  vips sines w.v "$1" "$2" --hfreq 2 --vfreq 1 && vips linear w.v w2.v 12 0 && vips add e.v w2.v f.v
  vips linear f.v r.v $3 && vips linear f.v g.v $4 && vips linear f.v b.v $5 && vips bandjoin "r.v g.v b.v" j.v && vips cast j.v c.v uchar && vips jpegsave c.v "$6" --Q 90 --strip
  rm -f t.v x.v y.v a.v s.v e.v w.v w2.v f.v r.v g.v b.v j.v c.v
}
wavy 640 480 "2.5 100" "2.2 80" "2 60" near-colour-a.jpg
wavy 640 480 "2.5 70" "2.2 80" "2 80" near-colour-b.jpg
vips resize near-colour-a.jpg near-colour-a-half.jpg[Q=90,strip] 0.5
