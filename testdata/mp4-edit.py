#!/usr/bin/env python3
"""Edits ISO base media files (MP4) the way other muxers write them, for
fixtures ffmpeg 5.1 cannot make directly. The box tree is parsed, changed and
written back with every size recomputed; `mdat` is left where it is and must
come before `moov` (ffmpeg's default without +faststart), so no chunk offset
moves.

  mp4-edit.py dolby-vision IN OUT --profile P --compatibility C [--entry FOURCC]
      Adds a Dolby Vision configuration record to the first video sample entry
      (`dvcC` for profiles up to 7, `dvvC` for 8 to 10; 24 bytes, ETSI TS 103
      572 / "Dolby Vision streams within the ISO base media file format" v2.4:
      version 1.0, profile, level 6, RPU present, base layer present,
      dv_bl_signal_compatibility_id C) and optionally renames the entry
      (`dvh1` for profile 5 HEVC, `dav1` for profile 10 AV1), as Dolby's
      muxers and iPhones do (an iPhone's profile 8.4 keeps `hvc1`).

  mp4-edit.py live-fragmented IN OUT [--mehd TICKS]
      A fragmented MP4 (ffmpeg -movflags frag_keyframe+empty_moov) as a live
      encoder leaves it: no `mehd` in `mvex`, and `mvhd`'s duration all ones
      (0xFFFFFFFF, "unknown") in a movie timescale of 30000, and its tracks'
      `tkhd` and `mdhd` durations all ones too, so only the
      fragments tell how long it is. With --mehd, a `mehd` stating the
      fragments' duration in the movie timescale is written (what a recorder
      that finishes its file does), the other durations still unknown.

Python 3 standard library only.
"""
import struct
import sys

CONTAINERS = {b"moov", b"trak", b"mdia", b"minf", b"stbl", b"mvex", b"edts", b"udta", b"dinf"}
VIDEO_ENTRIES = {b"avc1", b"avc3", b"hvc1", b"hev1", b"av01", b"dvh1", b"dvhe", b"dav1", b"vp09", b"mp4v"}


class Box:
    def __init__(self, kind, payload=b"", children=None, head=b""):
        self.kind, self.payload, self.children, self.head = kind, payload, children, head

    def bytes(self):
        body = self.head + (b"".join(c.bytes() for c in self.children) if self.children is not None else self.payload)
        return struct.pack(">I4s", 8 + len(body), self.kind) + body


def parse(data, start=0, end=None):
    end = len(data) if end is None else end
    boxes, i = [], start
    while i + 8 <= end:
        size, kind = struct.unpack(">I4s", data[i:i + 8])
        if size == 0:
            size = end - i
        assert size >= 8 and i + size <= end, "unsupported box at %d" % i
        body = data[i + 8:i + size]
        if kind in CONTAINERS:
            boxes.append(Box(kind, children=parse(data, i + 8, i + size)))
        elif kind == b"stsd":
            # Full box header and entry count, then sample entries.
            boxes.append(Box(kind, head=body[:8], children=parse(data, i + 16, i + size)))
        elif kind in VIDEO_ENTRIES:
            # The 78-byte visual sample entry, then its own boxes.
            boxes.append(Box(kind, head=body[:78], children=parse(data, i + 8 + 78, i + size)))
        else:
            boxes.append(Box(kind, payload=body))
        i += size
    return boxes


def walk(boxes):
    for b in boxes:
        yield b
        if b.children is not None:
            yield from walk(b.children)


def dolby_vision(boxes, profile, compatibility, entry):
    sample_entry = next(b for b in walk(boxes) if b.kind in VIDEO_ENTRIES)
    level, rpu, el, bl = 6, 1, 0, 1
    bits = (profile << 9) | (level << 3) | (rpu << 2) | (el << 1) | bl
    record = struct.pack(">BBH", 1, 0, bits) + bytes([compatibility << 4]) + bytes(19)
    sample_entry.children.append(Box(b"dvcC" if profile <= 7 else b"dvvC", payload=record))
    if entry:
        sample_entry.kind = entry.encode()


def live_fragmented(boxes, mehd=None):
    moov = next(b for b in boxes if b.kind == b"moov")
    mvex = next(b for b in moov.children if b.kind == b"mvex")
    mvex.children = [c for c in mvex.children if c.kind != b"mehd"]
    if mehd is not None:
        mvex.children.insert(0, Box(b"mehd", payload=struct.pack(">II", 0, mehd)))
    mvhd = next(b for b in moov.children if b.kind == b"mvhd")
    version = mvhd.payload[0]
    assert version == 0, "mvhd version 1"
    # version/flags, creation, modification, timescale, then the 32-bit duration:
    # a movie timescale of 30000, as cameras and Android's muxer write it.
    mvhd.payload = mvhd.payload[:12] + struct.pack(">I", 30000) + b"\xff\xff\xff\xff" + mvhd.payload[20:]
    assert not any(b.kind == b"elst" for b in walk(boxes)), "edit lists count in the movie timescale"
    # The tracks' durations too (tkhd: after version/flags, times and track ID
    # and a reserved word; mdhd: after its timescale).
    for b in walk(boxes):
        if b.kind == b"tkhd" and b.payload[0] == 0:
            b.payload = b.payload[:20] + b"\xff\xff\xff\xff" + b.payload[24:]
        if b.kind == b"mdhd" and b.payload[0] == 0:
            b.payload = b.payload[:16] + b"\xff\xff\xff\xff" + b.payload[20:]


def main():
    mode, source, target = sys.argv[1], sys.argv[2], sys.argv[3]
    data = open(source, "rb").read()
    boxes = parse(data)
    kinds = [b.kind for b in boxes]
    if mode == "dolby-vision":
        assert kinds.index(b"mdat") < kinds.index(b"moov"), "moov must come after mdat"
        a = sys.argv
        entry = a[a.index("--entry") + 1] if "--entry" in a else None
        dolby_vision(boxes, int(a[a.index("--profile") + 1]), int(a[a.index("--compatibility") + 1]), entry)
    elif mode == "live-fragmented":
        a = sys.argv
        live_fragmented(boxes, int(a[a.index("--mehd") + 1]) if "--mehd" in a else None)
    else:
        sys.exit("unknown mode " + mode)
    out = b"".join(b.bytes() for b in boxes)
    if mode == "live-fragmented" and len(out) != len(data):
        # moov precedes the fragments, which move: their data offsets must be
        # relative to their moof (-movflags +default_base_moof), not absolute.
        assert b"tfhd" not in data or all(
            not (struct.unpack(">I", data[i + 4:i + 8])[0] & 1) for i in _find(data, b"tfhd")), "absolute base data offsets"
    open(target, "wb").write(out)


def _find(data, kind):
    i = data.find(kind)
    while i >= 0:
        yield i
        i = data.find(kind, i + 1)


if __name__ == "__main__":
    main()
