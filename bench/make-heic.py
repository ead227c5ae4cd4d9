#!/usr/bin/env python3
"""Writes HEIF/HEIC and AVIF still images the way phones do, around encoder
bitstreams made by ffmpeg (libx265 for HEVC, libaom for AV1): a grid of
independently coded tiles (`grid` item with `dimg` references, hidden tile
items), `hvcC`/`av1C`, `ispe`, `colr` (nclx), `pixi`, and optionally `irot`,
`imir`, `clap`, an `Exif` item (with an EXIF Orientation) and a `thmb` item.

Two uses:

  make-heic.py encode --in DISPLAYED.png --out OUT.heic [options]
      DISPLAYED is the picture as it must be *displayed* (upright, after
      every transform). The script derives the stored pixels by undoing the
      requested transforms, so a marker at the top-left of DISPLAYED is at the
      top-left of a correct decode. Options:
        --codec hevc|av1     (default hevc; av1 writes AVIF)
        --tile N             grid of NxN tiles (default: one coded image)
        --irot A             rotate A*90 degrees anticlockwise to display
        --imir AXIS          as libheif 1.15 applies it: 0 flips top<->bottom,
                             1 flips left<->right (the 2017 text of the
                             standard reads the other way round)
        --clap W H           the coded picture gets a margin (green) around the
                             displayed W x H area, cropped away by `clap`
        --clap-margin L T R B  margin sizes in pixels (default 24 16 40 32)
        --exif-orientation N add an Exif item with Orientation N; with no
                             --irot/--imir the stored pixels are rotated so that
                             the *EXIF* orientation displays them upright
                             (iPhone 7 style: no irot, EXIF 6)
        --exif-only-tag      with --irot: write EXIF Orientation as metadata
                             only (modern iPhone: irot 3 *and* EXIF 6)
        --thumb N            add a `thmb` item whose long side is N pixels
        --thumb-from IMG     ... made from IMG instead (no transforms; tests
                             tell the embedded thumbnail from the picture)
        --crf N --preset P   encoder quality/speed (default 28, medium)
        --threads N          x265 thread pool size (default 1; libaom always 1)
        --make/--model       EXIF Make/Model (default Apple / iPhone 7)

  make-heic.py iphone --out DIR --count 16 [--threads 2]
      The benchmark set: 12 MP (4032x3024) iPhone-like grid HEICs, 8x6 tiles of
      512x512 (the last column and row cropped by the grid's output size),
      photographic content made with libvips (Perlin colour fields, Worley
      texture, fine detail, sensor-like grain), ~2.6 MB each (x265 CRF 26,
      preset medium; ~25 s per file on two cores), with a red marker
      at the displayed top-left. Variants cycle through: plain; portrait with
      irot 3 + EXIF 6 (modern iPhone); portrait with EXIF 6 and no irot
      (iPhone 7); clap crop; landscape with thmb 320; portrait irot 1.

Deterministic: fixed seeds, single-threaded encoders by default, -fflags
+bitexact, no timestamps anywhere in the output. Needs ffmpeg (libx265,
libaom-av1) and vips on PATH; python3 standard library only.
"""
import argparse
import os
import shutil
import struct
import subprocess
import sys
import tempfile

# ---------------------------------------------------------------------------
# ISOBMFF helpers
# ---------------------------------------------------------------------------


def box(typ, payload):
    return struct.pack(">I4s", 8 + len(payload), typ) + payload


def fullbox(typ, version, flags, payload):
    return box(typ, struct.pack(">I", (version << 24) | flags) + payload)


def u8(v):
    return struct.pack(">B", v)


def u16(v):
    return struct.pack(">H", v)


def u32(v):
    return struct.pack(">I", v)


def i32(v):
    return struct.pack(">i", v)


def walk(data, start, end):
    """Yields (type, payload_start, box_end) for the boxes in data[start:end]."""
    i = start
    while i + 8 <= end:
        size, typ = struct.unpack(">I4s", data[i:i + 8])
        hdr = 8
        if size == 1:
            size = struct.unpack(">Q", data[i + 8:i + 16])[0]
            hdr = 16
        elif size == 0:
            size = end - i
        yield typ, i + hdr, i + size
        i += size


def find(data, path, start=0, end=None):
    """First box along path (list of types); returns (payload_start, end)."""
    end = len(data) if end is None else end
    for typ, ps, be in walk(data, start, end):
        if typ == path[0]:
            if len(path) == 1:
                return ps, be
            return find(data, path[1:], ps, be)
    raise KeyError(path)


