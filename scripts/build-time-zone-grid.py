#!/usr/bin/env python3
"""Builds the offline time-zone lookup's data (Sources/CTimeZoneGrid/time_zone_grid.c.bin)
from the boundaries timezonefinder ships (the `timezonefinder-data` package:
timezone-boundary-builder's polygons from OpenStreetMap, ODbL 1.0; timezonefinder
itself is MIT), as a grid of 1/64 degree (about 1.7 km at the equator) stored as
one quadtree per 1 degree cell, and, for each grid cell a border between zones of
different offsets crosses (issue 62), the edges of the polygons there:

    "TZG2", u16 zone count, u16 cells per degree (64), u32 node count,
        u32 border cell count, u32 border cells' bytes,
    zone names: u8 length + ASCII each, in zone-id order,
    360 x 180 cell entries (u32, row 0 at 90 N, column 0 at 180 W): high bit set:
        the whole cell is zone (value & 0x7FFF); else the cell's first node's index,
    360 x 180 u32: the index of the 1 degree cell's first border cell,
    nodes: 4 x u16 children (north-west, north-east, south-west, south-east):
        high bit set: a leaf: with 0x4000 set a border cell (its index: the 1 degree
        cell's first border cell + (value & 0x3FFF)), else that quarter is zone
        (value & 0x3FFF); high bit clear: the child node's index relative to the
        cell's first node,
    border cell count + 1 u32 offsets (from the first border cell's first byte),
    border cells (record_bytes: the cell's polygons, whether the cell's centre is
        inside each, their edges there, an edge two polygons share once).
    All little-endian. Zone 0x7FFF: no zone there (not seen: the oceans have
    their Etc/GMT zones).

A grid cell takes the zone of the polygon covering its centre (where polygons
overlap: the polygon drawn last), by the ray rule the lookup uses. A border cell's
edges are those crossing its inside (an edge along a grid line crosses none). Which
borders "change the offset" depends on the system's tzdata (offset_classes);
tzdata 2025b here. Usage (a developer's, not CI's: it needs pip packages; about
3 minutes):

    python3 -m venv /tmp/tzf && /tmp/tzf/bin/pip install timezonefinder==9.0.0 timezonefinder-data==3.2026.3.post1 numpy==2.4.6
    /tmp/tzf/bin/python scripts/build-time-zone-grid.py Sources/CTimeZoneGrid/time_zone_grid.c.bin
"""
import os
import hashlib
import struct
import sys
from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import numpy as np
from timezonefinder import TimezoneFinder

R = 64  # cells per degree
NONE = 0x7FFF


def crossings(ax, ay, bx, by, rows_y):
    """(row index into rows_y, x) of every edge's crossing with each parallel of rows_y (ascending):
    an edge crosses a parallel y when one end is above y and the other not."""
    lo, hi = np.minimum(ay, by), np.maximum(ay, by)
    first = np.searchsorted(rows_y, lo, side="left")
    last = np.searchsorted(rows_y, hi, side="left")  # rows_y[first:last] in [lo, hi)
    counts = last - first
    edge = np.repeat(np.arange(len(ax)), counts)
    starts = np.cumsum(counts) - counts
    row = np.repeat(first, counts) + (np.arange(edge.size) - np.repeat(starts, counts))
    y = rows_y[row]
    exa, eya, exb, eyb = ax[edge], ay[edge], bx[edge], by[edge]
    swap = eya > eyb
    exa, exb = np.where(swap, exb, exa), np.where(swap, exa, exb)
    eya, eyb = np.where(swap, eyb, eya), np.where(swap, eya, eyb)
    return row, exa + (y - eya) * (exb - exa) / (eyb - eya)


