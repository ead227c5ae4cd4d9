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

  privacy-edit.py psd OUT.psd
      Writes a plain 16x16 grey Photoshop file (8-bit RGB, uncompressed, no
      image resources), for exiftool to write its EXIF, IPTC and XMP into
      (image resources 0x0422, 0x0404, 0x0424).

  privacy-edit.py tiff-photoshop IN.tiff FROM.psd OUT.tiff
      Adds to IN.tiff's IFD0 the Photoshop tag (34377, UNDEFINED) holding
      FROM.psd's image resources section, as Photoshop writes a TIFF: IFD0 is
      rewritten at the end of the file with the new entry in its place in
      tag order, the data after it, and the header pointed at it (the old
      IFD0 stays, unused; every other offset is unchanged).
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


def psd(dst):
    width = height = 16
    header = b"8BPS" + struct.pack(">H6xHIIHH", 1, 3, height, width, 8, 3)
    # Colour mode data, image resources, layers and masks: empty; raw planes.
    sections = struct.pack(">III", 0, 0, 0) + struct.pack(">H", 0)
    open(dst, "wb").write(header + sections + bytes([128]) * (width * height * 3))


def psd_resources(path):
    data = open(path, "rb").read()
    assert data[:4] == b"8BPS"
    at = 26
    at += 4 + struct.unpack(">I", data[at:at + 4])[0]
    size = struct.unpack(">I", data[at:at + 4])[0]
    return data[at + 4:at + 4 + size]


def tiff_photoshop(src, psd_path, dst):
    data = bytearray(open(src, "rb").read())
    e = "<" if data[:2] == b"II" else ">"
    ifd0 = struct.unpack(e + "I", data[4:8])[0]
    count = struct.unpack(e + "H", data[ifd0:ifd0 + 2])[0]
    entries = [bytes(data[ifd0 + 2 + 12 * i:ifd0 + 14 + 12 * i]) for i in range(count)]
    following = bytes(data[ifd0 + 2 + 12 * count:ifd0 + 6 + 12 * count])
    resources = psd_resources(psd_path)
    if len(data) % 2:
        data += b"\0"
    value = len(data)
    data += resources + (b"\0" if len(resources) % 2 else b"")
    entries.append(struct.pack(e + "HHII", 34377, 7, len(resources), value))
    entries.sort(key=lambda entry: struct.unpack(e + "H", entry[:2])[0])
    at = len(data)
    data += struct.pack(e + "H", len(entries)) + b"".join(entries) + following
    data[4:8] = struct.pack(e + "I", at)
    open(dst, "wb").write(data)


if __name__ == "__main__":
    command = sys.argv[1]
    if command == "android-xyz":
        android_xyz(sys.argv[2], sys.argv[3], sys.argv[4])
    elif command == "ztxt-xmp":
        ztxt_xmp(sys.argv[2], sys.argv[3])
    elif command == "psd":
        psd(sys.argv[2])
    elif command == "tiff-photoshop":
        tiff_photoshop(sys.argv[2], sys.argv[3], sys.argv[4])
    else:
        sys.exit("unknown command " + command)