def mp4_samples(path):
    """Returns (config_box_bytes, [sample bytes]) of the first track of an
    ffmpeg-written MP4 (hvc1/av01 sample entry; stsz/stsc/stco)."""
    d = open(path, "rb").read()
    stbl = find(d, [b"moov", b"trak", b"mdia", b"minf", b"stbl"])
    ps, pe = find(d, [b"stsd"], *stbl)
    # stsd: version/flags, entry_count, then one VisualSampleEntry (8 + 78 bytes)
    es = ps + 8
    esize = struct.unpack(">I", d[es:es + 4])[0]
    cfg = None
    for typ, cps, cbe in walk(d, es + 8 + 78, es + esize):
        if typ in (b"hvcC", b"av1C"):
            cfg = d[cps - 8:cbe]
    ps, pe = find(d, [b"stsz"], *stbl)
    fixed, count = struct.unpack(">II", d[ps + 4:ps + 12])
    sizes = [fixed] * count if fixed else list(struct.unpack(">%dI" % count, d[ps + 12:ps + 12 + 4 * count]))
    ps, pe = find(d, [b"stco"], *stbl)
    n = struct.unpack(">I", d[ps + 4:ps + 8])[0]
    chunks = struct.unpack(">%dI" % n, d[ps + 8:ps + 8 + 4 * n])
    ps, pe = find(d, [b"stsc"], *stbl)
    n = struct.unpack(">I", d[ps + 4:ps + 8])[0]
    stsc = [struct.unpack(">III", d[ps + 8 + 12 * k:ps + 20 + 12 * k]) for k in range(n)]
    out, s = [], 0
    for ci, off in enumerate(chunks, 1):
        per = [e[1] for e in stsc if e[0] <= ci][-1]
        for _ in range(per):
            if s >= count:
                break
            out.append(d[off:off + sizes[s]])
            off += sizes[s]
            s += 1
    return cfg, out


def strip_hevc_param_sets(sample):
    """Drops in-band VPS/SPS/PPS/SEI NAL units (x265 repeats them before each
    IDR); the item's hvcC carries the parameter sets, as in a phone's file."""
    out, i = bytearray(), 0
    while i < len(sample):
        n = struct.unpack(">I", sample[i:i + 4])[0]
        nal = sample[i + 4:i + 4 + n]
        if ((nal[0] >> 1) & 0x3F) not in (32, 33, 34, 39, 40):
            out += sample[i:i + 4 + n]
        i += 4 + n
    return bytes(out)


# ---------------------------------------------------------------------------
# Pixels: PPM in/out, transforms through vips
# ---------------------------------------------------------------------------


def run(*a, **kw):
    return subprocess.run([str(x) for x in a], check=True, **kw)


def vips(*a):
    run("vips", *a, stdout=subprocess.DEVNULL)


def read_ppm(path):
    d = open(path, "rb").read()
    parts, i = [], 0
    while len(parts) < 4:
        while d[i:i + 1].isspace():
            i += 1
        if d[i:i + 1] == b"#":
            while d[i:i + 1] != b"\n":
                i += 1
            continue
        j = i
        while not d[j:j + 1].isspace():
            j += 1
        parts.append(d[i:j])
        i = j
    assert parts[0] == b"P6" and parts[3] == b"255", "need an 8-bit RGB PPM"
    w, h = int(parts[1]), int(parts[2])
    return w, h, d[i + 1:i + 1 + w * h * 3]


def to_ppm(src, dst):
    """Any vips-readable image -> 8-bit sRGB PPM without alpha."""
    tmp = dst + ".v"
    vips("colourspace", src, tmp, "srgb")
    bands = int(subprocess.run(["vipsheader", "-f", "bands", tmp], check=True,
                               capture_output=True).stdout)
    if bands > 3:
        vips("extract_band", tmp, tmp + "2.v", 0, "--n", 3)
        os.replace(tmp + "2.v", tmp)
    vips("cast", tmp, tmp + "3.v", "uchar")
    vips("copy", tmp + "3.v", dst)
    for f in (tmp, tmp + "3.v"):
        os.remove(f)


def size_of(path):
    out = subprocess.run(["vipsheader", "-f", "width", path], check=True, capture_output=True).stdout
    w = int(out)
    h = int(subprocess.run(["vipsheader", "-f", "height", path], check=True, capture_output=True).stdout)
    return w, h


