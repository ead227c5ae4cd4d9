#!/usr/bin/env python3
"""How well an Ultra HDR thumbnail keeps its photo's HDR (issue 54): the HDR
rendition rebuilt from the thumbnail (its SDR base x its gain map, as the Ultra
HDR / ISO 21496-1 formulas define it, at full headroom) against the source's
HDR rendition (the same formulas at the source's size) shrunk to the
thumbnail's size by area averaging in linear light; both as BT.2100 ICtCp with
SDR white at 203 cd/m2 (BT.2408), compared by the mean and 99th percentile of
Delta E ITP (ITU-R BT.2124: 720 * sqrt(dI^2 + (0.5 dT)^2 + dP^2); 1 is about a
just noticeable difference). For contrast, the same thumbnail read with its
gain map dropped (SDR only) and flipped left to right.

    python3 bench/gainmap-fidelity.py SOURCE.jpg THUMBNAIL.jpg
    python3 bench/gainmap-fidelity.py SOURCE.heic THUMBNAIL.jpg [--apple]
    python3 bench/gainmap-fidelity.py IPHONE.jpg THUMBNAIL.jpg --apple

An iPhone JPEG with Apple's gain map (--apple; issue 62): its second MPF
image is the map, its HDR rendition Apple's formula below, the headroom from
the map's XMP HDRGainMapHeadroom, else the maker note's tags.

A HEIC or AVIF source (issue 54): its primary and its gain map (a `tmap`'s
second input, else Apple's auxiliary image) are cut out by
bench/heif-item.py and decoded by libheif's heif-convert; its HDR rendition is
ISO 21496-1's formula with its `tmap` item's numbers when it has one (unless
--apple), else Apple's ("Applying Apple HDR effect to your photos"):
HDR = SDR x (1 + (H - 1) g), g the map through the sRGB curve, H the headroom
(the map's XMP HDRGainMapHeadroom, else the maker note's tags 0x21 and 0x30).
Each picture is read in the primaries its ICC profile names (Display P3 for an
iPhone's photos; BT.709/sRGB without one, as thumbnails are since issue 62's
colour fix converts them): before that fix a thumbnail held its source's P3
values untagged, which a screen shows as sRGB, and this script read them as P3.

Needs numpy, Pillow and exiftool (which extracts each file's second MPF image).
"""
import io
import subprocess
import sys

import numpy as np
from PIL import Image, ImageOps

WHITE = 203.0


def hdrgm(path, image):
    """The gain map's hdrgm values (exiftool reads the second image's XMP with -ee? no: parse it ourselves)."""
    data = open(path, "rb").read()
    import re
    values = {}
    for name in ["GainMapMin", "GainMapMax", "Gamma", "OffsetSDR", "OffsetHDR", "HDRCapacityMin", "HDRCapacityMax"]:
        found = re.findall((r'hdrgm:%s="([-0-9.eE]+)"' % name).encode(), data)
        if found:
            values[name] = float(found[-1])
        # A three-channel map's rdf:Seq (issue 62): a value per channel, applied per channel.
        seq = re.findall((r'<hdrgm:%s>\s*<rdf:Seq>(.*?)</rdf:Seq>' % name).encode(), data, re.S)
        if seq:
            values[name] = np.array([float(v) for v in re.findall(rb'<rdf:li>\s*([-0-9.eE]+)\s*</rdf:li>', seq[-1])])
    return values


