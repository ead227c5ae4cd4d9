#!/usr/bin/env python3
"""Makes a corpus of distinct photo-like pictures for the false-match count of
`similarTo` (issue 62): crops of real photos, none a near-duplicate of another.

    python3 bench/similar-corpus.py OUT COUNT SOURCE...

Each SOURCE is a picture (anything Pillow opens; HEIC and AVIF are turned into
PNG by bench/similar-false-matches.sh first). Every source is cut into grids
of n × n tiles for several n (1, 2, 3, 4, 6, 8, 12, 16, 24, as far as a tile
keeps 120 px on its shorter side), and each grid again shifted by half a tile
both ways. Tiles of one grid do not overlap; one of the shifted grid shares a
quarter of its area (a corner) with each of four of the grid's. A tile of one
grid may lie inside a tile of a coarser grid and cover up to 9/16 of it (a
16-grid tile in a 12-grid one, a 4-grid tile in a 3-grid one; 4/9 or 1/4 for
the other pairs of grids): a zoomed-in part, cropped to 56 % of the area or
less, not a copy (issue 62's near-duplicates are crops of ≤ 5 %).
Each tile gets its own exposure (±0.7 EV), gamma (0.8–1.25), saturation
(0.5–1.5) and white balance (±10 % a channel), a scale (0.5–1, never under
64 px), and a JPEG quality (70–95). COUNT of them are drawn at random (seed
62) and written as OUT/NNNNN.jpg in a random order, with OUT/corpus.tsv naming
each one's source, grid, tile and treatment.
"""
import os
import random
import sys

from PIL import Image, ImageEnhance

MIN_SIDE = 120
GRIDS = (1, 2, 3, 4, 6, 8, 12, 16, 24)


def tiles(width, height):
    for n in GRIDS:
        w, h = width // n, height // n
        if min(w, h) < MIN_SIDE:
            break
        for row in range(n):
            for column in range(n):
                yield n, row, column, (column * w, row * h, column * w + w, row * h + h)
        # The same grid shifted by half a tile each way (its inner (n - 1)²).
        for row in range(n - 1):
            for column in range(n - 1):
                x, y = column * w + w // 2, row * h + h // 2
                yield n, row + 0.5, column + 0.5, (x, y, x + w, y + h)


def treat(picture, rng):
    ev = rng.uniform(-0.7, 0.7)
    gamma = rng.uniform(0.8, 1.25)
    balance = [rng.uniform(0.9, 1.1) for _ in range(3)]
    lut = []
    for channel in range(3):
        gain = 2**ev * balance[channel]
        lut += [min(255, round(255 * min(1.0, (v / 255) ** gamma * gain))) for v in range(256)]
    picture = picture.point(lut)
    saturation = rng.uniform(0.5, 1.5)
    picture = ImageEnhance.Color(picture).enhance(saturation)
    scale = rng.uniform(0.5, 1.0)
    width, height = picture.size
    scale = max(scale, 64 / min(width, height))
    if scale < 1:
        picture = picture.resize((max(1, round(width * scale)), max(1, round(height * scale))), Image.LANCZOS)
    return picture, f"ev={ev:+.2f} gamma={gamma:.2f} saturation={saturation:.2f} scale={min(scale, 1):.2f}"


def main():
    out, count, sources = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
    os.makedirs(out, exist_ok=True)
    rng = random.Random(62)
    candidates = []
    for source in sources:
        with Image.open(source) as picture:
            width, height = picture.size
        candidates += [(source, *tile) for tile in tiles(width, height)]
    if len(candidates) < count:
        sys.exit(f"only {len(candidates)} tiles in the sources, {count} asked")
    chosen = rng.sample(candidates, count)
    by_source = {}
    for number, candidate in enumerate(chosen):
        by_source.setdefault(candidate[0], []).append((number, candidate))
    lines = []
    for source, entries in by_source.items():
        with Image.open(source) as opened:
            picture = opened.convert("RGB")
        for number, (_, n, row, column, box) in entries:
            tile_rng = random.Random(f"{os.path.basename(source)}/{n}/{row}/{column}")
            treated, treatment = treat(picture.crop(box), tile_rng)
            quality = tile_rng.randint(70, 95)
            name = f"{number:05d}.jpg"
            treated.save(os.path.join(out, name), quality=quality)
            lines.append(
                f"{name}\t{os.path.basename(source)}\t{n}\t{row}\t{column}\t{treated.size[0]}x{treated.size[1]}"
                f"\t{treatment} quality={quality}"
            )
    with open(os.path.join(out, "corpus.tsv"), "w") as tsv:
        tsv.write("name\tsource\tgrid\trow\tcolumn\tsize\ttreatment\n")
        tsv.write("\n".join(sorted(lines)) + "\n")
    per_source = {os.path.basename(s): len(e) for s, e in by_source.items()}
    print(f"{count} pictures from {len(sources)} sources ({len(candidates)} tiles): {per_source}", file=sys.stderr)


if __name__ == "__main__":
    main()
