#!/usr/bin/env python3
"""The primary item's HEVC tiles of a HEIC (a grid's, in order) as one annex-B stream: the hvcC
parameter sets, then each tile's NAL units, for timing libavcodec's decode of the same tiles alone
(BENCHMARKS.md, "Photos and iPhone HEIC after the split"):

    python3 bench/heic-tiles.py FILE.heic OUT.hevc
    ffmpeg -v error -threads 1 -skip_loop_filter all -i OUT.hevc -f null -

Standard library only."""
import importlib.util, os, struct, sys
spec = importlib.util.spec_from_file_location("heif_item", os.path.join(os.path.dirname(os.path.abspath(__file__)), "heif-item.py"))
m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
f = m.File(sys.argv[1])
p = f.primary
tiles = f.refs_from(p, "dimg") if f.infe[p][0] == "grid" else [p]
def hvcc(i):
    for idx, _ in f.assoc.get(i, []):
        prop = f.props[idx - 1]
        if prop[4:8] == b"hvcC":
            return prop[8:]
c = hvcc(tiles[0])
lsize = (c[21] & 3) + 1
out = bytearray()
a = 23
for _ in range(c[22]):
    a += 1
    n = struct.unpack(">H", c[a:a + 2])[0]; a += 2
    for _ in range(n):
        ln = struct.unpack(">H", c[a:a + 2])[0]; a += 2
        out += b"\0\0\0\1" + c[a:a + ln]; a += ln
for t in tiles:
    d = f.data(t); q = 0
    while q + lsize <= len(d):
        ln = int.from_bytes(d[q:q + lsize], "big"); q += lsize
        out += b"\0\0\0\1" + d[q:q + ln]; q += ln
open(sys.argv[2], "wb").write(out)
print(len(tiles), "tiles", len(out), "bytes")