def parts(path):
    """The base (oriented, linear light 0..1) and the gain map (oriented, 0..1), and the metadata."""
    base = Image.open(path)
    orientation = base.getexif().get(0x0112, 1)
    gain_bytes = subprocess.run(["exiftool", "-b", "-MPImage2", path], capture_output=True, check=True).stdout
    gain = Image.open(io.BytesIO(gain_bytes)) if gain_bytes else None
    meta = hdrgm(path, gain)
    base = ImageOps.exif_transpose(base).convert("RGB")
    if gain is not None:
        transpose = {2: Image.Transpose.FLIP_LEFT_RIGHT, 3: Image.Transpose.ROTATE_180, 4: Image.Transpose.FLIP_TOP_BOTTOM,
                     5: Image.Transpose.TRANSPOSE, 6: Image.Transpose.ROTATE_270, 7: Image.Transpose.TRANSVERSE, 8: Image.Transpose.ROTATE_90}.get(orientation)
        if transpose is not None:
            gain = gain.transpose(transpose)
    srgb = np.asarray(base, dtype=np.float64) / 255
    linear = np.where(srgb <= 0.04045, srgb / 12.92, ((srgb + 0.055) / 1.055) ** 2.4)
    g = None
    if gain is not None:
        g = np.asarray(gain.convert("L") if gain.mode not in ("L", "RGB") else gain, dtype=np.float64) / 255
        if g.ndim == 2:
            g = g[:, :, None]
    return linear, g, meta


def hdr(linear, g, meta):
    """The HDR rendition in cd/m2 (full headroom); the SDR base alone when g is None."""
    if g is None:
        return linear * WHITE
    if g.shape[:2] != linear.shape[:2]:
        g = np.stack([np.asarray(Image.fromarray(g[:, :, c].astype(np.float32), "F").resize((linear.shape[1], linear.shape[0]), Image.BILINEAR))
                      for c in range(g.shape[2])], axis=2)
    r = g ** (1 / meta.get("Gamma", 1))
    boost = meta.get("GainMapMin", 0) * (1 - r) + meta["GainMapMax"] * r
    return ((linear + meta.get("OffsetSDR", 1 / 64)) * 2 ** boost - meta.get("OffsetHDR", 1 / 64)).clip(0) * WHITE


def heif_source(path, apple=False):
    """A HEIC's SDR base (linear, 0..1) and its HDR rendition (cd/m2), and the primaries."""
    import math
    import os
    import struct
    import tempfile
    here = os.path.dirname(os.path.abspath(__file__))
    work = tempfile.mkdtemp(prefix="gainmap-fidelity.")
    cut = os.path.join(here, "heif-item.py")
    listing = subprocess.run([sys.executable, cut, path, "--list"], capture_output=True, text=True, check=True).stdout.splitlines()
    primary = int(listing[-1].split()[1])
    tmap = next((line for line in listing if line.split()[1] == "tmap"), None)
    # The map: the tmap's second input when there is a tmap (AVIF, iOS 18), else Apple's auxiliary image.
    apple_map = next((line for line in listing if "auxC:urn:com:apple:photo:2020:aux:hdrgainmap" in line), None)
    if tmap and (not apple or apple_map is None):
        mapid = int(tmap.split("dimg>[")[1].split("]")[0].split(",")[1])
    else:
        mapid = int(apple_map.split()[0])

    def decode(item, name):
        heif = os.path.join(work, name + ".heic")
        png = os.path.join(work, name + ".png")
        subprocess.run([sys.executable, cut, path, str(item), heif], check=True)
        subprocess.run(["heif-convert", heif, png], check=True, capture_output=True)
        return np.asarray(Image.open(png).convert("RGB"), dtype=np.float32) / 255
    base = decode(primary, "base")
    coded = decode(mapid, "map")
    bands = 1
    if tmap and not apple:
        data = os.path.join(work, "tmap.bin")
        subprocess.run([sys.executable, cut, path, "--data", tmap.split()[0], data], check=True)
        bands = 3 if open(data, "rb").read()[5] & 0x80 else 1
    g = np.stack([np.asarray(Image.fromarray(np.ascontiguousarray(coded[:, :, c]), "F").resize((base.shape[1], base.shape[0]), Image.BILINEAR))
                  for c in range(bands)], axis=2)
    linear = np.where(base <= 0.04045, base / 12.92, ((base + 0.055) / 1.055) ** 2.4)
    if tmap and not apple:
        data = os.path.join(work, "tmap.bin")
        subprocess.run([sys.executable, cut, path, "--data", tmap.split()[0], data], check=True)
        b = open(data, "rb").read()
        assert b[0] == 0 and b[5] & 0x08 == 0, "one denominator each"
        v = struct.unpack(">IIII", b[6:22])
        meta = {"HDRCapacityMin": v[0] / v[1], "HDRCapacityMax": v[2] / v[3]}
        # One channel, or three (the multichannel flag, issue 62): each number per channel.
        channels = [struct.unpack(">iIiIIIiIiI", b[22 + 40 * c:62 + 40 * c]) for c in range(bands)]
        for index, name in enumerate(["GainMapMin", "GainMapMax", "Gamma", "OffsetSDR", "OffsetHDR"]):
            values = np.array([ch[2 * index] / ch[2 * index + 1] for ch in channels])
            meta[name] = values if bands == 3 else float(values[0])
        print("  source: ISO 21496-1 tmap %s" % meta)
        return linear, hdr(linear, g, meta)
    tags = subprocess.run(["exiftool", "-n", "-s3", "-XMP-HDRGainMap:HDRGainMapHeadroom", "-Apple:HDRHeadroom", "-Apple:HDRGain", path],
                          capture_output=True, text=True).stdout.split()
    if len(tags) == 3 or len(tags) == 1:
        headroom = float(tags[0])
    else:
        m33, m48 = float(tags[0]), float(tags[1])
        stops = (-20 * m48 + 1.8 if m48 <= 0.01 else -0.101 * m48 + 1.601) if m33 < 1 else (-70 * m48 + 3 if m48 <= 0.01 else -0.303 * m48 + 2.303)
        headroom = 2 ** max(stops, 0)
    print("  source: Apple's map, headroom %.6f (%.4f stops)" % (headroom, math.log2(headroom)))
    gl = np.where(g <= 0.04045, g / 12.92, ((g + 0.055) / 1.055) ** 2.4)
    return linear, linear * (1 + (headroom - 1) * gl) * WHITE


