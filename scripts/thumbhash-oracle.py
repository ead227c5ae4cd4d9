#!/usr/bin/env python3
"""The oracle of ThumbHashTests: the `thumbhash` package (0.1.2), patched to
compute what Evan Wallace's JavaScript reference (`rgbaToThumbHash`) computes.

Usage: thumbhash-oracle.py WIDTH HEIGHT RGBA_FILE [WIDTH HEIGHT RGBA_FILE ...]
Prints one line per image: the hash in hexadecimal.

The package's `rgba_to_thumb_hash` differs from the reference in two places,
both patched here in its own source before it is run (the patch fails loudly if
the source is not the one it was written for):
1. Operator precedence in the alpha handling:
       a_dc, a_ac, a_scale = encode_channel(a, 5, 5) if has_alpha else 1.0, [], 1.0
   builds a 3-tuple whose first element is the conditional, so with alpha a_dc is
   the whole (dc, ac, scale) tuple and a_ac is []. The reference means
   `hasAlpha ? encodeChannel(a, 5, 5) : []`.
2. Rounding: Python's round() rounds halves to even (round(0.5) == 0, round(2.5)
   == 2); the reference's Math.round rounds halves up (toward +infinity). Every
   round( in the function becomes js_round(.
"""
import inspect
import math
import sys

import thumbhash

PRECEDENCE_BUG = "a_dc, a_ac, a_scale = encode_channel(a, 5, 5) if has_alpha else 1.0, [], 1.0"
PRECEDENCE_FIX = "a_dc, a_ac, a_scale = encode_channel(a, 5, 5) if has_alpha else (1.0, [], 1.0)"


def js_round(x):
    """JavaScript's Math.round: the nearest integer, halves toward +infinity."""
    f = math.floor(x)
    return f + 1 if x - f >= 0.5 else f


def patched_encoder():
    source = inspect.getsource(thumbhash.rgba_to_thumb_hash)
    if source.count(PRECEDENCE_BUG) != 1:
        sys.exit("thumbhash-oracle: the package's alpha line is not the one this patch knows; check the patch")
    source = source.replace(PRECEDENCE_BUG, PRECEDENCE_FIX)
    rounds = source.count("round(")
    if rounds < 10:
        sys.exit("thumbhash-oracle: expected the package's round() calls, found %d" % rounds)
    source = source.replace("round(", "js_round(")
    namespace = dict(vars(thumbhash))
    namespace["js_round"] = js_round
    exec(compile(source, "thumbhash-patched", "exec"), namespace)
    return namespace["rgba_to_thumb_hash"]


def main(arguments):
    if len(arguments) % 3 != 0 or not arguments:
        sys.exit(__doc__)
    encode = patched_encoder()
    for i in range(0, len(arguments), 3):
        w, h, path = int(arguments[i]), int(arguments[i + 1]), arguments[i + 2]
        with open(path, "rb") as f:
            rgba = list(f.read())
        if len(rgba) != w * h * 4:
            sys.exit("thumbhash-oracle: %s has %d bytes, not %d" % (path, len(rgba), w * h * 4))
        print(bytes(b & 255 for b in encode(w, h, rgba)).hex())


if __name__ == "__main__":
    main(sys.argv[1:])
