#!/usr/bin/env python3
"""An AVIF whose base image is HDR and whose gain map maps it down (ISO 21496-1
as AVIF carries it, the way libavif writes it): item 1, the primary, a 10-bit
PQ BT.2020 picture (the colour chart); item 2, hidden, the gain map (8-bit,
green with a magenta band, as unlike the chart as a picture can be); item 3, a
`tmap` item whose `dimg` references are the base and the gain map, in an
`altr` group with the base (readers that know `tmap` prefer it, others show the
base). A reader must tone-map the base and never show the gain map.

  make-gainmap.py BASE_PQ.png OUT.avif

Uses bench/make-heic.py's ISOBMFF writer; ffmpeg (libaom) encodes the pictures.

  make-gainmap.py layouts OUT_DIR

Issue 62: one photo per gain-map layout that is not an Ultra HDR JPEG with a
one-channel map of a simple fraction of its picture, each laid out as the
camera, phone or library that writes it (make-spatial.py's chart, map shape,
MPF index and Apple maker note; python3 standard library, vips, exiftool,
ffmpeg with libaom):
  gainmap-apple.jpg           Apple's JPEG layout: the 640x480 chart, EXIF with
                              Apple's maker note (HDRHeadroom 1.01, HDRGain 0.6),
                              an MPF index whose second image is the 320x240 grey
                              map with Apple's HDRGainMap XMP (HDRGainMapVersion
                              65536 alone: the older layout), no hdrgm anywhere
  gainmap-apple-current.jpg   the same in Apple's current (iOS 18) layout: the
                              map's XMP elements have HDRGainMapVersion 131072
                              and HDRGainMapHeadroom 3 (which wins over the
                              maker note's)
  gainmap-three-channel.jpg   an Ultra HDR JPEG whose 320x240 map has three
                              channels and hdrgm GainMapMin/GainMapMax/Gamma of
                              three values each (rdf:Seq), as Adobe's tools write it
  gainmap-larger.jpg          a 403x302 picture with a 512x384 map, big-endian
                              EXIF (Make, Model) and MPF
  gainmap-odd-fraction.jpg    a 403x302 picture with a 101x76 map (no simple
                              fraction of it), big-endian EXIF and MPF
  gainmap-three-channel.avif  the chart as an AV1 AVIF whose ISO 21496-1 `tmap`
                              has three channels' values (flags 0xC0) and whose
                              map is a three-component AV1 picture, as libavif
                              writes a colour map
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


def encode(args, work, name):
    mp4 = os.path.join(work, name + ".mp4")
    subprocess.run(heic.FF + args + ["-c:v", "libaom-av1", "-crf", "20", "-b:v", "0", "-cpu-used", "6", "-g", "1", "-row-mt", "0",
                                     "-threads", "1", "-frames:v", "1"] + heic.BITEXACT + ["-f", "mp4", mp4], check=True)
    cfg, samples = heic.mp4_samples(mp4)
    return cfg, samples[0]


def tmap_payload():
    """ISO 21496-1 gain map metadata (one channel), version 0: headrooms of 0
    (base) and log2(4.9) (alternate), the map's range and gamma, no offsets."""
    def frac(n, d, signed=False):
        return struct.pack(">iI" if signed else ">II", n, d)
    body = struct.pack(">BHHB", 0, 0, 0, 0)  # version, minimum version, writer version, flags (one channel)
    body += frac(0, 1) + frac(229, 100)  # base_hdr_headroom, alternate_hdr_headroom
    body += frac(0, 1, True) + frac(-229, 100, True) + frac(1, 1) + frac(1, 64, True) + frac(1, 64, True)
    return body


def main():
    base_png, out = sys.argv[1], sys.argv[2]
    work = tempfile.mkdtemp(prefix="make-gainmap.")
    w, h = 640, 360
    base_cfg, base = encode(["-i", base_png, "-vf", "scale=out_color_matrix=bt2020:out_range=tv,format=yuv420p10le",
                             "-color_primaries", "bt2020", "-color_trc", "smpte2084", "-colorspace", "bt2020nc", "-color_range", "tv"],
                            work, "base")
    gain_cfg, gain = encode(["-f", "lavfi", "-i", "color=c=0x20C040:size=%dx%d,drawbox=y=140:h=80:w=iw:color=0xE020E0:t=fill" % (w, h),
                             "-vf", "format=yuv420p", "-color_range", "pc"], work, "gain")
    props = []

    def prop(b):
        props.append(b)
        return len(props)
    base_item = heic.Item(1, b"av01", base)
    base_item.props = [(prop(base_cfg), True), (prop(heic.ispe(w, h)), False),
                       (prop(heic.box(b"colr", b"nclx" + struct.pack(">HHHB", 9, 16, 9, 0))), False), (prop(heic.pixi(10)), False)]
    gain_item = heic.Item(2, b"av01", gain, hidden=True)
    gain_item.props = [(prop(gain_cfg), True), (prop(heic.ispe(w, h)), False), (prop(heic.pixi(8)), False)]
    tmap_item = heic.Item(3, b"tmap", tmap_payload(), hidden=True, in_idat=True)
    tmap_item.props = [(2, False)]  # the base's ispe
    path = os.path.join(work, "plain.avif")
    heic.write_heif(path, b"avif", [b"avif", b"mif1", b"miaf", b"tmap"], [base_item, gain_item, tmap_item], 1,
                    [(b"dimg", 3, [1, 2])], props)
    # The altr entity group (tmap preferred, the base as its alternative), in a grpl box appended to meta.
    grpl = heic.box(b"grpl", heic.fullbox(b"altr", 0, 0, struct.pack(">III", 100, 2, 3) + struct.pack(">I", 1)))
    heic.add_grpl(path, grpl, out)