def rasterise(tf):
    """Each cell's zone: the zone of the polygon covering its centre (the polygon drawn last where
    they overlap), by the ray rule the lookup uses (an odd number of the polygon's edges crossing
    the centre's parallel east of it)."""
    grid = np.full((ROWS, COLUMNS), NONE, dtype=np.uint16)
    for boundary in range(tf.nr_of_polygons):
        zone = tf.zone_id_of(boundary)
        (ax, ay, bx, by, ring, index), rings = polygon_edges(tf, boundary)
        top = (900_000_000 - int(max(ay.max(), by.max()))) // S
        bottom = (900_000_000 - int(min(ay.min(), by.min()))) // S
        row_numbers = np.arange(min(ROWS - 1, bottom), max(0, top) - 1, -1)  # centres ascending
        rows_y = 900_000_000 - row_numbers * S - S // 2
        row, x = crossings(ax, ay, bx, by, rows_y)
        order = np.lexsort((x, row))
        row, x = row[order], x[order]
        # centres inside: x_(2k+1) <= centre < x_(2k+2), the crossings of a row ascending
        first = (x[0::2] + 1_800_000_000 - S // 2) / S
        last = (x[1::2] + 1_800_000_000 - S // 2) / S
        assert (row[0::2] == row[1::2]).all()
        starts = np.clip(np.ceil(first), 0, COLUMNS).astype(np.int64)
        ends = np.clip(np.ceil(last), 0, COLUMNS).astype(np.int64)
        for r, c0, c1 in zip(row_numbers[row[0::2]].tolist(), starts.tolist(), ends.tolist()):
            if c1 > c0:
                grid[r, c0:c1] = zone
    return grid


S = 10_000_000 // R  # a grid cell's side in timezonefinder's units (1e-7 degree): 156,250
COLUMNS, ROWS = 360 * R, 180 * R
BORDER = 0x4000  # a quadtree leaf that is a border cell: 0x8000 | BORDER | its index in the 1 degree cell


def polygon_edges(tf, boundary):
    """Every edge of polygon `boundary` (its outline and its holes), as int64 arrays ax, ay, bx, by in
    timezonefinder's units, with each edge's ring number and index in its ring."""
    rings = [tf.coords_of(boundary_id=boundary)] + list(tf._holes_of_poly(boundary))
    parts = []
    for number, ring in enumerate(rings):
        xs, ys = np.asarray(ring[0], dtype=np.int64), np.asarray(ring[1], dtype=np.int64)
        n = len(xs)
        if n < 3:
            continue
        index = np.arange(n)
        parts.append((xs, ys, np.roll(xs, -1), np.roll(ys, -1), np.full(n, number), index))
    return [np.concatenate(column) for column in zip(*parts)], rings


def cells_of_edges(ax, ay, bx, by):
    """(edge index, cell) for every grid cell whose open interior an edge crosses. An edge along a
    grid line crosses no cell's interior: the lookup never needs it (it decides a cell's points
    with paths inside the cell; see TimeZoneMap.swift)."""
    # grid units: X east from 180 W, Y south from 90 N
    x0, y0 = ax + 1_800_000_000, 900_000_000 - ay
    x1, y1 = bx + 1_800_000_000, 900_000_000 - by
    xmin, xmax = np.minimum(x0, x1), np.maximum(x0, x1)
    ymin, ymax = np.minimum(y0, y1), np.maximum(y0, y1)
    cmin, cmax = xmin // S, (xmax - 1) // S
    rmin, rmax = ymin // S, (ymax - 1) // S
    flat_x = xmin == xmax
    cmax = np.where(flat_x, cmin, cmax)
    flat_y = ymin == ymax
    rmax = np.where(flat_y, rmin, rmax)
    keep = ~((flat_x & (xmin % S == 0)) | (flat_y & (ymin % S == 0)) | (flat_x & flat_y))
    single = keep & (cmin == cmax) & (rmin == rmax)
    edges = [np.nonzero(single)[0]]
    cells = [rmin[single] * COLUMNS + cmin[single]]
    extra_e, extra_c = [], []
    for e in np.nonzero(keep & ~single)[0].tolist():
        fx0, fy0, fx1, fy1 = float(x0[e]), float(y0[e]), float(x1[e]), float(y1[e])
        for c in range(int(cmin[e]), int(cmax[e]) + 1):
            if fx0 == fx1:
                ylo, yhi = min(fy0, fy1), max(fy0, fy1)
            else:
                lo, hi = max(min(fx0, fx1), c * S), min(max(fx0, fx1), (c + 1) * S)
                ya = fy0 + (lo - fx0) * (fy1 - fy0) / (fx1 - fx0)
                yb = fy0 + (hi - fx0) * (fy1 - fy0) / (fx1 - fx0)
                ylo, yhi = min(ya, yb), max(ya, yb)
            if ylo == yhi:
                if ylo % S == 0:
                    continue
                rows = [int(ylo // S)]
            else:
                # a little wider than exact: a cell too many costs bytes, one too few a wrong answer
                rows = range(max(0, int((ylo - 1) // S)), min(ROWS - 1, int((yhi + 1) // S)) + 1)
            for r in rows:
                if r * S < yhi + 1 and (r + 1) * S > ylo - 1:
                    extra_e.append(e)
                    extra_c.append(r * COLUMNS + c)
    edges.append(np.asarray(extra_e, dtype=np.int64))
    cells.append(np.asarray(extra_c, dtype=np.int64))
    return np.concatenate(edges), np.concatenate(cells)


def center_of(cell):
    """A cell's centre in timezonefinder's units (exact: S is even)."""
    row, column = cell // COLUMNS, cell % COLUMNS
    return column * S + S // 2 - 1_800_000_000, 900_000_000 - row * S - S // 2


def inside_at(ax, ay, bx, by, qx, qy):
    """Whether each point (qx, qy) is inside the polygon of these edges: the parity of the edges an
    eastward ray crosses, an edge counting when one end is above qy and the other not and it
    crosses the line east of qx (the rule TimeZoneMap.swift's paths use, so the two agree exactly)."""
    rows_y = np.unique(qy)  # ascending
    row, xcross = crossings(ax, ay, bx, by, rows_y)
    order = np.lexsort((xcross, row))
    row, xcross = row[order], xcross[order]
    qrow = np.searchsorted(rows_y, qy)
    key = row.astype(np.float64) * 4e9 + (xcross + 2e9)
    qkey = qrow.astype(np.float64) * 4e9 + (qx + 2e9)
    end = np.searchsorted(key, (qrow + 1).astype(np.float64) * 4e9, side="left")
    east = end - np.searchsorted(key, qkey, side="right")
    result = east % 2 == 1
    # where a crossing is within float's reach of the centre, count exactly (integers, as the lookup does)
    ties = np.nonzero(np.searchsorted(key, qkey - 1, side="left") != np.searchsorted(key, qkey + 1, side="right"))[0]
    for q in ties.tolist():
        t, y = int(qx[q]), int(qy[q])
        straddle = (ay > y) != (by > y)
        lx, ly = np.where(ay < by, ax, bx)[straddle], np.minimum(ay, by)[straddle]
        ux, uy = np.where(ay < by, bx, ax)[straddle], np.maximum(ay, by)[straddle]
        result[q] = int(((ux - lx) * (y - ly) > (t - lx) * (uy - ly)).sum()) % 2 == 1
    return result


def offset_classes(names):
    """Each zone's class: zones whose UTC offsets agree at 00:00, 06:00, 12:00 and 18:00 UTC of
    every day from 2000 to 2037 (Python's zoneinfo, the system's tzdata) share one. A border between two zones of one class changes no offset, so the grid's
    cells decide it (issue 62 asks for exactness where the offset changes)."""
    start = datetime(2000, 1, 1, tzinfo=timezone.utc)
    instants = [start + timedelta(hours=6 * k) for k in range(4 * 366 * 38)]
    seen = {}
    classes = []
    for name in names:
        info = ZoneInfo(name)
        signature = tuple(int(t.astimezone(info).utcoffset().total_seconds()) for t in instants)
        classes.append(seen.setdefault(signature, len(seen)))
    return classes


def border_cells(tf, grid):
    """The cells a border between two zones of different offsets crosses (see offset_classes; the
    oceans' Etc/ zones too: a land zone's polygon takes in 12 nautical miles of sea, and positions
    there are "land" to timezonefinder), each with its candidates: for every polygon
    whose edges cross the cell, its zone, whether the cell's centre is inside it, and its edges
    there (as chains of consecutive vertices, in timezonefinder's units)."""
    zone_of = [tf.zone_id_of(b) for b in range(tf.nr_of_polygons)]
    per_polygon = []
    all_cells, all_polys = [], []
    for b in range(tf.nr_of_polygons):
        (ax, ay, bx, by, ring, index), rings = polygon_edges(tf, b)
        e, c = cells_of_edges(ax, ay, bx, by)
        per_polygon.append((e, c))
        all_cells.append(np.unique(c))
        all_polys.append(np.full(len(all_cells[-1]), b))
    cells = np.concatenate(all_cells)
    polys = np.concatenate(all_polys)
    classes = np.asarray(offset_classes(tf.timezone_names), dtype=np.int64)
    zones = classes[np.asarray(zone_of, dtype=np.int64)[polys]]
    pairs = np.unique(cells * 4096 + zones)
    pair_cells = pairs // 4096
    distinct, count = np.unique(pair_cells, return_counts=True)
    border = distinct[count >= 2]
    border_set = np.zeros(ROWS * COLUMNS, dtype=bool)
    border_set[border] = True
    records = {}  # cell -> list of (polygon, zone, inside, chains)
    for b in range(tf.nr_of_polygons):
        e, c = per_polygon[b]
        mask = border_set[c]
        if not mask.any():
            continue
        e, c = e[mask], c[mask]
        (ax, ay, bx, by, ring, index), rings = polygon_edges(tf, b)
        ucells = np.unique(c)
        qx, qy = center_of(ucells)
        inside = inside_at(ax, ay, bx, by, qx, qy)
        order = np.lexsort((e, c))
        e, c = e[order], c[order]
        starts = np.searchsorted(c, ucells, side="left")
        ends = np.searchsorted(c, ucells, side="right")
        for k, cell in enumerate(ucells.tolist()):
            chains = []
            chain = None
            for edge in e[starts[k]:ends[k]].tolist():
                if chain is not None and edge == chain[-1] + 1 and ring[edge] == ring[chain[-1]]:
                    chain.append(edge)
                else:
                    chain = [edge]
                    chains.append(chain)
            points = []
            for chain in chains:
                xs = [int(ax[chain[0]]), *(int(bx[i]) for i in chain)]
                ys = [int(ay[chain[0]]), *(int(by[i]) for i in chain)]
                points.append((xs, ys))
            records.setdefault(cell, []).append((b, zone_of[b], bool(inside[k]), points))
    return records


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


def varint(value):
    """`value` (signed) zigzag-encoded as LEB128: 7 bits a byte, low first, high bit: more."""
    value = value * 2 if value >= 0 else -value * 2 - 1
    out = bytearray()
    while value >= 0x80:
        out.append(0x80 | (value & 0x7F))
        value >>= 7
    out.append(value)
    return out


def record_bytes(cell, fallback, candidates):
    """A border cell: u16 the grid's zone there, u16 candidate count; per candidate (in drawing
    order): u16 zone, u8 1 if the cell's centre is inside; then varint chain count; per chain:
    varint owner count, each owner's candidate index (varints), varint vertex count, the first
    vertex from the cell's south-west corner, then each from the one before (zigzag varints:
    exact, timezonefinder's units). An edge two polygons share (a border: nearly all of them) is
    stored once, with both as its owners: crossing it flips both."""
    row, column = cell // COLUMNS, cell % COLUMNS
    west, south = column * S - 1_800_000_000, 900_000_000 - (row + 1) * S
    candidates = sorted(candidates)
    owners = {}  # an undirected edge: the candidates that have it (a candidate twice if it has it twice)
    for number, (polygon, zone, inside, chains) in enumerate(candidates):
        for xs, ys in chains:
            for k in range(len(xs) - 1):
                a, b = (xs[k], ys[k]), (xs[k + 1], ys[k + 1])
                if a != b:
                    owners.setdefault((a, b) if a < b else (b, a), []).append(number)
    emitted = set()
    merged = []  # (owners, vertices)
    for polygon, zone, inside, chains in candidates:
        for xs, ys in chains:
            current = None
            for k in range(len(xs) - 1):
                a, b = (xs[k], ys[k]), (xs[k + 1], ys[k + 1])
                key = (a, b) if a < b else (b, a)
                if a == b or key in emitted:
                    current = None
                    continue
                emitted.add(key)
                these = owners[key]
                if current is not None and current[0] == these and current[1][-1] == a:
                    current[1].append(b)
                else:
                    current = (these, [a, b])
                    merged.append(current)
    out = bytearray(struct.pack("<HH", fallback, len(candidates)))
    for polygon, zone, inside, chains in candidates:
        out += struct.pack("<HB", zone, 1 if inside else 0)
    out += varint(len(merged))
    for these, vertices in merged:
        out += varint(len(these))
        for number in these:
            out += varint(number)
        out += varint(len(vertices))
        px, py = west, south
        for x, y in vertices:
            out += varint(x - px) + varint(y - py)
            px, py = x, y
    return bytes(out)


def main():
    out = sys.argv[1]
    tf = TimezoneFinder()
    names = tf.timezone_names
    assert len(names) < BORDER
    grid = rasterise(tf)
    missing = int((grid == NONE).sum())
    records = border_cells(tf, grid)
    cells = []
    first_border = []
    nodes = []
    blobs = []
    by_degree = {}
    for cell in sorted(records):
        row, column = cell // COLUMNS, cell % COLUMNS
        by_degree.setdefault((row // R, column // R), []).append((row % R, column % R, cell))
    for row in range(180):
        for column in range(360):
            block = grid[row * R:(row + 1) * R, column * R:(column + 1) * R].copy()
            first_border.append(len(blobs))
            for local, (y, x, cell) in enumerate(by_degree.get((row, column), [])):
                blobs.append(record_bytes(cell, int(block[y, x]), records[cell]))
                block[y, x] = BORDER | local
            base = len(nodes)
            entry = quadtree(block, nodes, base)
            if entry & 0x8000:
                assert not entry & BORDER
                cells.append(0x80000000 | (entry & 0x7FFF))
            else:
                assert entry == 0
                cells.append(base)
    offsets = [0]
    for blob in blobs:
        offsets.append(offsets[-1] + len(blob))
    data = b"TZG2" + struct.pack("<HHIII", len(names), R, len(nodes), len(blobs), offsets[-1])
    for name in names:
        data += bytes([len(name)]) + name.encode("ascii")
    data += struct.pack("<%dI" % len(cells), *cells)
    data += struct.pack("<%dI" % len(first_border), *first_border)
    flat = [c for node in nodes for c in node]
    data += struct.pack("<%dH" % len(flat), *flat)
    data += struct.pack("<%dI" % len(offsets), *offsets)
    data += b"".join(blobs)
    open(out, "wb").write(data)
    # The build tracks the .c, not the .bin it includes: the .c names the data's
    # size and digest, so new data changes the .c too, in every checkout (a
    # touched file would only be rebuilt here), and the next build links it.
    source = out[:-len(".bin")] if out.endswith(".c.bin") else None
    if source and os.path.exists(source):
        lines = open(source).read().split("\n")
        stamp = "// data: %d bytes, sha256 %s" % (len(data), hashlib.sha256(data).hexdigest())
        lines = [line for line in lines if not line.startswith("// data: ")]
        lines.insert(3, stamp)
        open(source, "w").write("\n".join(lines))
    print("%s: %d zones, %d nodes, %d border cells (%d bytes of edges), %d bytes, %d cells without a zone, data %s" % (
        out, len(names), len(nodes), len(blobs), offsets[-1], len(data), missing, tf.data_version))


if __name__ == "__main__":
    main()
