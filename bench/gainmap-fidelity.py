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


def shrink(rgb, width, height):
    return np.stack([np.asarray(Image.fromarray(rgb[:, :, c].astype(np.float32), "F").resize((width, height), Image.BOX)) for c in range(3)], axis=2)


def ictcp(nits):
    """BT.709 linear RGB in cd/m2 -> BT.2100 ICtCp (PQ)."""
    to2020 = np.array([[0.6274, 0.3293, 0.0433], [0.0691, 0.9195, 0.0114], [0.0164, 0.0880, 0.8956]])
    rgb = nits @ to2020.T
    lms = rgb @ (np.array([[1688, 2146, 262], [683, 2951, 462], [99, 309, 3688]]) / 4096).T
    y = np.clip(lms / 10000, 0, 1)
    m1, m2, c1, c2, c3 = 0.1593017578125, 78.84375, 0.8359375, 18.8515625, 18.6875
    pq = ((c1 + c2 * y ** m1) / (1 + c3 * y ** m1)) ** m2
    return pq @ (np.array([[2048, 2048, 0], [6610, -13613, 7003], [17933, -17390, -543]]) / 4096).T


def delta(a, b):
    d = ictcp(a) - ictcp(b)
    e = 720 * np.sqrt(d[..., 0] ** 2 + (0.5 * d[..., 1]) ** 2 + d[..., 2] ** 2)
    return float(e.mean()), float(np.percentile(e, 99))


def main():
    source, thumbnail = sys.argv[1], sys.argv[2]
    linear, g, meta = parts(source)
    reference_full = hdr(linear, g, meta)
    t_linear, t_g, t_meta = parts(thumbnail)
    height, width = t_linear.shape[:2]
    reference = shrink(reference_full, width, height)
    rows = [("thumbnail's HDR rendition", hdr(t_linear, t_g, t_meta or meta) if t_g is not None else None),
            ("gain map dropped (SDR base only)", hdr(t_linear, None, meta)),
            ("gain map flipped left to right", hdr(t_linear, t_g[:, ::-1] if t_g is not None else None, t_meta or meta))]
    print("%s -> %s (%dx%d), gain map %s" % (source, thumbnail, width, height, "present" if t_g is not None else "MISSING"))
    # The floor: the SDR base against the source's SDR picture shrunk the same way (the thumbnail's own
    # resampling, done by libvips in the JPEG's gamma, and its JPEG encoding).
    mean, p99 = delta(hdr(t_linear, None, meta), shrink(hdr(linear, None, meta), width, height))
    print("  %-36s mean dE ITP %6.2f   99th percentile %6.2f" % ("(SDR base against the source's SDR)", mean, p99))
    for name, rendition in rows:
        if rendition is None:
            print("  %-36s none" % name)
            continue
        mean, p99 = delta(rendition, reference)
        print("  %-36s mean dE ITP %6.2f   99th percentile %6.2f" % (name, mean, p99))


if __name__ == "__main__":
    main()
