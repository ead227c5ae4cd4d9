#!/usr/bin/env python3
"""Camera RAW fixtures for issue 23: real maker structures, real previews.

  make-raw.py OUT_DIR STUB_DIR

STUB_DIR holds ExifTool's RAW test files (t/images of exiftool 13.58: real
files from the cameras, their pixel data and previews cut down to stubs by
ExifTool's author). Each stub keeps its maker's real structure (IFDs, SubIFDs,
maker notes, the RAF header), so a preview is grafted into it: a JPEG is
appended to the file and the stub's own preview tags are pointed at it (the
offsets and lengths are rewritten in place; nothing else moves). The previews
are test pictures (ffmpeg testsrc2) with the fixtures' orientation markers
(red square top-left, blue bottom-right) *as displayed*: a preview of a RAW
whose orientation turns it is stored turned the other way, so only a reader
that applies the RAW's orientation shows it upright.

Sony ARW and Olympus ORF have no ExifTool stub here; they are written from
scratch in their cameras' layout (ARW: IFD0 with the preview as
JPEGInterchangeFormat, SubIFD raw, SR2Private; ORF: `IIRO`, raw IFD0, the
large preview in the Olympus maker note's CameraSettings, 0x101/0x102).

Needs ffmpeg and exiftool on PATH; Python 3 standard library otherwise.
"""
import os
import struct
import subprocess
import sys
import tempfile

WORK = tempfile.mkdtemp(prefix="make-raw-")