MARGIN_RGB = (40, 200, 60)   # the clap margin: green, never seen in a correct decode


def stored_pixels(displayed, work, irot, imir, exif_orientation, clap_margin):
    """Undo the display transforms: returns the PPM path of the coded picture
    and, if clap, the crop rectangle (x, y, w, h) inside it."""
    cur = displayed
    k = 0

    def step(op, *args):
        nonlocal cur, k
        k += 1
        out = os.path.join(work, "st%d.v" % k)
        vips(op, cur, out, *args)
        cur = out

    if irot is None and imir is None and exif_orientation:
        # EXIF orientation only: stored = inverse of the EXIF transform.
        inv = {1: [], 2: [("flip", "horizontal")], 3: [("rot", "d180")], 4: [("flip", "vertical")],
               5: [("rot", "d90"), ("flip", "horizontal")], 6: [("rot", "d270")],
               7: [("rot", "d270"), ("flip", "horizontal")], 8: [("rot", "d90")]}[exif_orientation]
        for op in inv:
            step(*op)
    else:
        # display = imir(irot(clap(stored))); stored_cropped = irot^-1(imir(displayed))
        if imir is not None:
            step("flip", "vertical" if imir == 0 else "horizontal")
        if irot:
            # irot A rotates A*90 anticlockwise; undo it by rotating clockwise.
            step("rot", {1: "d90", 2: "d180", 3: "d270"}[irot])
    crop = None
    if clap_margin:
        l, t, r, b = clap_margin
        w, h = size_of(cur)
        k += 1
        out = os.path.join(work, "st%d.v" % k)
        vips("embed", cur, out, l, t, w + l + r, h + t + b, "--extend", "background",
             "--background", " ".join(map(str, MARGIN_RGB)))
        cur = out
        crop = (l, t, w, h)
    ppm = os.path.join(work, "stored.ppm")
    to_ppm(cur, ppm)
    return ppm, crop


# ---------------------------------------------------------------------------
# Encoding
# ---------------------------------------------------------------------------

FF = ["ffmpeg", "-nostdin", "-v", "error", "-y"]
BITEXACT = ["-fflags", "+bitexact", "-flags:v", "+bitexact", "-map_metadata", "-1"]
# nclx written in colr and in the bitstream VUI: BT.709 primaries, sRGB
# transfer, BT.601 matrix, full range (what libheif's own encoder writes).
NCLX = (1, 13, 6, 1)


def encode_frames(frames, w, h, codec, crf, preset, threads, work, name):
    """frames: list of raw RGB24 byte strings of w x h. Returns (config box, [samples])."""
    raw = os.path.join(work, name + ".rgb")
    with open(raw, "wb") as f:
        for fr in frames:
            f.write(fr)
    mp4 = os.path.join(work, name + ".mp4")
    common = FF + ["-f", "rawvideo", "-pix_fmt", "rgb24", "-s", "%dx%d" % (w, h), "-r", "1", "-i", raw,
                   "-vf", "scale=out_color_matrix=bt601:out_range=full:flags=bicubic+accurate_rnd+full_chroma_int,format=yuv420p",
                   "-color_range", "pc", "-colorspace", "bt470bg", "-color_primaries", "bt709",
                   "-color_trc", "iec61966-2-1"]
    if codec == "hevc":
        cmd = common + ["-c:v", "libx265", "-preset", preset, "-crf", str(crf), "-tag:v", "hvc1",
                        "-x265-params", "log-level=error:keyint=1:info=0:frame-threads=1:pools=%d" % threads]
    else:
        cmd = common + ["-c:v", "libaom-av1", "-crf", str(crf), "-b:v", "0", "-cpu-used", "6",
                        "-g", "1", "-row-mt", "0", "-threads", "1"]
    run(*(cmd + BITEXACT + ["-f", "mp4", mp4]))
    cfg, samples = mp4_samples(mp4)
    assert len(samples) == len(frames), (len(samples), len(frames))
    if codec == "hevc":
        samples = [strip_hevc_param_sets(s) for s in samples]
    os.remove(raw)
    os.remove(mp4)
    return cfg, samples


