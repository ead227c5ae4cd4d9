#!/usr/bin/env python3
"""Writes testdata/exports/apple-burst: an Apple Photos export of a burst (issue 34),
whose frames carry Apple's BurstUUID in their EXIF maker note. exiftool cannot write
Apple maker note tags, so the EXIF is built here byte by byte, after the layout
exiftool's Image::ExifTool::Apple reads (Apple.pm, MakerNoteApple): the maker note is
"Apple iOS\\0", a 2-byte version (0x0001), the byte order "MM", then an IFD whose
value offsets count from the maker note's first byte. Tags written: 0x0001
MakerNoteVersion (int32s, 14, as iOS 15 writes) and 0x000B BurstUUID (a string, an
upper-case UUID). The pictures are 64x48 JPEGs of one colour each made by vips,
stripped, then given this EXIF as their APP1 segment. Run by hand:
python3 testdata/make-apple-burst.py (it deletes and rebuilds the folder); check with
exiftool -a -G1 -Apple:all -ExifIFD:all <file>."""
import os, shutil, struct, subprocess

here = os.path.dirname(os.path.abspath(__file__))
out = os.path.join(here, "exports", "apple-burst")
shutil.rmtree(out, ignore_errors=True)
os.makedirs(out)

ASCII, SHORT, LONG, UNDEFINED, SLONG = 2, 3, 4, 7, 9

def ifd(entries, base):
    """A big-endian IFD at offset `base` (of the TIFF or maker note it is in) with its
    out-of-line values after it: entries are (tag, type, count, bytes)."""
    head = struct.pack(">H", len(entries))
    data_start = base + 2 + 12 * len(entries) + 4
    body, data = b"", b""
    for tag, kind, count, value in sorted(entries):
        if len(value) <= 4:
            body += struct.pack(">HHI", tag, kind, count) + value.ljust(4, b"\0")
        else:
            body += struct.pack(">HHII", tag, kind, count, data_start + len(data))
            data += value + (b"\0" if len(value) % 2 else b"")
    return head + body + struct.pack(">I", 0) + data

def text(s):
    b = s.encode() + b"\0"
    return (ASCII, len(b), b)

def apple_maker_note(burst_uuid):
    header = b"Apple iOS\0" + b"\x00\x01" + b"MM"
    entries = [(0x0001, SLONG, 1, struct.pack(">i", 14))]
    if burst_uuid:
        entries.append((0x000B,) + text(burst_uuid))
    return header + ifd(entries, len(header))

def exif(when, subsec, burst_uuid):
    note = apple_maker_note(burst_uuid)
    # IFD0 at 8: Make, Model, ExifIFD pointer; the Exif IFD after it.
    ifd0_entries = [(0x010F,) + text("Apple"), (0x0110,) + text("iPhone 12"), (0x8769, LONG, 1, b"\0\0\0\0")]
    ifd0 = ifd(ifd0_entries, 8)
    exif_offset = 8 + len(ifd0)
    ifd0 = ifd([e if e[0] != 0x8769 else (0x8769, LONG, 1, struct.pack(">I", exif_offset)) for e in ifd0_entries], 8)
    exif_entries = [(0x9003,) + text(when), (0x9004,) + text(when), (0x9011,) + text("+02:00"), (0x9291,) + text(subsec),
                    (0x927C, UNDEFINED, len(note), note)]
    tiff = b"MM\0\x2a" + struct.pack(">I", 8) + ifd0 + ifd(exif_entries, exif_offset)
    payload = b"Exif\0\0" + tiff
    return b"\xff\xe1" + struct.pack(">H", len(payload) + 2) + payload

def photo(name, colour, when, subsec, burst_uuid):
    path = os.path.join(out, name)
    r, g, b = colour
    subprocess.run(["vips", "black", "/tmp/make-apple-burst.v", "64", "48", "--bands", "3"], check=True)
    subprocess.run(["vips", "linear", "/tmp/make-apple-burst.v", path + "[Q=80,strip]", "1 1 1", f"{r} {g} {b}", "--uchar"], check=True)
    with open(path, "rb") as f:
        jpeg = f.read()
    assert jpeg[:2] == b"\xff\xd8"
    with open(path, "wb") as f:
        f.write(jpeg[:2] + exif(when, subsec, burst_uuid) + jpeg[2:])

# One burst of four frames, a tenth of a second apart, as an iPhone names them.
BURST = "6E3F0D4A-1C2B-4E5F-9A8B-7C6D5E4F3A2B"
for n in range(4):
    photo(f"IMG_010{n + 1}.JPG", (60 + 40 * n, 120, 160), "2024:06:02 09:15:42", f"{n}00", BURST)
# A photo taken after it, no burst's.
photo("IMG_0105.JPG", (200, 200, 60), "2024:06:02 09:16:10", "000", None)
# Two files named like a Samsung burst whose maker notes name two different bursts:
# the metadata decides, never the name alone (no group). Not a real export: the rule's case.
photo("20240602_091542_BURST001_COVER.jpg", (30, 30, 200), "2024:06:02 09:15:42", "000", "0B1A2C3D-4E5F-4A6B-8C7D-9E0F1A2B3C4D")
photo("20240602_091542_BURST002.jpg", (30, 200, 30), "2024:06:02 09:15:43", "000", "9F8E7D6C-5B4A-4392-8170-6F5E4D3C2B1A")
os.remove("/tmp/make-apple-burst.v")
