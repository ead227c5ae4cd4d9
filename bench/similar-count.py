#!/usr/bin/env python3
"""Counts the false near-duplicates of one run of a false-match benchmark
(issue 62): the pictures of WORK/corpus that `share ingest` gave `similarTo`
(read from WORK/container's manifest), and, as the independent check, the
pictures that Python's `imagehash.phash` puts within THRESHOLD bits of an
earlier one. Writes WORK/share-similar.tsv and WORK/imagehash-pairs.tsv.

    python3 bench/similar-count.py WORK THRESHOLD

Used by bench/similar-false-matches.sh and bench/similar-real-corpus.sh.
"""
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
