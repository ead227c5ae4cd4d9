#!/usr/bin/env bash
# False near-duplicates on REAL photos (issue 62, `similarTo`): COUNT distinct
# real photographs from public photo datasets (bench/similar-real-corpus.py:
# copies within the datasets dropped, each written as a phone-quality JPEG at
# its own size), ingested by `share ingest` in one share; an item that
# carries `similarTo` is a false match unless the two are one scene that the
# corpus's same-scene check missed (open share-similar.tsv's pairs side by
# side to tell). Python's imagehash.phash at the same
# threshold is the independent check (bench/similar-count.py, as in
# bench/similar-false-matches.sh, whose corpus is tiles of ~40 photos).
#
#   bash bench/similar-real-corpus.sh [COUNT]        (default 10000)
#   SHARE_BIN=.build/release/share WORK=/tmp/real bash bench/similar-real-corpus.sh
#   SEED=7 bash bench/similar-real-corpus.sh    (another sample of the scenes; 62 if unset)
#
# The datasets, none committed (their sizes and licences), none in a package
# registry (Debian's and pip's hold no photo set of this size: the packages
# named for CIFAR, STL-10 or Tiny ImageNet download them at run time, and the
# wallpaper packages hold ~100 pictures in several sizes each). They are public
# GitHub repositories, brought here as git snapshots (a session's `fetch`); each
# variable names the snapshot's git directory or a folder of its files:
#   IMAGENET_SAMPLES  EliSchwartz/imagenet-sample-images: 1,000 ImageNet photos,
#                     one per class, mostly 500 x 375. No licence in the
#                     repository; ImageNet's photos are their (Flickr) owners',
#                     shared for non-commercial research.
#   BSDS500           BIDS/BSDS500 (BSDS500/data/images): 500 photos, 481 x 321,
#                     a mirror of Berkeley's set. No licence in the repository;
#                     Berkeley's terms: non-commercial research and education.
#   INTEL_SCENES      luangtatipsy/intel-image-classification (datasets/): 24,335
#                     scene photos, 150 x 150, Intel's scene classification
#                     challenge set. The repository's MIT licence is its code's;
#                     the photos' own terms are not stated there.
# The first two are taken whole, the scenes fill up to COUNT at random.
# Needs Pillow, imagehash, NumPy 2 (bitwise_count) and OpenCV (pip install
# opencv-python-headless: SIFT, for the same-scene check).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
count=${1:-10000}
share=${SHARE_BIN:-$here/.build/release/share}
work=${WORK:-$(mktemp -d)}
threshold=${THRESHOLD:-8}
mirror=${MIRROR:-/work/.mirror}
mkdir -p "$work/sources"

# A dataset's files: the folder itself, or the named paths of a git snapshot.
dataset() {
  local name=$1 from=$2
  shift 2
  if [ -f "$from/HEAD" ]; then
    if [ ! -d "$work/sources/$name" ]; then
      # A checkout of those paths alone, with an index of its own (the snapshot is left as it is).
      mkdir -p "$work/sources/$name.part"
      GIT_INDEX_FILE="$work/sources/$name.index" git --git-dir="$from" --work-tree="$work/sources/$name.part" \
        checkout HEAD -- "$@"
      rm "$work/sources/$name.index"
      mv "$work/sources/$name.part" "$work/sources/$name"
    fi
    echo "$name=$work/sources/$name"
  else
    echo "$name=$from"
  fi
}
imagenet=$(dataset imagenet "${IMAGENET_SAMPLES:-$mirror/EliSchwartz+imagenet-sample-images/repo}" .)
bsds=$(dataset bsds500 "${BSDS500:-$mirror/BIDS+BSDS500/repo}" BSDS500/data/images)
scenes=$(dataset intel-scenes "${INTEL_SCENES:-$mirror/luangtatipsy+intel-image-classification/repo}" datasets)

rm -rf "$work/corpus" "$work/container"
python3 "$here/bench/similar-real-corpus.py" "$work/corpus" "$count" "$imagenet" "$bsds" "$scenes"

# share: one share of them all; the items that carry similarTo.
/usr/bin/time -f "%e s wall, %U s user, %S s system, %M KB" -o "$work/time" \
  "$share" ingest --quiet --container "$work/container" --report "$work/report.json" "$work/corpus" >/dev/null
python3 "$here/bench/similar-count.py" "$work" "$threshold"
echo "share: $(cat "$work/time")"
echo "work: $work (corpus/corpus.tsv, corpus/dropped.tsv, share-similar.tsv, imagehash-pairs.tsv)"
