#!/usr/bin/env python3
"""Panoramas, stereo pairs and HDR gain maps, made the way cameras and phones
lay them out (issue 33 item 5), into testdata/spatial/:

- pano-360.jpg: a 2048x1024 equirectangular 360° photo, eight colour columns
  of 256 px (45° each), the top and bottom thirds at half brightness; GPano XMP
  written by exiftool (ProjectionType equirectangular, full 2048x1024, no crop).
- pano-cylindrical.jpg: a 1200x300 picture, the crop at (200, 50) of a
  1600x400 cylindrical panorama (GPano by exiftool).
- pano-stray-type.jpg: a 1600x1600 camera photo (Canon make and model) whose XMP
  has a stray `GPano:ProjectionType=equirectangular` and no sizes, as
  photoprism's `wrong.heic` test file (a 500x500 JPEG under that name; larger
  here, so that its "centre view" would not be smaller than a thumbnail and
  the rule below would not hide this one): no sphere.
- pano-not-2to1.jpg: a 2400x1600 picture whose GPano says equirectangular with
  FullPano and cropped sizes of 2400x1600 (all of it): not 2:1, no sphere.
- ultrahdr-gradient.jpg, ultrahdr-exif6.jpg: Ultra HDR JPEGs whose gain map
  has a shape (see ultra_hdr_gradient), upright and with EXIF Orientation 6.
- pano-360-small.jpg: a 500x250 full sphere (the columns of pano-360.jpg), as
  photoprism's `panorama360.jpg`: its centre view (125x83) is smaller than a
  thumbnail, so its thumbnail is the whole picture.
- ultrahdr.jpg: an Ultra HDR JPEG: the primary's XMP has `hdrgm:Version` and a
  `Container:Directory` (Primary, GainMap), an MPF APP2 index lists both images,
  the gain map JPEG follows the primary with its own `hdrgm` XMP.
- ultrahdr-mpf-only.jpg: the same without the primary's XMP: only the MPF
  index leads to the gain map (its XMP says `hdrgm:Version`).
- apple-gainmap.heic: a HEIC whose primary has a hidden auxiliary image of type
  `urn:com:apple:photo:2020:aux:hdrgainmap` (`auxC`, `auxl` reference), as an
  iPhone writes its HDR gain map.
- spatial.heic: a stereo pair as Apple's spatial photos hold it: two HEVC
  images (left red, right blue), the left the primary, and a `grpl` box whose
  `ster` entity group lists left then right.
- spatial-right-primary.heic: the same pair with the right eye as the primary
  image (the left is still the `ster` group's first): its thumbnail is the left.
- spatial.mov: an HEVC movie whose `hvc1` sample entry has a `vexu` box (with
  `eyes`/`stri`: left and right), Apple's spatial-video marker. Only the base
  (left) layer is encoded: no encoder here writes MV-HEVC's second layer.

  make-spatial.py OUT_DIR [FUNCTION...]   (e.g. odd_panoramas: only those files)

Uses bench/make-heic.py's ISOBMFF writer; needs ffmpeg (libx265), vips, exiftool.
"""
import importlib.util
import os
import struct
import subprocess
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("make_heic", os.path.join(here, "..", "bench", "make-heic.py"))
heic = importlib.util.module_from_spec(spec)
spec.loader.exec_module(heic)

COLUMNS = [(220, 40, 40), (230, 140, 30), (230, 220, 40), (40, 180, 60), (40, 80, 220), (140, 50, 200), (200, 200, 200), (30, 30, 30)]


def ppm(path, w, h, pixel):
    rows = bytearray()
    for y in range(h):
        rows += b"".join(bytes(pixel(x, y)) for x in range(w))
    with open(path, "wb") as f:
        f.write(b"P6\n%d %d\n255\n" % (w, h) + bytes(rows))


def jpeg(work, name, w, h, pixel):
    src = os.path.join(work, name + ".ppm")
    out = os.path.join(work, name + ".jpg")
    ppm(src, w, h, pixel)
    subprocess.run(["vips", "copy", src, out + "[Q=92,strip]"], check=True)
    return out


def exiftool(path, *tags):
    subprocess.run(["exiftool", "-q", "-overwrite_original"] + list(tags) + [path], check=True)


