#!/usr/bin/env python3
"""Makes a corpus of distinct REAL photographs for the false-match count of
`similarTo` (issue 62), from photo datasets read where they are.

    python3 bench/similar-real-corpus.py OUT COUNT NAME=FOLDER...

Each NAME=FOLDER is a dataset: every JPEG under FOLDER is a candidate, named
NAME/relative-path, in a random order within its dataset ($SEED, 62 if unset;
the same seed orders the output). The datasets are taken in the order given,
so list the larger photos first: every distinct picture of the earlier
datasets is kept (as far as COUNT goes) and the last one fills up with a
random sample of its own.

Distinct pictures only, whatever the datasets' labels say (a dataset's own
copies, the same photo in two splits or at two sizes, crops of one photo and
frames of one burst, as the scene set holds), judged against the pictures
kept before each candidate:
  - a copy: its `imagehash.phash` within COPY_BITS (2) of a kept one;
  - the same scene: within SCENE_BITS (12, wider than the 8 bits measured) of
    a kept one, and OpenCV's SIFT features of the two agree on one shift,
    scale (0.4-2.5) and turn (RANSAC) for SCENE_INLIERS (20; $SCENE_INLIERS,
    0 turns this check off) or more of their matches. No perceptual hash
    decides this, so the corpus is not cut by what it measures. Of the 2,596
    pairs within 12 bits among the 25,835 candidates, the 133 of an ImageNet
    or BSDS500 photo with another all have under 5; the scene set's have
    under 5 (2,049), 5-9 (8), 10-49 (17, every one of one scene by eye:
    crops, bursts, edits, and twice one view by two photographers) or 50 and
    more (389). Pairs of one scene with few features (bursts against a bare
    sky) stay in.
All candidates are checked, also past COUNT, so the counts are the datasets';
the dropped ones are listed in OUT/dropped.tsv with the one they repeat.

Each kept picture is written as OUT/NNNNN.jpg in a random order, at
its own size (no upscaling: small dataset photos stay small), RGB, as a phone
would: JPEG quality 85-95 drawn per picture, 4:2:0. OUT/corpus.tsv names each
one's dataset, path, size and quality.
"""
import os
import random
import sys

import cv2
import imagehash
import numpy as np
from PIL import Image

COPY_BITS = 2
SCENE_BITS = 12
SCENE_INLIERS = int(os.environ.get("SCENE_INLIERS", "20"))  # 0: no same-scene check, copies only
SEED = int(os.environ.get("SEED", "62"))
SIFT = cv2.SIFT_create()
MATCHER = cv2.BFMatcher(cv2.NORM_L2)


def candidates(datasets):
    rng = random.Random(SEED)
    for name, folder in datasets:
        paths = sorted(
            os.path.join(root, file)
            for root, _, files in os.walk(folder)
            for file in files
            if file.lower().endswith((".jpg", ".jpeg"))
        )
        rng.shuffle(paths)
        for path in paths:
            yield name, path, f"{name}/{os.path.relpath(path, folder)}"


def features(path):
    """SIFT key points of the picture, its longer side brought to 300 px."""
    grey = cv2.imread(path, cv2.IMREAD_GRAYSCALE)
    scale = 300 / max(grey.shape)
    grey = cv2.resize(grey, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA if scale < 1 else cv2.INTER_CUBIC)
    return SIFT.detectAndCompute(grey, None)


def shared_features(a, b):
    """How many of a's and b's matching features one shift, scale (0.4-2.5) and turn explains (RANSAC)."""
    (points_a, descriptors_a), (points_b, descriptors_b) = a, b
    if descriptors_a is None or descriptors_b is None or len(points_a) < 3 or len(points_b) < 3:
        return 0
    pairs = (pair for pair in MATCHER.knnMatch(descriptors_a, descriptors_b, k=2) if len(pair) == 2)
    good = [m for m, n in pairs if m.distance < 0.75 * n.distance]
    if len(good) < 4:
        return 0
    source = np.float32([points_a[m.queryIdx].pt for m in good])
    target = np.float32([points_b[m.trainIdx].pt for m in good])
    transform, mask = cv2.estimateAffinePartial2D(source, target, method=cv2.RANSAC, ransacReprojThreshold=4.0)
    if transform is None:
        return 0
    # A scale near 0 maps many matches onto one point (a texture or a blank area matched many times over).
    scale = float(np.sqrt(abs(np.linalg.det(transform[:, :2]))))
    return int(mask.sum()) if 0.4 <= scale <= 2.5 else 0


def distinct(datasets):
    """The candidates that repeat no kept one (a copy or the same scene), and the dropped ones."""
    kept, hashes, dropped, cache = [], np.zeros(0, dtype=np.uint64), [], {}

    def features_of(index, path):
        if index not in cache:
            cache[index] = features(path)
        return cache[index]

    for name, path, label in candidates(datasets):
        with Image.open(path) as picture:
            value = np.uint64(int(str(imagehash.phash(picture.convert("RGB"))), 16))
        distances = np.bitwise_count(hashes ^ value)
        repeat = None
        if len(hashes) and distances.min() <= COPY_BITS:
            nearest = int(np.argmin(distances))
            repeat = (label, kept[nearest][2], int(distances[nearest]), "", "copy")
        for index in [] if repeat or not SCENE_INLIERS else np.nonzero(distances <= SCENE_BITS)[0]:
            shared = shared_features(features_of(-1, path), features_of(int(index), kept[index][1]))
            if shared >= SCENE_INLIERS:
                repeat = (label, kept[index][2], int(distances[index]), shared, "same scene")
                break
        cache.pop(-1, None)
        if repeat:
            dropped.append(repeat)
            continue
        kept.append((name, path, label))
        hashes = np.append(hashes, value)
    return kept, dropped


def main():
    out, count = sys.argv[1], int(sys.argv[2])
    datasets = [argument.split("=", 1) for argument in sys.argv[3:]]
    os.makedirs(out, exist_ok=True)
    kept, dropped = distinct(datasets)
    if len(kept) < count:
        sys.exit(f"only {len(kept)} distinct photos in the datasets, {count} asked")
    total = len(kept)
    kept = kept[:count]
    rng = random.Random(SEED)
    order = list(range(count))
    rng.shuffle(order)
    with open(os.path.join(out, "corpus.tsv"), "w") as table:
        table.write("file\tdataset\tsource\twidth\theight\tquality\n")
        for number, index in enumerate(order):
            name, path, label = kept[index]
            quality = rng.randint(85, 95)
            with Image.open(path) as picture:
                picture = picture.convert("RGB")
                file = f"{number:05d}.jpg"
                picture.save(os.path.join(out, file), quality=quality, subsampling="4:2:0")
                table.write(f"{file}\t{name}\t{label}\t{picture.width}\t{picture.height}\t{quality}\n")
    with open(os.path.join(out, "dropped.tsv"), "w") as table:
        table.write("dropped\trepeats\tbits\tshared features\twhy\n")
        table.writelines("\t".join(map(str, row)) + "\n" for row in dropped)
    by_dataset = {}
    for name, _, _ in kept:
        by_dataset[name] = by_dataset.get(name, 0) + 1
    copies = sum(1 for row in dropped if row[4] == "copy")
    print(f"corpus: {count} distinct photos {by_dataset}, of {total} distinct in the datasets; dropped "
          f"{copies} copies and {len(dropped) - copies} of the same scene (dropped.tsv)")


if __name__ == "__main__":
    main()