def spatial():
    """make-spatial.py, for its fixtures' pieces."""
    found = importlib.util.spec_from_file_location("make_spatial", os.path.join(here, "make-spatial.py"))
    module = importlib.util.module_from_spec(found)
    found.loader.exec_module(module)
    return module


def with_xmp(jpeg, description, sp):
    """A JPEG with an APP1 XMP packet of `description` right after its SOI."""
    return jpeg[:2] + sp.segment(0xE1, sp.xmp(description)) + jpeg[2:]


def with_mpf(primary, gain, sp):
    """The primary JPEG with a (big-endian) MPF index listing `gain` as its
    second image, after its SOI and APP0/APP1 segments, and `gain` after it."""
    size = len(primary) + len(sp.segment(0xE2, sp.mpf(0, 0, 0)))
    at = 2
    while primary[at] == 0xFF and primary[at + 1] in (0xE0, 0xE1):
        at += 2 + struct.unpack(">H", primary[at + 2:at + 4])[0]
    mpf_at = at + 4 + 4
    whole = primary[:at] + sp.segment(0xE2, sp.mpf(size, len(gain), size - mpf_at)) + primary[at:]
    assert len(whole) == size
    return whole + gain


HDRGM = 'xmlns:hdrgm="http://ns.adobe.com/hdr-gain-map/1.0/" hdrgm:Version="1.0"'


def one_channel_hdrgm():
    return (HDRGM + ' hdrgm:GainMapMin="0" hdrgm:GainMapMax="2" hdrgm:Gamma="1" hdrgm:OffsetSDR="0.015625" hdrgm:OffsetHDR="0.015625" '
            'hdrgm:HDRCapacityMin="0" hdrgm:HDRCapacityMax="2" hdrgm:BaseRenditionIsHDR="False">')


def picture(sp, work, name, w, h, pixel, grey=False):
    src = os.path.join(work, name + ".ppm")
    sp.ppm(src, w, h, pixel)
    out = os.path.join(work, name + ".jpg")
    if grey:
        subprocess.run(["vips", "colourspace", src, out + "[Q=95,strip]", "b-w"], check=True)
    else:
        subprocess.run(["vips", "copy", src, out + "[Q=92,strip]"], check=True)
    return open(out, "rb").read()


