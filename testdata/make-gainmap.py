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


if __name__ == "__main__":
    main()
