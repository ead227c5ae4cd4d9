#!/usr/bin/env python3
"""Writes location metadata the way phones and other writers do, for
fixtures exiftool and ffmpeg 5.1 cannot make directly. Python 3 standard
library only.

  privacy-edit.py android-xyz IN.mp4 OUT.mp4 ISO6709
      Adds `moov/udta/©xyz` (a QuickTime user-data string: 16-bit length,
      16-bit packed language code 0x15C7, then the ISO 6709 text, e.g.
      "+48.8584+002.2945/"), as Android's MediaMuxer writes the location of
      a recorded video into an MP4 whose brand stays isom/mp42. The `moov`
      must come after `mdat` (ffmpeg's default), so no chunk offset moves.

  privacy-edit.py ztxt-xmp IN.png OUT.png
      Inserts, before IDAT, a zTXt chunk with keyword XML:com.adobe.xmp whose
      zlib-compressed text is an XMP packet holding exif:GPSLatitude and
      exif:GPSLongitude: XMP that cannot be edited in place.
"""
import struct
import sys
import zlib


def boxes(data, start, end):
    i = start
    while i + 8 <= end:
        size, kind = struct.unpack(">I4s", data[i:i + 8])
        assert size >= 8 and i + size <= end
        yield i, size, kind
        i += size


def android_xyz(src, dst, iso6709):
    data = open(src, "rb").read()
    top = list(boxes(data, 0, len(data)))
    assert [k for _, _, k in top].index(b"moov") > [k for _, _, k in top].index(b"mdat"), "moov must follow mdat"
    text = iso6709.encode()
    xyz = struct.pack(">I4sHH", 12 + len(text), b"\xa9xyz", len(text), 0x15C7) + text
    udta = struct.pack(">I4s", 8 + len(xyz), b"udta") + xyz
    out = bytearray()
    for start, size, kind in top:
        box = data[start:start + size]
        if kind == b"moov":
            box = struct.pack(">I4s", size + len(udta), b"moov") + box[8:] + udta
        out += box
    open(dst, "wb").write(out)


def chunk(kind, payload):
    return struct.pack(">I", len(payload)) + kind + payload + struct.pack(">I", zlib.crc32(kind + payload) & 0xFFFFFFFF)


def ztxt_xmp(src, dst):
    data = open(src, "rb").read()
    xmp = (b'<?xpacket begin="" id="W5M0MpCehiHzreSzNTczkc9d"?><x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF '
           b'xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"><rdf:Description rdf:about="" '
           b'xmlns:exif="http://ns.adobe.com/exif/1.0/" exif:GPSLatitude="48,51.504N" exif:GPSLongitude="2,17.67E"/>'
           b'</rdf:RDF></x:xmpmeta><?xpacket end="w"?>')
    ztxt = chunk(b"zTXt", b"XML:com.adobe.xmp\x00\x00" + zlib.compress(xmp, 9))
    at = data.index(b"IDAT") - 4
    open(dst, "wb").write(data[:at] + ztxt + data[at:])


if __name__ == "__main__":
    command = sys.argv[1]
    if command == "android-xyz":
        android_xyz(sys.argv[2], sys.argv[3], sys.argv[4])
    elif command == "ztxt-xmp":
        ztxt_xmp(sys.argv[2], sys.argv[3])
    else:
        sys.exit("unknown command " + command)