def shape(w, h, sp):
    """make-spatial.py's 320x240 gain map shape, stretched to w x h."""
    def pixel(x, y):
        v = sp.gain_shape(x * 320 // w, y * 240 // h)
        return (v, v, v)
    return pixel


def ultra_hdr_odd(out, work, sp, name, w, h, gw, gh):
    """An Ultra HDR JPEG of the chart at w x h with a one-channel gw x gh map, big-endian EXIF and MPF."""
    path = os.path.join(work, name)
    open(path, "wb").write(picture(sp, work, name + ".base", w, h, lambda x, y: sp.chart(x * 640 // w, y * 480 // h)))
    sp.exiftool(path, "-ExifByteOrder=Big-endian", "-Make=Google", "-Model=Pixel 7")
    primary = with_xmp(open(path, "rb").read(), HDRGM + ">", sp)
    gain = with_xmp(picture(sp, work, name + ".gain", gw, gh, shape(gw, gh, sp), grey=True), one_channel_hdrgm(), sp)
    open(os.path.join(out, name), "wb").write(with_mpf(primary, gain, sp))


def layouts(out, work):
    sp = spatial()
    chart = picture(sp, work, "chart", 640, 480, sp.chart)

    # Apple's JPEG layout: the maker note's headroom, an MPF second image with Apple's XMP, no hdrgm.
    exif = sp.apple_exif(1.01, 0.6)[4:]  # the TIFF (an Exif item's data starts with a 4-byte offset)
    primary = chart[:2] + sp.segment(0xE1, b"Exif\0\0" + exif) + chart[2:]
    gain = with_xmp(picture(sp, work, "apple-gain", 320, 240, shape(320, 240, sp), grey=True),
                    'xmlns:HDRGainMap="http://ns.apple.com/HDRGainMap/1.0/" HDRGainMap:HDRGainMapVersion="65536" '
                    'xmlns:apdi="http://ns.apple.com/pixeldatainfo/1.0/" apdi:AuxiliaryImageType="urn:com:apple:photo:2020:aux:hdrgainmap">', sp)
    open(os.path.join(out, "gainmap-apple.jpg"), "wb").write(with_mpf(primary, gain, sp))

    # Apple's current JPEG layout (iOS 18): the map's XMP, as elements, has HDRGainMapVersion 131072 and the
    # headroom itself (HDRGainMapHeadroom 3), which wins over the maker note's (here 2^2.12, as above).
    gain = with_xmp(picture(sp, work, "apple-gain", 320, 240, shape(320, 240, sp), grey=True),
                    'xmlns:HDRGainMap="http://ns.apple.com/HDRGainMap/1.0/" xmlns:apdi="http://ns.apple.com/pixeldatainfo/1.0/">'
                    '<HDRGainMap:HDRGainMapVersion>131072</HDRGainMap:HDRGainMapVersion>'
                    '<HDRGainMap:HDRGainMapHeadroom>3.000000</HDRGainMap:HDRGainMapHeadroom>'
                    '<apdi:AuxiliaryImageType>urn:com:apple:photo:2020:aux:hdrgainmap</apdi:AuxiliaryImageType>', sp)
    open(os.path.join(out, "gainmap-apple-current.jpg"), "wb").write(with_mpf(primary, gain, sp))

    # A three-channel map: three values per hdrgm number (rdf:Seq), a colour map picture.
    def seq(name, values):
        return "<hdrgm:%s><rdf:Seq>%s</rdf:Seq></hdrgm:%s>" % (name, "".join("<rdf:li>%s</rdf:li>" % v for v in values), name)
    def colour(x, y):
        v = sp.gain_shape(x, y)
        return (v, 128, 255 - v)
    gain = with_xmp(picture(sp, work, "colour-gain", 320, 240, colour),
                    HDRGM + ' hdrgm:OffsetSDR="0.015625" hdrgm:OffsetHDR="0.015625" hdrgm:HDRCapacityMin="0" hdrgm:HDRCapacityMax="2" '
                    'hdrgm:BaseRenditionIsHDR="False">' + seq("GainMapMin", [0, 0, 0]) + seq("GainMapMax", [2, 1.5, 1])
                    + seq("Gamma", [1, 1, 1]), sp)
    open(os.path.join(out, "gainmap-three-channel.jpg"), "wb").write(with_mpf(with_xmp(chart, HDRGM + ">", sp), gain, sp))

    ultra_hdr_odd(out, work, sp, "gainmap-larger.jpg", 403, 302, 512, 384)
    ultra_hdr_odd(out, work, sp, "gainmap-odd-fraction.jpg", 403, 302, 101, 76)

    # A three-channel tmap AVIF: flags 0xC0 (multichannel, base colour space), three sets of values.
    def u(v):
        return struct.pack(">II", int(round(v * 1000000)), 1000000)

    def s(v):
        return struct.pack(">iI", int(round(v * 1000000)), 1000000)
    payload = struct.pack(">BHHB", 0, 0, 0, 0xC0) + u(0) + u(1.5)
    for maximum in (1.5, 1.0, 0.5):
        payload += s(-0.25) + s(maximum) + u(0.9) + s(0.00001) + s(0.00001)
    w, h, gw, gh = 640, 480, 320, 240
    cfg, (photo,) = heic.encode_frames([sp.chart_picture()], w, h, "av1", 20, "medium", 1, work, "avif-photo")
    colour_map = b"".join(bytes(colour(x, y)) for y in range(gh) for x in range(gw))
    gain_cfg, (gain,) = heic.encode_frames([colour_map], gw, gh, "av1", 20, "medium", 1, work, "avif-colour-gain")
    props, prop = sp.properties()
    primary = heic.Item(1, b"av01", photo)
    primary.props = [(prop(cfg), True), (prop(heic.ispe(w, h)), False), (prop(heic.colr_nclx()), False), (prop(heic.pixi()), False)]
    gain_item = heic.Item(2, b"av01", gain, hidden=True)
    gain_item.props = [(prop(gain_cfg), True), (prop(heic.ispe(gw, gh)), False), (prop(heic.pixi(8, 3)), False), (prop(heic.colr_nclx()), False)]
    tmap = heic.Item(3, b"tmap", payload, hidden=True, in_idat=True)
    tmap.props = [(prop(heic.ispe(w, h)), False), (prop(heic.colr_nclx()), False)]
    plain = os.path.join(work, "colour-tmap.plain.avif")
    heic.write_heif(plain, b"avif", [b"avif", b"mif1", b"miaf", b"tmap"], [primary, gain_item, tmap], 1, [(b"dimg", 3, [1, 2])], props)
    grpl = heic.box(b"grpl", heic.fullbox(b"altr", 0, 0, struct.pack(">III", 100, 2, 3) + struct.pack(">I", 1)))
    heic.add_grpl(plain, grpl, os.path.join(out, "gainmap-three-channel.avif"))


if __name__ == "__main__":
    if sys.argv[1:2] == ["layouts"]:
        os.makedirs(sys.argv[2], exist_ok=True)
        layouts(sys.argv[2], tempfile.mkdtemp(prefix="make-gainmap."))
    else:
        main()