def apple_headroom(path):
    """Apple's headroom: the map's (or the photo's) XMP HDRGainMapHeadroom, else
    the maker note's tags 0x21 and 0x30 through Apple's formula."""
    tags = subprocess.run(["exiftool", "-n", "-s3", "-XMP-HDRGainMap:HDRGainMapHeadroom", "-Apple:HDRHeadroom", "-Apple:HDRGain", path],
                          capture_output=True, text=True).stdout.split()
    if len(tags) == 3 or len(tags) == 1:
        return float(tags[0])
    m33, m48 = float(tags[0]), float(tags[1])
    stops = (-20 * m48 + 1.8 if m48 <= 0.01 else -0.101 * m48 + 1.601) if m33 < 1 else (-70 * m48 + 3 if m48 <= 0.01 else -0.303 * m48 + 2.303)
    return 2 ** max(stops, 0)


def apple_jpeg_source(path):
    """An iPhone JPEG with Apple's gain map (issue 62: its second MPF image, no
    hdrgm): its SDR base (linear) and its HDR rendition by Apple's formula, the
    map bilinearly upsampled in its coded values (as for a HEIC), the headroom
    from the map's XMP (exiftool reads it from the second image) or the maker note."""
    import math
    linear, g, _ = parts(path)
    gain_bytes = subprocess.run(["exiftool", "-b", "-MPImage2", path], capture_output=True, check=True).stdout
    import tempfile
    with tempfile.NamedTemporaryFile(suffix=".jpg") as gain_file:
        gain_file.write(gain_bytes)
        gain_file.flush()
        headroom = apple_headroom(gain_file.name) if "HDRGainMapHeadroom" in gain_bytes.decode("latin-1") else apple_headroom(path)
    g = np.asarray(Image.fromarray(g[:, :, 0].astype(np.float32), "F").resize((linear.shape[1], linear.shape[0]), Image.BILINEAR))[:, :, None]
    print("  source: Apple's JPEG map, headroom %.6f (%.4f stops)" % (headroom, math.log2(headroom)))
    gl = np.where(g <= 0.04045, g / 12.92, ((g + 0.055) / 1.055) ** 2.4)
    return linear, linear * (1 + (headroom - 1) * gl) * WHITE


def shrink(rgb, width, height):
    return np.stack([np.asarray(Image.fromarray(rgb[:, :, c].astype(np.float32), "F").resize((width, height), Image.BOX)) for c in range(3)], axis=2)


