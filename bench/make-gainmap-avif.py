#!/usr/bin/env python3
"""An AVIF with an SDR base and an ISO 21496-1 gain map, made from an Ultra HDR
JPEG (issue 54's AVIF measurements; libavif 0.11, Debian 12's, writes no gain
maps): the JPEG's primary as an 8-bit 4:2:0 AV1 picture, its gain map (the
second MPF image, grey) as a monochrome full-range AV1 picture, and a `tmap`
item whose numbers are the map's `hdrgm` values (GainMapMin/Max, Gamma,
OffsetSDR/HDR, HDRCapacityMin/Max as the base and alternate headrooms), laid
out by testdata/make-spatial.py's `write_tmap_avif` (as libavif 1.x writes one).
A photo with an EXIF orientation other than 1 is refused (turn it first).

    python3 bench/make-gainmap-avif.py ULTRAHDR.jpg OUT.avif

Uses bench/make-heic.py's ISOBMFF writer, ffmpeg (libaom) and exiftool.
"""
import importlib.util
import os
import re
import subprocess
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))


def load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


heic = load("make_heic", os.path.join(here, "make-heic.py"))
spatial = load("make_spatial", os.path.join(here, "..", "testdata", "make-spatial.py"))


def raw(path, work, name):
    """The picture's samples, interleaved (libvips' rawsave: RGB, or one grey band)."""
    out = os.path.join(work, name + ".raw")
    subprocess.run(["vips", "rawsave", path, out], check=True)
    return open(out, "rb").read()


def size(path):
    out = subprocess.run(["vipsheader", "-f", "width", path], capture_output=True, text=True, check=True).stdout
    height = subprocess.run(["vipsheader", "-f", "height", path], capture_output=True, text=True, check=True).stdout
    return int(out), int(height)


def main():
    source, out = sys.argv[1], sys.argv[2]
    work = tempfile.mkdtemp(prefix="gainmap-avif.")
    orientation = subprocess.run(["exiftool", "-n", "-s3", "-Orientation", source], capture_output=True, text=True).stdout.strip()
    if orientation not in ("", "1"):
        sys.exit("make-gainmap-avif: %s has EXIF orientation %s: turn it first" % (source, orientation))
    gain_jpeg = os.path.join(work, "gain.jpg")
    with open(gain_jpeg, "wb") as f:
        f.write(subprocess.run(["exiftool", "-b", "-MPImage2", source], capture_output=True, check=True).stdout)
    text = open(gain_jpeg, "rb").read().decode("latin-1")
    values = {}
    for name in ["GainMapMin", "GainMapMax", "Gamma", "OffsetSDR", "OffsetHDR", "HDRCapacityMin", "HDRCapacityMax"]:
        found = re.findall(r'hdrgm:%s="([-0-9.eE]+)"' % name, text)
        values[name] = float(found[-1]) if found else {"Gamma": 1.0, "OffsetSDR": 1 / 64, "OffsetHDR": 1 / 64, "HDRCapacityMin": 0.0}.get(name)
    if values["GainMapMax"] is None or values["HDRCapacityMax"] is None:
        sys.exit("make-gainmap-avif: %s: no hdrgm GainMapMax/HDRCapacityMax in its gain map" % source)
    w, h = size(source)
    gw, gh = size(gain_jpeg)
    base = heic.encode_frames([raw(source, work, "base")], w, h, "av1", 20, "medium", 1, work, "base")
    gain = spatial.encode_grey(list(raw(gain_jpeg, work, "gain")), gw, gh, work, "gain", "av1")
    payload = spatial.tmap_sdr_base(values["HDRCapacityMin"], values["HDRCapacityMax"], values["GainMapMin"], values["GainMapMax"],
                                    values["Gamma"], values["OffsetSDR"], values["OffsetHDR"])
    spatial.write_tmap_avif(out, (w, h), (base[0], base[1][0]), (gw, gh), gain, payload, work)
    print("%s: %dx%d, map %dx%d, %s" % (out, w, h, gw, gh, values))


if __name__ == "__main__":
    main()