def run(*args):
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def picture(width, height, turn=1):
    """A JPEG preview; `turn` is the orientation (EXIF 1, 3, 6, 8) it will be
    displayed with, so it is stored turned back."""
    w, h = (height, width) if turn in (6, 8) else (width, height)
    mark = max(8, min(w, h) // 12)
    # A grey picture (testsrc2 without its colours), so the markers are the only red and blue.
    chain = ("testsrc2=size=%dx%d:rate=1,hue=s=0,drawbox=x=0:y=0:w=%d:h=%d:color=0xDC1818:t=fill,"
             "drawbox=x=iw-%d:y=ih-%d:w=%d:h=%d:color=0x1828DC:t=fill" % (w, h, mark, mark, mark, mark, mark, mark))
    # Turned back: EXIF 6 displays the stored picture turned 90° clockwise, so it
    # is stored turned 90° anticlockwise (transpose=2); 8 the other way; 3 upside down.
    back = {1: "null", 3: "hflip,vflip", 6: "transpose=2", 8: "transpose=1"}[turn]
    out = os.path.join(WORK, "p%dx%d-%d.jpg" % (width, height, turn))
    run("ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", chain, "-vf", back + ",format=yuvj420p", "-frames:v", "1",
        "-q:v", "4", "-fflags", "+bitexact", "-flags", "+bitexact", out)
    return open(out, "rb").read()


class TIFF:
    """Just enough of a TIFF reader to rewrite values in place."""

    def __init__(self, data, base=0):
        self.data, self.base = bytearray(data), base
        self.le = self.data[base:base + 2] == b"II"
        self.e = "<" if self.le else ">"

    def u16(self, at): return struct.unpack(self.e + "H", self.data[at:at + 2])[0]
    def u32(self, at): return struct.unpack(self.e + "I", self.data[at:at + 4])[0]
    def set_u16(self, at, v): self.data[at:at + 2] = struct.pack(self.e + "H", v)
    def set_u32(self, at, v): self.data[at:at + 4] = struct.pack(self.e + "I", v)

    def entries(self, ifd):
        """(tag, type, count, entry position) of the IFD at structure offset `ifd`."""
        at = self.base + ifd
        return [(self.u16(at + 2 + i * 12), self.u16(at + 4 + i * 12), self.u32(at + 6 + i * 12), at + 2 + i * 12)
                for i in range(self.u16(at))]

    def next(self, ifd):
        at = self.base + ifd
        return self.u32(at + 2 + self.u16(at) * 12)

    def entry(self, ifd, tag):
        return next((e for e in self.entries(ifd) if e[0] == tag), None)

    def value(self, ifd, tag):
        e = self.entry(ifd, tag)
        return None if e is None else (self.u16(e[3] + 8) if e[1] == 3 else self.u32(e[3] + 8))

    def set_value(self, ifd, tag, v):
        e = self.entry(ifd, tag)
        assert e is not None and e[2] == 1, "tag %#x" % tag
        (self.set_u16 if e[1] == 3 else self.set_u32)(e[3] + 8, v)

    def append(self, blob):
        while len(self.data) % 4:
            self.data.append(0)
        at = len(self.data)
        self.data += blob
        return at - self.base


def graft_nef(stub, out):
    # NIKON D70: IFD0 a 160x106 RGB stub, SubIFD0 the JpgFromRaw (29-byte stub),
    # SubIFD1 the raw 3040x2014. The preview becomes a 1520x1007 JPEG, the photo portrait (EXIF 6).
    t = TIFF(open(stub, "rb").read())
    ifd0 = t.u32(4)
    sub0 = t.u32(t.entry(ifd0, 0x014A)[3] + 8) if t.entry(ifd0, 0x014A)[2] == 1 else t.u32(t.u32(t.entry(ifd0, 0x014A)[3] + 8))
    jpeg = picture(1520, 1007, turn=6)
    t.set_value(sub0, 0x0201, t.append(jpeg))
    t.set_value(sub0, 0x0202, len(jpeg))
    t.set_value(ifd0, 0x0112, 6)
    open(out, "wb").write(t.data)


def graft_dng(stub, out):
    # Canon EOS 350D as DNG: IFD0 an 8x8 RGB thumbnail, SubIFD1 the 1024x683
    # preview and SubIFD2 a full-size JpgFromRaw (both stubs). Only the 1024 px
    # preview gets pixels: the thumbnail must come from it, not from IFD0.
    t = TIFF(open(stub, "rb").read())
    ifd0 = t.u32(4)
    subs = t.entry(ifd0, 0x014A)
    offsets = [t.u32(t.u32(subs[3] + 8) + 4 * i) for i in range(subs[2])]
    jpeg = picture(1024, 683)
    preview = offsets[1]
    at = t.append(jpeg)
    if t.entry(preview, 0x0201):
        t.set_value(preview, 0x0201, at)
        t.set_value(preview, 0x0202, len(jpeg))
    else:
        t.set_value(preview, 0x0111, at)
        t.set_value(preview, 0x0117, len(jpeg))
    open(out, "wb").write(t.data)


def graft_cr2(stub, out):
    # Canon EOS 350D: IFD0 is the large JPEG preview (one strip, 26-byte stub), IFD1
    # a 160x120 thumbnail stub, IFD3 the raw. Upside down (EXIF 3).
    t = TIFF(open(stub, "rb").read())
    ifd0 = t.u32(4)
    jpeg = picture(1728, 1152, turn=3)
    t.set_value(ifd0, 0x0111, t.append(jpeg))
    t.set_value(ifd0, 0x0117, len(jpeg))
    t.set_value(ifd0, 0x0112, 3)
    open(out, "wb").write(t.data)


def graft_rw2(stub, out):
    # Panasonic DMC-LX3: IFD0 tag 0x2E holds a whole JPEG with its own EXIF (an 8x8
    # stub); it is replaced by a real one carrying the stub's EXIF.
    t = TIFF(open(stub, "rb").read())
    ifd0 = t.u32(4)
    e = t.entry(ifd0, 0x002E)
    old = bytes(t.data[t.base + t.u32(e[3] + 8):t.base + t.u32(e[3] + 8) + e[2]])
    jpeg = with_exif_of(old, picture(1920, 1440))
    at = t.append(jpeg)
    t.set_u32(e[3] + 4, len(jpeg))
    t.set_u32(e[3] + 8, at)
    open(out, "wb").write(t.data)


def with_exif_of(source_jpeg, jpeg, orientation=None):
    """`jpeg` with the EXIF of `source_jpeg` (ExifTool copies it), and an orientation."""
    src, dst = os.path.join(WORK, "src.jpg"), os.path.join(WORK, "dst.jpg")
    open(src, "wb").write(source_jpeg)
    open(dst, "wb").write(jpeg)
    run("exiftool", "-q", "-overwrite_original", "-TagsFromFile", src, "-exif:all", "-ThumbnailImage=", dst)
    if orientation:
        run("exiftool", "-q", "-overwrite_original", "-n", "-IFD0:Orientation=%d" % orientation, dst)
    return open(dst, "rb").read()


def graft_raf(stub, out):
    # FinePix S5Pro: the header's JPEG (offset 84) is an 8x8 stub with EXIF and a
    # 160x120 EXIF thumbnail; it becomes a 1440x960 JPEG with that EXIF, turned
    # (EXIF 8), in the stub's place: what follows moves, and the header's CFA
    # offsets (92, 100) move with it.
    data = bytearray(open(stub, "rb").read())
    offset, length = struct.unpack(">II", data[84:92])
    jpeg = with_exif_of(bytes(data[offset:offset + length]), picture(1440, 960, turn=8), orientation=8)
    padded = jpeg + bytes((-len(jpeg)) % 16)
    delta = len(padded) - length
    cfa_header, cfa_header_length, cfa, cfa_length = struct.unpack(">IIII", data[92:108])
    data[offset:offset + length] = padded
    data[84:108] = struct.pack(">IIIIII", offset, len(jpeg), cfa_header + delta, cfa_header_length, cfa + delta, cfa_length)
    open(out, "wb").write(data)


class Writer:
    """Writes little-endian TIFF structures: IFDs whose values are laid out after them."""

    def __init__(self, header):
        self.data = bytearray(header)

    def align(self):
        while len(self.data) % 2:
            self.data.append(0)

    def blob(self, data):
        self.align()
        at = len(self.data)
        self.data += data
        return at

    def ifd(self, entries, base=0, next_ifd=0):
        """entries: (tag, type, values or bytes). Returns the IFD's offset (relative to base)."""
        self.align()
        start = len(self.data)
        table = bytearray(struct.pack("<H", len(entries)))
        extra = bytearray()
        extra_at = start + 2 + 12 * len(entries) + 4
        for tag, kind, value in sorted(entries):
            if kind == 2:
                raw = value.encode() + b"\0"
            elif kind == 7:
                raw = bytes(value)
            else:
                fmt = {3: "<H", 4: "<I", 13: "<I"}[kind]
                raw = b"".join(struct.pack(fmt, v) for v in value)
            count = len(raw) if kind in (2, 7) else len(value)
            if len(raw) <= 4:
                field = raw.ljust(4, b"\0")
            else:
                field = struct.pack("<I", extra_at + len(extra) - base)
                extra += raw
                if len(extra) % 2:
                    extra.append(0)
            table += struct.pack("<HHI", tag, kind, count) + field
        table += struct.pack("<I", next_ifd)
        self.data += table + extra
        return start - base

    def patch(self, ifd, tag, value, base=0):
        """Sets the (one, inline) value of `tag` in the IFD at `ifd`, written before its value was known."""
        at = base + ifd
        for i in range(struct.unpack("<H", self.data[at:at + 2])[0]):
            entry = at + 2 + i * 12
            found, kind = struct.unpack("<HH", self.data[entry:entry + 4])
            if found == tag:
                self.data[entry + 8:entry + 12] = struct.pack("<H", value).ljust(4, b"\0") if kind == 3 else struct.pack("<I", value)
                return
        raise KeyError(tag)

    def patch_next(self, ifd, next_ifd, base=0):
        at = base + ifd
        count = struct.unpack("<H", self.data[at:at + 2])[0]
        self.data[at + 2 + count * 12:at + 6 + count * 12] = struct.pack("<I", next_ifd)


def write_arw(out):
    # Sony ILCE-7M3 layout: IFD0 at offset 8 (NewSubfileType 1, the 1616x1080
    # preview as JPEGInterchangeFormat, SubIFDs -> raw, ExifIFD, SR2Private),
    # IFD1 a 160x120 thumbnail, then the data. Offsets are patched in once known.
    preview, thumb = picture(1616, 1080), picture(160, 120)
    w = Writer(b"II*\0\x08\0\0\0")
    ifd0 = w.ifd([(0x00FE, 4, [1]), (0x0100, 4, [160]), (0x0101, 4, [120]), (0x0103, 3, [6]), (0x010F, 2, "SONY"),
                  (0x0110, 2, "ILCE-7M3"), (0x0112, 3, [1]), (0x014A, 4, [0]), (0x0201, 4, [0]),
                  (0x0202, 4, [len(preview)]), (0x8769, 4, [0]), (0xC634, 4, [0])])
    ifd1 = w.ifd([(0x00FE, 4, [1]), (0x0103, 3, [6]), (0x0201, 4, [0]), (0x0202, 4, [len(thumb)])])
    exif = w.ifd([(0xA002, 4, [6000]), (0xA003, 4, [4000])])
    raw_at = w.blob(bytes(64))
    raw_ifd = w.ifd([(0x00FE, 4, [0]), (0x0100, 4, [6048]), (0x0101, 4, [4024]), (0x0103, 3, [32767]),
                     (0x0106, 3, [32803]), (0x0111, 4, [raw_at]), (0x0117, 4, [64]), (0x0115, 3, [1])])
    w.patch_next(ifd0, ifd1)
    w.patch(ifd0, 0x014A, raw_ifd)
    w.patch(ifd0, 0x8769, exif)
    w.patch(ifd0, 0x0201, w.blob(preview))
    w.patch(ifd1, 0x0201, w.blob(thumb))
    open(out, "wb").write(w.data)


def olympus_note(preview):
    """An Olympus maker note ("OLYMPUS\\0II\\3\\0", offsets from its own start): its
    IFD (MakerNoteVersion, CameraSettings), the CameraSettings IFD
    (PreviewImageValid, PreviewImageStart, PreviewImageLength), then the preview
    itself, inside the note as Olympus cameras store it."""
    settings = 12 + 2 + 2 * 12 + 4
    start = settings + 2 + 3 * 12 + 4
    note = b"OLYMPUS\0II\x03\0"
    note += struct.pack("<H", 2) + struct.pack("<HHI", 0x0000, 7, 4) + b"0100" + struct.pack("<HHII", 0x2020, 13, 1, settings)
    note += struct.pack("<I", 0)
    note += struct.pack("<H", 3) + struct.pack("<HHII", 0x0100, 4, 1, 1) + struct.pack("<HHII", 0x0101, 4, 1, start)
    note += struct.pack("<HHII", 0x0102, 4, 1, len(preview)) + struct.pack("<I", 0)
    return note + preview


def write_orf(out):
    # Olympus E-M1 layout: "IIRO", IFD0 at offset 8 is the raw (CFA) with Make,
    # Orientation 6 and the ExifIFD, whose MakerNote holds CameraSettings and the
    # 3200x2400 preview; IFD1 a 160x120 thumbnail.
    preview, thumb = picture(3200, 2400, turn=6), picture(160, 120, turn=6)
    w = Writer(b"IIRO\x08\0\0\0")
    ifd0 = w.ifd([(0x00FE, 4, [0]), (0x0100, 4, [4640]), (0x0101, 4, [3472]), (0x0103, 3, [1]), (0x0106, 3, [32803]),
                  (0x010F, 2, "OLYMPUS CORPORATION"), (0x0110, 2, "E-M1"), (0x0112, 3, [6]), (0x0111, 4, [0]),
                  (0x0117, 4, [64]), (0x8769, 4, [0])])
    ifd1 = w.ifd([(0x0103, 3, [6]), (0x0201, 4, [0]), (0x0202, 4, [len(thumb)])])
    exif = w.ifd([(0xA002, 4, [4608]), (0xA003, 4, [3456]), (0x927C, 7, olympus_note(preview))])
    w.patch_next(ifd0, ifd1)
    w.patch(ifd0, 0x8769, exif)
    w.patch(ifd0, 0x0111, w.blob(bytes(64)))
    w.patch(ifd1, 0x0201, w.blob(thumb))
    open(out, "wb").write(w.data)


def main():
    out, stubs = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    graft_nef(os.path.join(stubs, "exiftool-Nikon.nef"), os.path.join(out, "nikon-d70-exif6.nef"))
    graft_dng(os.path.join(stubs, "exiftool-DNG.dng"), os.path.join(out, "canon-350d-preview1024.dng"))
    graft_cr2(os.path.join(stubs, "exiftool-CanonRaw.cr2"), os.path.join(out, "canon-350d-exif3.cr2"))
    graft_rw2(os.path.join(stubs, "exiftool-Panasonic.rw2"), os.path.join(out, "panasonic-lx3.rw2"))
    graft_raf(os.path.join(stubs, "exiftool-FujiFilm.raf"), os.path.join(out, "fujifilm-s5pro-exif8.raf"))
    write_arw(os.path.join(out, "sony-a7m3.arw"))
    write_orf(os.path.join(out, "olympus-em1-exif6.orf"))


if __name__ == "__main__":
    main()