TO2020 = {"bt709": np.array([[0.6274, 0.3293, 0.0433], [0.0691, 0.9195, 0.0114], [0.0164, 0.0880, 0.8956]]),
          "p3": np.array([[0.7539, 0.1986, 0.0476], [0.0457, 0.9418, 0.0125], [-0.0012, 0.0176, 0.9836]])}


def primaries_of(path):
    """The primaries a file's pixels are in, as a screen shows them: Display P3
    when its ICC profile says so (an iPhone's photos), else BT.709/sRGB (a
    picture with no profile, as every thumbnail since issue 62's colour fix)."""
    described = subprocess.run(["exiftool", "-s3", "-ProfileDescription", path], capture_output=True, text=True).stdout
    return "p3" if "P3" in described else "bt709"


def ictcp(nits, primaries):
    """BT.709 (or Display P3) linear RGB in cd/m2 -> BT.2100 ICtCp (PQ)."""
    to2020 = TO2020[primaries]
    rgb = nits @ to2020.T
    lms = rgb @ (np.array([[1688, 2146, 262], [683, 2951, 462], [99, 309, 3688]]) / 4096).T
    y = np.clip(lms / 10000, 0, 1)
    m1, m2, c1, c2, c3 = 0.1593017578125, 78.84375, 0.8359375, 18.8515625, 18.6875
    pq = ((c1 + c2 * y ** m1) / (1 + c3 * y ** m1)) ** m2
    return pq @ (np.array([[2048, 2048, 0], [6610, -13613, 7003], [17933, -17390, -543]]) / 4096).T


def delta(a, b, primaries):
    """Mean and 99th percentile of Delta E ITP between `a` and `b`, each in its
    own primaries (`primaries`: a pair)."""
    d = ictcp(a, primaries[0]) - ictcp(b, primaries[1])
    e = 720 * np.sqrt(d[..., 0] ** 2 + (0.5 * d[..., 1]) ** 2 + d[..., 2] ** 2)
    return float(e.mean()), float(np.percentile(e, 99))


def main():
    source, thumbnail = sys.argv[1], sys.argv[2]
    pair = (primaries_of(thumbnail), primaries_of(source))
    if source.lower().endswith((".heic", ".heif", ".avif")):
        linear, reference_full = heif_source(source, apple="--apple" in sys.argv)
        g, meta = None, {}
    elif "--apple" in sys.argv:
        linear, reference_full = apple_jpeg_source(source)
        g, meta = None, {}
    else:
        linear, g, meta = parts(source)
        reference_full = hdr(linear, g, meta)
    t_linear, t_g, t_meta = parts(thumbnail)
    meta = t_meta or meta
    height, width = t_linear.shape[:2]
    reference = shrink(reference_full, width, height)
    rows = [("thumbnail's HDR rendition", hdr(t_linear, t_g, t_meta or meta) if t_g is not None else None),
            ("gain map dropped (SDR base only)", hdr(t_linear, None, meta)),
            ("gain map flipped left to right", hdr(t_linear, t_g[:, ::-1] if t_g is not None else None, t_meta or meta))]
    print("%s -> %s (%dx%d), gain map %s, primaries %s -> %s" % (source, thumbnail, width, height, "present" if t_g is not None else "MISSING", pair[1], pair[0]))
    # The floor: the SDR base against the source's SDR picture shrunk the same way (the thumbnail's own
    # resampling, done by libvips in the JPEG's gamma, and its JPEG encoding).
    mean, p99 = delta(hdr(t_linear, None, meta), shrink(hdr(linear, None, meta), width, height), pair)
    print("  %-36s mean dE ITP %6.2f   99th percentile %6.2f" % ("(SDR base against the source's SDR)", mean, p99))
    for name, rendition in rows:
        if rendition is None:
            print("  %-36s none" % name)
            continue
        mean, p99 = delta(rendition, reference, pair)
        print("  %-36s mean dE ITP %6.2f   99th percentile %6.2f" % (name, mean, p99))


if __name__ == "__main__":
    main()
