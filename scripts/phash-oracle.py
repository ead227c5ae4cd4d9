#!/usr/bin/env python3
"""Prints the independent perceptual hashes of a folder's pictures as JSON
({name: 16 hex digits}): Python's imagehash.phash (hash_size 8, DCT of a
32×32 greyscale resize), the oracle share's PerceptualHash is compared with.
Needs Pillow and imagehash (a test-data step only: the tests read the
committed expected.json)."""
import json, os, sys
import imagehash
from PIL import Image

folder = sys.argv[1]
hashes = {}
for name in sorted(os.listdir(folder)):
    if name.endswith((".jpg", ".png", ".webp")):
        with Image.open(os.path.join(folder, name)) as image:
            hashes[name] = str(imagehash.phash(image))
print(json.dumps(hashes, indent=2, sort_keys=True))