def slice_tiles(w, h, px, tile):
    """Pads (edge pixels repeated) to whole tiles, returns rows, cols, [tile rgb]."""
    cols, rows = -(-w // tile), -(-h // tile)
    stride = w * 3
    tiles = []
    for r in range(rows):
        for c in range(cols):
            buf = bytearray()
            for y in range(r * tile, (r + 1) * tile):
                sy = min(y, h - 1)
                x0, x1 = c * tile, min((c + 1) * tile, w)
                line = px[sy * stride + x0 * 3: sy * stride + x1 * 3]
                if x1 - x0 < tile:
                    line += px[sy * stride + (w - 1) * 3: sy * stride + w * 3] * (tile - (x1 - x0))
                buf += line
            tiles.append(bytes(buf))
    return rows, cols, tiles


def exif_blob(orientation, make, model):
    """'Exif\\0\\0' + a big-endian TIFF with IFD0 Make, Model, Orientation."""
    entries, extra = [], b""
    base = 8 + 2 + 12 * 3 + 4        # header, count, 3 entries, next-IFD

    def ascii_entry(tag, s):
        nonlocal extra
        v = s.encode() + b"\0"
        if len(v) <= 4:
            return struct.pack(">HHI4s", tag, 2, len(v), v.ljust(4, b"\0"))
        off = base + len(extra)
        extra += v + (b"\0" if len(v) % 2 else b"")
        return struct.pack(">HHII", tag, 2, len(v), off)

    entries.append(ascii_entry(0x010F, make))
    entries.append(ascii_entry(0x0110, model))
    entries.append(struct.pack(">HHIHH", 0x0112, 3, 1, orientation, 0))
    tiff = b"MM\0*" + u32(8) + u16(len(entries)) + b"".join(entries) + u32(0) + extra
    return b"Exif\0\0" + tiff


# ---------------------------------------------------------------------------
# The HEIF container
# ---------------------------------------------------------------------------


class Item:
    def __init__(self, iid, typ, data=b"", hidden=False, in_idat=False, name=b""):
        self.id, self.type, self.data, self.hidden, self.in_idat, self.name = iid, typ, data, hidden, in_idat, name
        self.props = []          # (property index 1-based, essential)


def write_heif(path, brand, compat, items, primary, refs, props):
    """items: [Item]; refs: [(type, from, [to])]; props: [bytes] (ipco children)."""
    ftyp = box(b"ftyp", brand + u32(0) + b"".join(compat))
    hdlr = fullbox(b"hdlr", 0, 0, u32(0) + b"pict" + bytes(12) + b"\0")
    pitm = fullbox(b"pitm", 0, 0, u16(primary))
    iinf = fullbox(b"iinf", 0, 0, u16(len(items)) + b"".join(
        fullbox(b"infe", 2, 1 if it.hidden else 0, u16(it.id) + u16(0) + it.type + it.name + b"\0") for it in items))
    iref = fullbox(b"iref", 0, 0, b"".join(
        box(t, u16(f) + u16(len(to)) + b"".join(u16(x) for x in to)) for t, f, to in refs)) if refs else b""
    ipco = box(b"ipco", b"".join(props))
    assoc = [it for it in sorted(items, key=lambda i: i.id) if it.props]
    ipma = fullbox(b"ipma", 0, 0, u32(len(assoc)) + b"".join(
        u16(it.id) + u8(len(it.props)) + b"".join(u8((0x80 if e else 0) | p) for p, e in it.props)
        for it in assoc))
    iprp = box(b"iprp", ipco + ipma)
    idat_items = [it for it in items if it.in_idat]
    idat_payload, idat_off = b"", {}
    for it in idat_items:
        idat_off[it.id] = len(idat_payload)
        idat_payload += it.data
    idat = box(b"idat", idat_payload) if idat_items else b""

    def iloc(offsets):
        # version 1: offset_size 4, length_size 4, base_offset_size 0, index_size 0
        body = u8(0x44) + u8(0x00) + u16(len(items))
        for it in items:
            method = 1 if it.in_idat else 0
            off = idat_off[it.id] if it.in_idat else offsets[it.id]
            body += u16(it.id) + u16(method) + u16(0) + u16(1) + u32(off) + u32(len(it.data))
        return fullbox(b"iloc", 1, 0, body)

    def meta(offsets):
        return fullbox(b"meta", 0, 0, hdlr + pitm + iloc(offsets) + iinf + iref + iprp + idat)

    mdat_items = [it for it in items if not it.in_idat]
    head = len(ftyp) + len(meta({it.id: 0 for it in mdat_items})) + 8
    offsets, pos = {}, head
    for it in mdat_items:
        offsets[it.id] = pos
        pos += len(it.data)
    out = ftyp + meta(offsets) + box(b"mdat", b"".join(it.data for it in mdat_items))
    with open(path, "wb") as f:
        f.write(out)


def add_grpl(path, grpl, out=None):
    """Appends a `grpl` box (entity groups: `ster`, `altr`) to a file written by
    write_heif: into its meta box, with iloc's file offsets (construction method 0)
    moved by the box's length, as every item in mdat moves. Writes `out` (default: in place)."""
    data = bytearray(open(path, "rb").read())
    meta = data.index(b"meta") - 4
    meta_size = struct.unpack(">I", data[meta:meta + 4])[0]
    data[meta + meta_size:meta + meta_size] = grpl
    data[meta:meta + 4] = struct.pack(">I", meta_size + len(grpl))
    iloc = data.index(b"iloc") - 4
    count = struct.unpack(">H", data[iloc + 14:iloc + 16])[0]
    at = iloc + 16
    for _ in range(count):
        method = struct.unpack(">H", data[at + 2:at + 4])[0]
        if method == 0:
            offset = struct.unpack(">I", data[at + 8:at + 12])[0]
            data[at + 8:at + 12] = struct.pack(">I", offset + len(grpl))
        at += 16
    open(out or path, "wb").write(data)


def ispe(w, h):
    return fullbox(b"ispe", 0, 0, u32(w) + u32(h))


def colr_nclx():
    p, t, m, full = NCLX
    return box(b"colr", b"nclx" + u16(p) + u16(t) + u16(m) + u8(0x80 if full else 0))


def pixi(bits=8, n=3):
    return fullbox(b"pixi", 0, 0, u8(n) + bytes([bits] * n))


def irot_box(a):
    return box(b"irot", u8(a & 3))


def imir_box(axis):
    return box(b"imir", u8(axis & 1))


def clap_box(W, H, x, y, w, h):
    # centre offsets as fractions with denominator 2:
    # left = horizOff + (W - w) / 2  =>  horizOff = (2x - (W - w)) / 2
    return box(b"clap", u32(w) + u32(1) + u32(h) + u32(1) +
               i32(2 * x - (W - w)) + u32(2) + i32(2 * y - (H - h)) + u32(2))


def encode(args):
    work = tempfile.mkdtemp(prefix="make-heic.")
    try:
        _encode(args, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _encode(a, work):
    disp = os.path.join(work, "disp.ppm")
    to_ppm(a.input, disp)
    margin = tuple(a.clap_margin) if a.clap else None
    if a.clap:
        dw, dh = size_of(disp)
        assert (dw, dh) == tuple(a.clap), "--clap W H must equal the displayed size %dx%d" % (dw, dh)
    exif_drives = a.exif_orientation if (a.irot is None and a.imir is None and not a.exif_only_tag) else None
    ppm, crop = stored_pixels(disp, work, a.irot, a.imir, exif_drives, margin)
    W, H, px = read_ppm(ppm)
    assert W % 2 == 0 and H % 2 == 0, "stored size must be even for 4:2:0 (%dx%d)" % (W, H)
    codec = a.codec
    itype = b"hvc1" if codec == "hevc" else b"av01"
    props, items, refs = [], [], []

    def prop(b):
        if b in props:
            return props.index(b) + 1
        props.append(b)
        return len(props)

    transforms = []                       # order required by MIAF: clap, irot, imir
    if crop:
        transforms.append(prop(clap_box(W, H, *crop)))
    if a.irot:
        transforms.append(prop(irot_box(a.irot)))
    if a.imir is not None:
        transforms.append(prop(imir_box(a.imir)))
    p_colr, p_pixi = prop(colr_nclx()), prop(pixi())

    if a.tile:
        rows, cols, tiles = slice_tiles(W, H, px, a.tile)
        cfg, samples = encode_frames(tiles, a.tile, a.tile, codec, a.crf, a.preset, a.threads, work, "tiles")
        p_cfg, p_tispe = prop(cfg), prop(ispe(a.tile, a.tile))
        for n, s in enumerate(samples, 1):
            it = Item(n, itype, s, hidden=True)
            it.props = [(p_cfg, True), (p_tispe, False), (p_colr, False), (p_pixi, False)]
            items.append(it)
        gid = len(samples) + 1
        big = W > 65535 or H > 65535
        grid = u8(0) + u8(1 if big else 0) + u8(rows - 1) + u8(cols - 1) + \
            (u32(W) + u32(H) if big else u16(W) + u16(H))
        g = Item(gid, b"grid", grid, in_idat=True)
        g.props = [(prop(ispe(W, H)), False), (p_colr, False), (p_pixi, False)] + [(t, True) for t in transforms]
        items.append(g)
        refs.append((b"dimg", gid, list(range(1, gid))))
        primary = gid
    else:
        cfg, samples = encode_frames([px], W, H, codec, a.crf, a.preset, a.threads, work, "image")
        it = Item(1, itype, samples[0])
        it.props = [(prop(cfg), True), (prop(ispe(W, H)), False), (p_colr, False), (p_pixi, False)] + \
            [(t, True) for t in transforms]
        items.append(it)
        primary = 1
    nid = max(i.id for i in items) + 1
    if a.thumb:
        # thumbnail of the coded (uncropped) picture, same rotation/mirror
        tv = os.path.join(work, "thumb.v")
        source = ppm
        if getattr(a, "thumb_from", None):
            # a different picture for the thumbnail item (tests tell which one was shown)
            assert not transforms, "--thumb-from only without irot/imir/clap"
            source = os.path.join(work, "thumb-src.ppm")
            to_ppm(a.thumb_from, source)
        vips("thumbnail", source, tv, a.thumb, "--height", a.thumb, "--size", "both")
        tw, th = size_of(tv)
        tw, th = tw - tw % 2, th - th % 2
        vips("crop", tv, tv + ".c.v", 0, 0, tw, th)
        tp = os.path.join(work, "thumb.ppm")
        to_ppm(tv + ".c.v", tp)
        _, _, tpx = read_ppm(tp)
        tcfg, ts = encode_frames([tpx], tw, th, codec, a.crf, a.preset, a.threads, work, "thumb")
        t = Item(nid, itype, ts[0])
        t.props = [(prop(tcfg), True), (prop(ispe(tw, th)), False), (p_colr, False), (p_pixi, False)] + \
            [(x, True) for x in transforms if props[x - 1][4:8] in (b"irot", b"imir")]
        items.append(t)
        refs.append((b"thmb", nid, [primary]))
        nid += 1
    if a.exif_orientation:
        e = Item(nid, b"Exif", u32(6) + exif_blob(a.exif_orientation, a.make, a.model), hidden=True)
        items.append(e)
        refs.append((b"cdsc", nid, [primary]))
    if codec == "hevc":
        brand, compat = b"heic", [b"mif1", b"heic"]
    else:
        brand, compat = b"avif", [b"avif", b"mif1", b"miaf"]
    write_heif(a.out, brand, compat, items, primary, refs, props)


# ---------------------------------------------------------------------------
# The 12 MP benchmark set
# ---------------------------------------------------------------------------


def photo_base(seed, w, h, out, work):
    """Photographic-looking content (same recipe as bench/make-corpus.sh's
    base_image): smooth colour fields, cell texture, fine detail, grain; and a
    red marker at the top-left, a blue one at the bottom-right."""
    d = os.path.join(work, "base%d" % seed)
    os.makedirs(d)
    P = lambda n: os.path.join(d, n)
    vips("perlin", P("r.v"), w, h, "--cell-size", 700, "--uchar", "--seed", seed * 10 + 1)
    vips("perlin", P("g.v"), w, h, "--cell-size", 530, "--uchar", "--seed", seed * 10 + 2)
    vips("perlin", P("b.v"), w, h, "--cell-size", 900, "--uchar", "--seed", seed * 10 + 3)
    vips("worley", P("w.v"), w, h, "--cell-size", 90, "--seed", seed * 10 + 4)
    vips("perlin", P("d.v"), w, h, "--cell-size", 24, "--seed", seed * 10 + 5)
    vips("gaussnoise", P("n.v"), w, h, "--sigma", 4, "--mean", 0, "--seed", seed * 10 + 6)
    vips("bandjoin", "%s %s %s" % (P("r.v"), P("g.v"), P("b.v")), P("rgb0.v"))
    vips("linear", P("rgb0.v"), P("rgb.v"), 2.2, " -150")
    vips("linear", P("w.v"), P("wl.v"), 0.8, 0)
    vips("linear", P("d.v"), P("dl.v"), 40, 0)
    vips("add", P("wl.v"), P("dl.v"), P("t1.v"))
    vips("add", P("t1.v"), P("n.v"), P("t2.v"))
    vips("add", P("rgb.v"), P("t2.v"), P("sum.v"))
    vips("cast", P("sum.v"), P("c.v"), "uchar")
    m = min(w, h) // 12
    vips("draw_rect", P("c.v"), "220 24 24", 0, 0, m, m, "--fill")
    vips("draw_rect", P("c.v"), "24 48 220", w - m, h - m, m, m, "--fill")
    vips("copy", P("c.v"), out, "--interpretation", "srgb")
    shutil.rmtree(d)


# (name suffix, displayed orientation, encode options)
VARIANTS = [
    ("", "landscape", dict()),
    ("-irot", "portrait", dict(irot=3, exif_orientation=6, exif_only_tag=True)),
    ("-exif6", "portrait", dict(exif_orientation=6)),
    ("-clap", "landscape", dict(clap=True)),
    ("-thumb", "landscape", dict(thumb=320, exif_orientation=1)),
    ("-irot1", "portrait", dict(irot=1)),
    ("", "landscape", dict(exif_orientation=1)),
    ("-irot", "portrait", dict(irot=3, exif_orientation=6, exif_only_tag=True, thumb=320)),
]


def iphone(a):
    os.makedirs(a.out, exist_ok=True)
    work = tempfile.mkdtemp(prefix="make-heic.", dir=a.out)
    try:
        for n in range(1, a.count + 1):
            suffix, orient, opts = VARIANTS[(n - 1) % len(VARIANTS)]
            name = os.path.join(a.out, "IMG_%04d%s.HEIC" % (n, suffix))
            if os.path.exists(name) and not a.force:
                continue
            W, H = (4032, 3024) if orient == "landscape" else (3024, 4032)
            clap = opts.get("clap")
            margin = (40, 28, 56, 20)
            if clap:
                # coded 4032x3024 with a margin; displayed 4032-96 x 3024-48
                W, H = W - margin[0] - margin[2], H - margin[1] - margin[3]
            base = os.path.join(work, "disp.v")
            photo_base(n, W, H, base, work)
            e = argparse.Namespace(input=base, out=name + ".tmp", codec="hevc", tile=512,
                                   irot=opts.get("irot"), imir=None,
                                   clap=(W, H) if clap else None, clap_margin=margin,
                                   exif_orientation=opts.get("exif_orientation"),
                                   exif_only_tag=opts.get("exif_only_tag", False),
                                   thumb=opts.get("thumb"), crf=a.crf, preset=a.preset,
                                   threads=a.threads, make="Apple", model="iPhone 13")
            _encode(e, work)
            os.replace(name + ".tmp", name)
            os.remove(base)
            print("make-heic: %s (%d bytes)" % (name, os.path.getsize(name)), file=sys.stderr)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    e = sub.add_parser("encode")
    e.add_argument("--in", dest="input", required=True)
    e.add_argument("--out", required=True)
    e.add_argument("--codec", choices=("hevc", "av1"), default="hevc")
    e.add_argument("--tile", type=int)
    e.add_argument("--irot", type=int, choices=(0, 1, 2, 3))
    e.add_argument("--imir", type=int, choices=(0, 1))
    e.add_argument("--clap", type=int, nargs=2, metavar=("W", "H"))
    e.add_argument("--clap-margin", type=int, nargs=4, default=(24, 16, 40, 32))
    e.add_argument("--exif-orientation", type=int, choices=range(1, 9))
    e.add_argument("--exif-only-tag", action="store_true")
    e.add_argument("--thumb", type=int)
    e.add_argument("--thumb-from", help="encode the thmb item from this picture instead")
    e.add_argument("--crf", type=int, default=28)
    e.add_argument("--preset", default="medium")
    e.add_argument("--threads", type=int, default=1)
    e.add_argument("--make", default="Apple")
    e.add_argument("--model", default="iPhone 7")
    i = sub.add_parser("iphone")
    i.add_argument("--out", required=True)
    i.add_argument("--count", type=int, default=16)
    i.add_argument("--crf", type=int, default=26)
    i.add_argument("--preset", default="medium")
    i.add_argument("--threads", type=int, default=1)
    i.add_argument("--force", action="store_true")
    a = ap.parse_args()
    if a.cmd == "encode":
        if a.irot == 0:
            a.irot = None
        encode(a)
    else:
        iphone(a)


if __name__ == "__main__":
    main()