def panoramas(out, work):
    def pano(x, y):
        r, g, b = COLUMNS[x // 256]
        dim = 1 if 1024 // 3 <= y < 2 * 1024 // 3 else 2
        return (r // dim, g // dim, b // dim)
    path = jpeg(work, "pano-360", 2048, 1024, pano)
    exiftool(path, "-XMP-GPano:UsePanoramaViewer=True", "-XMP-GPano:ProjectionType=equirectangular",
             "-XMP-GPano:FullPanoWidthPixels=2048", "-XMP-GPano:FullPanoHeightPixels=1024",
             "-XMP-GPano:CroppedAreaLeftPixels=0", "-XMP-GPano:CroppedAreaTopPixels=0",
             "-XMP-GPano:CroppedAreaImageWidthPixels=2048", "-XMP-GPano:CroppedAreaImageHeightPixels=1024")
    os.replace(path, os.path.join(out, "pano-360.jpg"))
    path = jpeg(work, "pano-cylindrical", 1200, 300, lambda x, y: COLUMNS[x * 8 // 1200])
    exiftool(path, "-XMP-GPano:ProjectionType=cylindrical", "-XMP-GPano:FullPanoWidthPixels=1600",
             "-XMP-GPano:FullPanoHeightPixels=400", "-XMP-GPano:CroppedAreaLeftPixels=200", "-XMP-GPano:CroppedAreaTopPixels=50",
             "-XMP-GPano:CroppedAreaImageWidthPixels=1200", "-XMP-GPano:CroppedAreaImageHeightPixels=300")
    os.replace(path, os.path.join(out, "pano-cylindrical.jpg"))


def odd_panoramas(out, work):
    """Pictures whose GPano says equirectangular but that are no sphere, and a sphere too small for its centre view."""
    path = jpeg(work, "pano-stray-type", 1600, 1600, lambda x, y: COLUMNS[x * 8 // 1600])
    exiftool(path, "-EXIF:Make=Canon", "-EXIF:Model=Canon EOS 6D", "-XMP-GPano:ProjectionType=equirectangular")
    os.replace(path, os.path.join(out, "pano-stray-type.jpg"))
    path = jpeg(work, "pano-not-2to1", 2400, 1600, lambda x, y: COLUMNS[x * 8 // 2400])
    exiftool(path, "-XMP-GPano:ProjectionType=equirectangular", "-XMP-GPano:FullPanoWidthPixels=2400",
             "-XMP-GPano:FullPanoHeightPixels=1600", "-XMP-GPano:CroppedAreaLeftPixels=0", "-XMP-GPano:CroppedAreaTopPixels=0",
             "-XMP-GPano:CroppedAreaImageWidthPixels=2400", "-XMP-GPano:CroppedAreaImageHeightPixels=1600")
    os.replace(path, os.path.join(out, "pano-not-2to1.jpg"))
    path = jpeg(work, "pano-360-small", 500, 250, lambda x, y: COLUMNS[x * 8 // 500])
    exiftool(path, "-XMP-GPano:UsePanoramaViewer=True", "-XMP-GPano:ProjectionType=equirectangular",
             "-XMP-GPano:FullPanoWidthPixels=500", "-XMP-GPano:FullPanoHeightPixels=250",
             "-XMP-GPano:CroppedAreaLeftPixels=0", "-XMP-GPano:CroppedAreaTopPixels=0",
             "-XMP-GPano:CroppedAreaImageWidthPixels=500", "-XMP-GPano:CroppedAreaImageHeightPixels=250")
    os.replace(path, os.path.join(out, "pano-360-small.jpg"))


def segment(marker, payload):
    return bytes([0xFF, marker]) + struct.pack(">H", len(payload) + 2) + payload


XMP_HEADER = b"http://ns.adobe.com/xap/1.0/\0"


def xmp(description):
    return XMP_HEADER + (
        '<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">'
        '<rdf:Description rdf:about="" %s</rdf:Description></rdf:RDF></x:xmpmeta>' % description).encode()


def mpf(primary_size, gain_size, gain_offset):
    """An MPF APP2 payload (big-endian): version, two images, their entries."""
    entries = struct.pack(">IIIHH", 0x030000, primary_size, 0, 0, 0) + struct.pack(">IIIHH", 0, gain_size, gain_offset, 0, 0)
    ifd = struct.pack(">H", 3)
    ifd += struct.pack(">HHI", 0xB000, 7, 4) + b"0100"
    ifd += struct.pack(">HHII", 0xB001, 4, 1, 2)
    ifd += struct.pack(">HHII", 0xB002, 7, len(entries), 8 + 2 + 3 * 12 + 4)
    ifd += struct.pack(">I", 0)
    return b"MPF\0" + b"MM\0\x2a" + struct.pack(">I", 8) + ifd + entries


def ultra_hdr(out, work, primary_xmp):
    base = open(jpeg(work, "base", 320, 240, lambda x, y: (x * 255 // 320, y * 255 // 240, 128)), "rb").read()
    gain = open(jpeg(work, "gain", 160, 120, lambda x, y: (128, 128, 128)), "rb").read()
    gain = gain[:2] + segment(0xE1, xmp(
        'xmlns:hdrgm="http://ns.adobe.com/hdr-gain-map/1.0/" hdrgm:Version="1.0" hdrgm:GainMapMin="0" hdrgm:GainMapMax="2.3" '
        'hdrgm:Gamma="1" hdrgm:OffsetSDR="0.015625" hdrgm:OffsetHDR="0.015625" hdrgm:HDRCapacityMin="0" hdrgm:HDRCapacityMax="2.3" '
        'hdrgm:BaseRenditionIsHDR="False">')) + gain[2:]
    head = b""
    if primary_xmp:
        head = segment(0xE1, xmp(
            'xmlns:Container="http://ns.google.com/photos/1.0/container/" xmlns:Item="http://ns.google.com/photos/1.0/container/item/" '
            'xmlns:hdrgm="http://ns.adobe.com/hdr-gain-map/1.0/" hdrgm:Version="1.0"><Container:Directory><rdf:Seq>'
            '<rdf:li rdf:parseType="Resource"><Container:Item Item:Semantic="Primary" Item:Mime="image/jpeg"/></rdf:li>'
            '<rdf:li rdf:parseType="Resource"><Container:Item Item:Semantic="GainMap" Item:Mime="image/jpeg" Item:Length="%010d"/></rdf:li>'
            '</rdf:Seq></Container:Directory>' % len(gain)))
    mpf_at = 2 + len(head) + 4 + 4   # the MPF TIFF header: after SOI, the XMP, APP2's marker and length, "MPF\0"
    size = len(base) + len(head) + len(segment(0xE2, mpf(0, 0, 0)))
    primary = base[:2] + head + segment(0xE2, mpf(size, len(gain), size - mpf_at)) + base[2:]
    assert len(primary) == size
    name = "ultrahdr.jpg" if primary_xmp else "ultrahdr-mpf-only.jpg"
    open(os.path.join(out, name), "wb").write(primary + gain)


def chart(x, y):
    """The 640x480 colour chart of the gain-map fixtures (Ultra HDR JPEG, HEIC, AVIF): 8x6 patches."""
    i = (y * 6 // 480) * 8 + x * 8 // 640
    return ((i * 37) % 200 + 30, (i * 91) % 200 + 30, (i * 53) % 200 + 30)


def chart_picture():
    """The whole 640x480 chart as RGB24 bytes."""
    return b"".join(bytes(chart(x, y)) for y in range(480) for x in range(640))


def gain_shape(x, y):
    """Their 320x240 gain map: 255 in its top-left quarter, 0 in its bottom-right, a left-to-right ramp elsewhere."""
    if x < 160 and y < 120:
        return 255
    if x >= 160 and y >= 120:
        return 0
    return x * 255 // 319


def ultra_hdr_gradient(out, work):
    """Ultra HDR JPEGs whose gain map has a shape (issue 54: a thumbnail's gain
    map is checked against the source's, and a flipped or dropped one fails):
    a 640x480 base (a colour chart of 8x6 patches), a 320x240 gain map that is
    bright (255) in its top-left quarter, 0 in its bottom-right quarter, and a
    left-to-right ramp elsewhere; hdrgm: GainMapMin 0, GainMapMax 2 (4x), gamma 1,
    offsets 1/64, capacity 0..2. ultrahdr-exif6.jpg is the same with EXIF
    Orientation 6 on the primary (the gain map is stored as the primary is, and
    is turned with it)."""
    def gain(x, y):
        v = gain_shape(x, y)
        return (v, v, v)
    base = open(jpeg(work, "chart", 640, 480, chart), "rb").read()
    src = os.path.join(work, "gain.ppm")
    ppm(src, 320, 240, gain)
    grey = os.path.join(work, "gain-grey.jpg")
    subprocess.run(["vips", "colourspace", src, grey + "[Q=95,strip]", "b-w"], check=True)
    gain_jpeg = open(grey, "rb").read()
    gain_jpeg = gain_jpeg[:2] + segment(0xE1, xmp(
        'xmlns:hdrgm="http://ns.adobe.com/hdr-gain-map/1.0/" hdrgm:Version="1.0" hdrgm:GainMapMin="0" hdrgm:GainMapMax="2" '
        'hdrgm:Gamma="1" hdrgm:OffsetSDR="0.015625" hdrgm:OffsetHDR="0.015625" hdrgm:HDRCapacityMin="0" hdrgm:HDRCapacityMax="2" '
        'hdrgm:BaseRenditionIsHDR="False">')) + gain_jpeg[2:]
    for name, orientation in [("ultrahdr-gradient.jpg", None), ("ultrahdr-exif6.jpg", 6)]:
        primary = base
        if orientation:
            path = os.path.join(work, name)
            open(path, "wb").write(base)
            exiftool(path, "-Orientation#=%d" % orientation)
            primary = open(path, "rb").read()
        head = segment(0xE1, xmp('xmlns:hdrgm="http://ns.adobe.com/hdr-gain-map/1.0/" hdrgm:Version="1.0">'))
        size = len(primary) + len(head) + len(segment(0xE2, mpf(0, 0, 0)))
        # The MPF segment goes after SOI, any APP1 EXIF and the XMP.
        at = 2
        while primary[at] == 0xFF and primary[at + 1] in (0xE0, 0xE1):
            at += 2 + struct.unpack(">H", primary[at + 2:at + 4])[0]
        mpf_at = at + len(head) + 4 + 4
        whole = primary[:at] + head + segment(0xE2, mpf(size, len(gain_jpeg), size - mpf_at)) + primary[at:]
        assert len(whole) == size
        open(os.path.join(out, name), "wb").write(whole + gain_jpeg)


def properties():
    """An `ipco` list and the function that adds a property box to it (once) and
    returns its 1-based index."""
    props = []

    def prop(b):
        if b in props:
            return props.index(b) + 1
        props.append(b)
        return len(props)
    return props, prop


def rgb(w, h, colour):
    return bytes(colour) * (w * h)


def heics(out, work):
    w, h = 256, 192
    props, prop = properties()
    cfg, (left, right) = heic.encode_frames([rgb(w, h, (220, 30, 30)), rgb(w, h, (30, 30, 220))], w, h, "hevc", 26, "medium", 1, work, "eyes")
    common = [(prop(cfg), True), (prop(heic.ispe(w, h)), False), (prop(heic.colr_nclx()), False), (prop(heic.pixi()), False)]
    one, two = heic.Item(1, b"hvc1", left), heic.Item(2, b"hvc1", right)
    one.props = two.props = common
    path = os.path.join(out, "spatial.heic")
    heic.write_heif(path, b"heic", [b"mif1", b"heic"], [one, two], 1, [], props)
    heic.add_grpl(path, heic.box(b"grpl", heic.fullbox(b"ster", 0, 0, struct.pack(">III", 100, 2, 1) + struct.pack(">I", 2))))

    # The same pair with the right eye as the primary: the left (the ster group's first) is still the thumbnail.
    path = os.path.join(out, "spatial-right-primary.heic")
    heic.write_heif(path, b"heic", [b"mif1", b"heic"], [one, two], 2, [], props)
    heic.add_grpl(path, heic.box(b"grpl", heic.fullbox(b"ster", 0, 0, struct.pack(">III", 100, 2, 1) + struct.pack(">I", 2))))

    props.clear()
    gw, gh = 128, 96
    cfg, (photo,) = heic.encode_frames([rgb(w, h, (200, 160, 60))], w, h, "hevc", 26, "medium", 1, work, "photo")
    gcfg, (gain,) = heic.encode_frames([rgb(gw, gh, (128, 128, 128))], gw, gh, "hevc", 26, "medium", 1, work, "gainmap")
    primary = heic.Item(1, b"hvc1", photo)
    primary.props = [(prop(cfg), True), (prop(heic.ispe(w, h)), False), (prop(heic.colr_nclx()), False), (prop(heic.pixi()), False)]
    aux = heic.Item(2, b"hvc1", gain, hidden=True)
    aux_type = heic.fullbox(b"auxC", 0, 0, b"urn:com:apple:photo:2020:aux:hdrgainmap\0")
    aux.props = [(prop(gcfg), True), (prop(heic.ispe(gw, gh)), False), (prop(aux_type), True)]
    heic.write_heif(os.path.join(out, "apple-gainmap.heic"), b"heic", [b"mif1", b"heic"], [primary, aux], 1, [(b"auxl", 2, [1])], props)


def spatial_video(out, work):
    mp4 = os.path.join(work, "base.mov")
    subprocess.run(heic.FF + ["-f", "lavfi", "-i", "testsrc=size=320x240:rate=30:duration=1", "-c:v", "libx265", "-tag:v", "hvc1",
                              "-x265-params", "log-level=error:frame-threads=1:pools=1"] + heic.BITEXACT + [mp4], check=True)
    data = bytearray(open(mp4, "rb").read())
    assert data.index(b"mdat") < data.index(b"moov"), "moov must follow mdat (no chunk offset moves)"
    # vexu { eyes { stri: has left and right eye views } }, as Apple's spatial videos carry it.
    vexu = heic.box(b"vexu", heic.box(b"eyes", heic.fullbox(b"stri", 0, 0, bytes([0x03]))))
    entry = data.index(b"hvc1", data.index(b"stsd")) - 4
    entry_size = struct.unpack(">I", data[entry:entry + 4])[0]
    data[entry + entry_size:entry + entry_size] = vexu
    # Every box enclosing the sample entry grows by vexu's length.
    for name in [b"hvc1", b"stsd", b"stbl", b"minf", b"mdia", b"trak", b"moov"]:
        at = entry if name == b"hvc1" else data.rindex(name, 0, entry) - 4
        size = struct.unpack(">I", data[at:at + 4])[0]
        data[at:at + 4] = struct.pack(">I", size + len(vexu))
    open(os.path.join(out, "spatial.mov"), "wb").write(data)


def encode_grey(pixels, w, h, work, name, codec="hevc"):
    """A monochrome (4:0:0) full-range picture of grey bytes, as iPhones code
    their gain maps in HEVC and libavif a one-channel map in AV1 (`codec`
    "av1"): (hvcC or av1C box, sample)."""
    raw = os.path.join(work, name + ".gray")
    open(raw, "wb").write(bytes(pixels))
    mp4 = os.path.join(work, name + ".mp4")
    if codec == "hevc":
        encoder = ["-c:v", "libx265", "-preset", "medium", "-crf", "10", "-tag:v", "hvc1",
                   "-x265-params", "log-level=error:keyint=1:info=0:frame-threads=1:pools=1"]
    else:
        encoder = ["-c:v", "libaom-av1", "-crf", "8", "-b:v", "0", "-cpu-used", "6", "-g", "1", "-row-mt", "0", "-threads", "1"]
    subprocess.run(heic.FF + ["-f", "rawvideo", "-pix_fmt", "gray", "-s", "%dx%d" % (w, h), "-r", "1", "-i", raw, "-pix_fmt", "gray",
                              "-color_range", "pc"] + encoder + heic.BITEXACT + ["-f", "mp4", mp4], check=True)
    cfg, samples = heic.mp4_samples(mp4)
    return cfg, heic.strip_hevc_param_sets(samples[0]) if codec == "hevc" else samples[0]


def apple_exif(headroom33, gain48):
    """An Exif item's data: offset 0, then a big-endian TIFF whose IFD0 has Make
    Apple, Model iPhone 15 Pro and an Exif IFD whose MakerNote is Apple's
    (`Apple iOS\\0`, version 1, `MM`, an IFD whose offsets count from the maker
    note's start) with MakerNoteVersion 14 and tags 0x21 and 0x30 as signed
    rationals (exiftool: HDRHeadroom, HDRGain), as an iPhone writes them."""
    def rational(v):
        return struct.pack(">ii", int(round(v * 1000000)), 1000000)
    # The maker note: header (14 bytes), IFD of 3 entries, then the two rationals.
    ifd_at = 14
    values_at = ifd_at + 2 + 3 * 12 + 4
    note = b"Apple iOS\0" + b"\x00\x01" + b"MM"
    note += struct.pack(">H", 3)
    note += struct.pack(">HHII", 0x0001, 9, 1, 14)
    note += struct.pack(">HHII", 0x0021, 10, 1, values_at)
    note += struct.pack(">HHII", 0x0030, 10, 1, values_at + 8)
    note += struct.pack(">I", 0) + rational(headroom33) + rational(gain48)
    make, model = b"Apple\0", b"iPhone 15 Pro\0"
    ifd0_at = 8
    ifd0_size = 2 + 3 * 12 + 4
    make_at = ifd0_at + ifd0_size
    model_at = make_at + len(make)
    exif_at = model_at + len(model)
    exif_size = 2 + 1 * 12 + 4
    note_at = exif_at + exif_size
    tiff = b"MM\0*" + struct.pack(">I", ifd0_at)
    tiff += struct.pack(">H", 3) + struct.pack(">HHII", 0x010F, 2, len(make), make_at) + struct.pack(">HHII", 0x0110, 2, len(model), model_at)
    tiff += struct.pack(">HHII", 0x8769, 4, 1, exif_at) + struct.pack(">I", 0) + make + model
    tiff += struct.pack(">H", 1) + struct.pack(">HHII", 0x927C, 7, len(note), note_at) + struct.pack(">I", 0) + note
    return struct.pack(">I", 0) + tiff


def tmap_sdr_base(base_headroom, alternate_headroom, minimum, maximum, gamma, offset_base, offset_alternate):
    """A `tmap` item's data: version 0, then ISO 21496-1 metadata (minimum and
    writer version 0, flags: one channel, base colour space), headrooms and the
    channel's values as fractions over 1000000."""
    def u(v):
        return struct.pack(">II", int(round(v * 1000000)), 1000000)

    def s(v):
        return struct.pack(">iI", int(round(v * 1000000)), 1000000)
    return (struct.pack(">BHHB", 0, 0, 0, 0x40) + u(base_headroom) + u(alternate_headroom) + s(minimum) + s(maximum) + u(gamma)
            + s(offset_base) + s(offset_alternate))


def apple_hdr(out, work):
    """iPhone HDR photos (issue 54): a 640x480 HEVC picture (the colour chart of
    ultrahdr-gradient.jpg) whose hidden auxiliary image of type
    `urn:com:apple:photo:2020:aux:hdrgainmap` (`auxl` to it) is a 320x240
    monochrome HEVC gain map with a shape (255 in its top-left quarter, 0 in its
    bottom-right, a left-to-right ramp elsewhere), as iPhones store theirs:
    - apple-hdr.heic: the headroom in the Exif item's Apple maker note only
      (tags 0x21 = 1.01 and 0x30 = 0.6: 2^(2.303 - 0.303 * 0.6) = 4.352);
    - apple-hdr-irot.heic: the photo and its map both with `irot` 1 (shown
      480x640), the headroom only in the map's XMP (a `mime` item, `cdsc` to
      the map: HDRGainMap:HDRGainMapHeadroom 3.0), as iOS 17 writes it;
    - apple-hdr-tmap.heic: as apple-hdr.heic, plus an ISO 21496-1 `tmap` item
      (`dimg`: the photo, then the map; its data in `idat`) with values of its
      own (headrooms 0 and 1.5, gain map -0.25 to 1.5, gamma 0.9, offsets
      0.00001), as iOS 18 writes both."""
    w, h, gw, gh = 640, 480, 320, 240
    photo = chart_picture()
    cfg, (picture,) = heic.encode_frames([photo], w, h, "hevc", 20, "medium", 1, work, "apple-photo")
    gcfg, gain_sample = encode_grey([gain_shape(x, y) for y in range(gh) for x in range(gw)], gw, gh, work, "apple-gain")
    aux_type = heic.fullbox(b"auxC", 0, 0, b"urn:com:apple:photo:2020:aux:hdrgainmap\0")
    grey_nclx = heic.box(b"colr", b"nclx" + heic.u16(2) + heic.u16(2) + heic.u16(2) + heic.u8(0x80))
    apple_xmp = ('<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">'
                 '<rdf:Description rdf:about="" xmlns:HDRGainMap="http://ns.apple.com/HDRGainMap/1.0/">'
                 '<HDRGainMap:HDRGainMapVersion>131072</HDRGainMap:HDRGainMapVersion>'
                 '<HDRGainMap:HDRGainMapHeadroom>3.000000</HDRGainMap:HDRGainMapHeadroom>'
                 '</rdf:Description></rdf:RDF></x:xmpmeta>').encode()
    for name in ["apple-hdr.heic", "apple-hdr-irot.heic", "apple-hdr-tmap.heic"]:
        props, prop = properties()
        turned = name == "apple-hdr-irot.heic"
        primary = heic.Item(1, b"hvc1", picture)
        primary.props = [(prop(cfg), True), (prop(heic.ispe(w, h)), False), (prop(heic.colr_nclx()), False), (prop(heic.pixi()), False)]
        aux = heic.Item(2, b"hvc1", gain_sample, hidden=True)
        aux.props = [(prop(gcfg), True), (prop(heic.ispe(gw, gh)), False), (prop(heic.pixi(8, 1)), False), (prop(aux_type), True),
                     (prop(grey_nclx), False)]
        if turned:
            primary.props.append((prop(heic.irot_box(1)), True))
            aux.props.append((prop(heic.irot_box(1)), True))
        items = [primary, aux]
        refs = [(b"auxl", 2, [1])]
        if turned:
            items.append(heic.Item(3, b"mime", apple_xmp, hidden=True, name=b"\0application/rdf+xml"))
            refs.append((b"cdsc", 3, [2]))
        else:
            items.append(heic.Item(3, b"Exif", apple_exif(1.01, 0.6), hidden=True))
            refs.append((b"cdsc", 3, [1]))
        if name == "apple-hdr-tmap.heic":
            tmap = heic.Item(4, b"tmap", tmap_sdr_base(0, 1.5, -0.25, 1.5, 0.9, 0.00001, 0.00001), hidden=True, in_idat=True)
            tmap.props = [(prop(heic.ispe(w, h)), False)]
            items.append(tmap)
            refs.append((b"dimg", 4, [1, 2]))
        heic.write_heif(os.path.join(out, name), b"heic", [b"mif1", b"MiHE", b"heic"], items, 1, refs, props)


def write_tmap_avif(path, size, base, gain_size, gain, tmap_payload, work, gain_bits=8):
    """An AVIF with an SDR base and an ISO 21496-1 gain map, laid out as libavif
    writes one: item 1 (the primary) the base, item 2 (hidden) the gain map with a
    full-range nclx box, item 3 a `tmap` (`dimg`: 1 then 2, its data in `idat`)
    in an `altr` group with the primary (tmap preferred). base and gain: (av1C
    box, sample); size and gain_size: (width, height); gain_bits: the map's
    bit depth (its `pixi`)."""
    (w, h), (gw, gh) = size, gain_size
    props, prop = properties()
    grey_nclx = heic.box(b"colr", b"nclx" + heic.u16(2) + heic.u16(2) + heic.u16(2) + heic.u8(0x80))
    primary = heic.Item(1, b"av01", base[1])
    primary.props = [(prop(base[0]), True), (prop(heic.ispe(w, h)), False), (prop(heic.colr_nclx()), False), (prop(heic.pixi()), False)]
    gain_item = heic.Item(2, b"av01", gain[1], hidden=True)
    gain_item.props = [(prop(gain[0]), True), (prop(heic.ispe(gw, gh)), False), (prop(heic.pixi(gain_bits, 1)), False), (prop(grey_nclx), False)]
    tmap = heic.Item(3, b"tmap", tmap_payload, hidden=True, in_idat=True)
    tmap.props = [(prop(heic.ispe(w, h)), False), (prop(heic.colr_nclx()), False)]
    plain = os.path.join(work, "tmap.plain.avif")
    heic.write_heif(plain, b"avif", [b"avif", b"mif1", b"miaf", b"tmap"], [primary, gain_item, tmap], 1, [(b"dimg", 3, [1, 2])], props)
    grpl = heic.box(b"grpl", heic.fullbox(b"altr", 0, 0, struct.pack(">III", 100, 2, 3) + struct.pack(">I", 1)))
    heic.add_grpl(plain, grpl, path)


def avif_sdr_tmap(out, work):
    """An AVIF with an SDR base and an ISO 21496-1 gain map, laid out as libavif
    writes one (issue 54, ``write_tmap_avif``): sdr-tmap.avif, the 640x480 colour
    chart of apple_hdr as an 8-bit AV1 picture, the same 320x240 gain map shape
    as a monochrome AV1 picture, and a `tmap` with headrooms 0 and 1.5, gain
    map -0.25 to 1.5, gamma 0.9, offsets 0.00001. sdr-tmap.map.png is that map
    as it was before it was coded."""
    w, h, gw, gh = 640, 480, 320, 240
    photo = chart_picture()
    cfg, (picture,) = heic.encode_frames([photo], w, h, "av1", 20, "medium", 1, work, "avif-photo")
    grey = [gain_shape(x, y) for y in range(gh) for x in range(gw)]
    gain = encode_grey(grey, gw, gh, work, "avif-gain", "av1")
    payload = tmap_sdr_base(0, 1.5, -0.25, 1.5, 0.9, 0.00001, 0.00001)
    write_tmap_avif(os.path.join(out, "sdr-tmap.avif"), (w, h), (cfg, picture), (gw, gh), gain, payload, work)
    pgm = os.path.join(work, "sdr-tmap.map.pgm")
    open(pgm, "wb").write(b"P5\n%d %d\n255\n" % (gw, gh) + bytes(grey))
    subprocess.run(["vips", "copy", pgm, os.path.join(out, "sdr-tmap.map.png")], check=True)



def avif_bad_maps(out, work):
    """AVIFs whose AV1 gain map cannot be carried (issue 54: the photo is still
    delivered, SDR, with a warning saying why), otherwise sdr-tmap.avif:
    - sdr-tmap-map-lies.avif: the map's `ispe` says 320x240, its AV1 picture is 640x480;
    - sdr-tmap-map-cut.avif: the map's AV1 data cut to its first half;
    - sdr-tmap-map-10bit.avif: a 10-bit map (its av1C says so): not read as 8-bit values."""
    w, h, gw, gh = 640, 480, 320, 240
    photo = chart_picture()
    base = heic.encode_frames([photo], w, h, "av1", 20, "medium", 1, work, "avif-photo")
    base = (base[0], base[1][0])
    payload = tmap_sdr_base(0, 1.5, -0.25, 1.5, 0.9, 0.00001, 0.00001)
    large = encode_grey([gain_shape(x // 2, y // 2) for y in range(h) for x in range(w)], w, h, work, "avif-gain-large", "av1")
    write_tmap_avif(os.path.join(out, "sdr-tmap-map-lies.avif"), (w, h), base, (gw, gh), large, payload, work)
    cfg, sample = encode_grey([gain_shape(x, y) for y in range(gh) for x in range(gw)], gw, gh, work, "avif-gain", "av1")
    write_tmap_avif(os.path.join(out, "sdr-tmap-map-cut.avif"), (w, h), base, (gw, gh), (cfg, sample[:len(sample) // 2]), payload, work)
    raw = os.path.join(work, "gain10.gray")
    open(raw, "wb").write(bytes([gain_shape(x, y) for y in range(gh) for x in range(gw)]))
    mp4 = os.path.join(work, "gain10.mp4")
    subprocess.run(heic.FF + ["-f", "rawvideo", "-pix_fmt", "gray", "-s", "%dx%d" % (gw, gh), "-r", "1", "-i", raw, "-pix_fmt", "gray10le",
                              "-color_range", "pc", "-c:v", "libaom-av1", "-crf", "8", "-b:v", "0", "-cpu-used", "6", "-g", "1", "-row-mt", "0",
                              "-threads", "1"] + heic.BITEXACT + ["-f", "mp4", mp4], check=True)
    cfg10, samples10 = heic.mp4_samples(mp4)
    write_tmap_avif(os.path.join(out, "sdr-tmap-map-10bit.avif"), (w, h), base, (gw, gh), (cfg10, samples10[0]), payload, work, 10)

def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    work = tempfile.mkdtemp(prefix="make-spatial.")
    only = sys.argv[2:]  # make-spatial.py OUT_DIR odd_panoramas: only those (the others' bytes stay as committed)
    if only:
        for name in only:
            globals()[name](out, work)
        return
    panoramas(out, work)
    odd_panoramas(out, work)
    ultra_hdr_gradient(out, work)
    ultra_hdr(out, work, True)
    ultra_hdr(out, work, False)
    heics(out, work)
    apple_hdr(out, work)
    avif_sdr_tmap(out, work)
    avif_bad_maps(out, work)
    spatial_video(out, work)


if __name__ == "__main__":
    main()
