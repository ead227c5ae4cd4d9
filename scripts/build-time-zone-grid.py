#!/usr/bin/env python3
"""Builds the offline time-zone lookup's data (Sources/CTimeZoneGrid/time_zone_grid.c.bin)
from the boundaries timezonefinder ships (the `timezonefinder-data` package:
timezone-boundary-builder's polygons from OpenStreetMap, ODbL 1.0; timezonefinder
itself is MIT), as a grid of 1/64 degree (about 1.7 km at the equator) stored as
one quadtree per 1 degree cell:

    "TZG1", u16 zone count, u16 cells per degree (64), u32 node count,
    zone names: u8 length + ASCII each, in zone-id order,
    360 x 180 cell entries (u32, row 0 at 90 N, column 0 at 180 W): high bit set:
        the whole cell is zone (value & 0x7FFF); else the cell's first node's index,
    nodes: 4 x u16 children (north-west, north-east, south-west, south-east):
        high bit set: that quarter is zone (value & 0x7FFF); else the child node's
        index relative to the cell's first node.
    All little-endian. Zone 0x7FFF: no zone there (not seen: the oceans have
    their Etc/GMT zones).

A grid cell takes the zone of the polygon covering its centre (cells on a border:
the polygon drawn last). Usage (a developer's, not CI's: it needs pip packages):

    python3 -m venv /tmp/tzf && /tmp/tzf/bin/pip install timezonefinder timezonefinder-data pillow numpy
    /tmp/tzf/bin/python scripts/build-time-zone-grid.py Sources/CTimeZoneGrid/time_zone_grid.c.bin
"""
import struct
import sys

import numpy as np
from PIL import Image, ImageDraw
from timezonefinder import TimezoneFinder

R = 64  # cells per degree
NONE = 0x7FFF


def rasterise(tf):
    grid = np.full((180 * R, 360 * R), NONE, dtype=np.uint16)
    for boundary in range(tf.nr_of_polygons):
        zone = tf.zone_id_of(boundary)
        rings = tf.get_polygon(boundary)
        lngs, lats = np.asarray(rings[0][0], dtype=np.float64), np.asarray(rings[0][1], dtype=np.float64)
        x0 = max(0, int(np.floor((lngs.min() + 180) * R)) - 1)
        x1 = min(360 * R, int(np.ceil((lngs.max() + 180) * R)) + 1)
        y0 = max(0, int(np.floor((90 - lats.max()) * R)) - 1)
        y1 = min(180 * R, int(np.ceil((90 - lats.min()) * R)) + 1)
        if x1 <= x0 or y1 <= y0:
            continue
        mask = Image.new("1", (x1 - x0, y1 - y0), 0)
        draw = ImageDraw.Draw(mask)

        def points(ring):
            xs = (np.asarray(ring[0], dtype=np.float64) + 180) * R - 0.5 - x0
            ys = (90 - np.asarray(ring[1], dtype=np.float64)) * R - 0.5 - y0
            return list(zip(xs.tolist(), ys.tolist()))
        draw.polygon(points(rings[0]), fill=1)
        for hole in rings[1:]:
            draw.polygon(points(hole), fill=0)
        inside = np.asarray(mask, dtype=bool)
        grid[y0:y1, x0:x1][inside] = zone
    return grid


def quadtree(block, nodes, base):
    """The entry of a square block: a leaf (high bit) or a node index relative to base."""
    first = block.flat[0]
    if (block == first).all():
        return 0x8000 | int(first)
    index = len(nodes)
    nodes.append(None)
    h = block.shape[0] // 2
    children = [quadtree(q, nodes, base) for q in (block[:h, :h], block[:h, h:], block[h:, :h], block[h:, h:])]
    relative = index - base
    assert relative < 0x8000
    nodes[index] = children
    return relative


def main():
    out = sys.argv[1]
    tf = TimezoneFinder()
    names = tf.timezone_names
    grid = rasterise(tf)
    missing = int((grid == NONE).sum())
    cells = []
    nodes = []
    for row in range(180):
        for column in range(360):
            block = grid[row * R:(row + 1) * R, column * R:(column + 1) * R]
            base = len(nodes)
            entry = quadtree(block, nodes, base)
            if entry & 0x8000:
                cells.append(0x80000000 | (entry & 0x7FFF))
            else:
                assert entry == 0
                cells.append(base)
    data = b"TZG1" + struct.pack("<HHI", len(names), R, len(nodes))
    for name in names:
        data += bytes([len(name)]) + name.encode("ascii")
    data += struct.pack("<%dI" % len(cells), *cells)
    flat = [c for node in nodes for c in node]
    data += struct.pack("<%dH" % len(flat), *flat)
    open(out, "wb").write(data)
    print("%s: %d zones, %d nodes, %d bytes, %d cells without a zone, data %s" % (out, len(names), len(nodes), len(data), missing, tf.data_version))


if __name__ == "__main__":
    main()
