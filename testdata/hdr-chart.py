#!/usr/bin/env python3
"""The colour chart of the HDR round trip (issue 23), as SDR and as HDR code values.

  hdr-chart.py sdr OUT.png
      The chart as an 8-bit sRGB PNG (640x360): the 24 patches of a ColorChecker
      (sRGB D65 values published by BabelColor, 2012), 6x4 patches of 88x64 on a
      dark grey ground, a red square at the top-left and a blue one at the
      bottom-right (the fixtures' orientation markers).

  hdr-chart.py hdr OUT.png --transfer pq|hlg [--primaries bt2020|p3]
      The same chart as a 16-bit PNG of non-linear R'G'B' code values, what an
      HDR encoder is given: each sRGB value is linearised (IEC 61966-2-1), its
      BT.709 primaries converted to BT.2020 (or Display P3), SDR white put at
      203 cd/m2 (HDR reference white, ITU-R BT.2408), then encoded with the
      PQ inverse EOTF (SMPTE ST 2084), or for HLG through BT.2100's inverse OOTF
      (1000 cd/m2 display, system gamma 1.2) and the HLG OETF, so that SDR white
      is at 75 % HLG, as BT.2408 puts it.

  hdr-chart.py patches
      The 24 patches' sRGB values and where their centres are, as JSON (what
      the tests compare a thumbnail with).

Python 3 standard library only. Deterministic.
"""
import json
import math
import struct
import sys
import zlib

W, H = 640, 360
COLS, ROWS, PW, PH, GAP = 6, 4, 88, 64, 8
X0 = (W - (COLS * PW + (COLS - 1) * GAP)) // 2
Y0 = (H - (ROWS * PH + (ROWS - 1) * GAP)) // 2
GROUND = (50, 50, 50)
RED, BLUE, MARK = (220, 24, 24), (24, 40, 220), 30

# ColorChecker 24 in sRGB (D65), BabelColor "ColorChecker RGB and spectra" (2012 averages).
PATCHES = [
    ("dark skin", (115, 82, 68)), ("light skin", (194, 150, 130)), ("blue sky", (98, 122, 157)),
    ("foliage", (87, 108, 67)), ("blue flower", (133, 128, 177)), ("bluish green", (103, 189, 170)),
    ("orange", (214, 126, 44)), ("purplish blue", (80, 91, 166)), ("moderate red", (193, 90, 99)),
    ("purple", (94, 60, 108)), ("yellow green", (157, 188, 64)), ("orange yellow", (224, 163, 46)),
    ("blue", (56, 61, 150)), ("green", (70, 148, 73)), ("red", (175, 54, 60)),
    ("yellow", (231, 199, 31)), ("magenta", (187, 86, 149)), ("cyan", (8, 133, 161)),
    ("white 9.5", (243, 243, 242)), ("neutral 8", (200, 200, 200)), ("neutral 6.5", (160, 160, 160)),
    ("neutral 5", (122, 122, 121)), ("neutral 3.5", (85, 85, 85)), ("black 2", (52, 52, 52)),
]


def pixel(x, y):
    if x < MARK and y < MARK:
        return RED
    if x >= W - MARK and y >= H - MARK:
        return BLUE
    for i, (_, rgb) in enumerate(PATCHES):
        px, py = X0 + (i % COLS) * (PW + GAP), Y0 + (i // COLS) * (PH + GAP)
        if px <= x < px + PW and py <= y < py + PH:
            return rgb
    return GROUND


def png(path, rows, bits):
    """Writes RGB rows (lists of channel values) as a PNG of 8 or 16 bits per sample."""
    raw = bytearray()
    for row in rows:
        raw.append(0)
        raw += bytes(row) if bits == 8 else struct.pack(">%dH" % len(row), *row)

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n")
        f.write(chunk(b"IHDR", struct.pack(">IIBBBBB", W, H, bits, 2, 0, 0, 0)))
        f.write(chunk(b"IDAT", zlib.compress(bytes(raw), 9)))
        f.write(chunk(b"IEND", b""))


def srgb_to_linear(v):
    v /= 255
    return v / 12.92 if v <= 0.04045 else ((v + 0.055) / 1.055) ** 2.4


# Linear BT.709 RGB to BT.2020 (ITU-R BT.2087) and to Display P3 (D65 both).
TO_2020 = [[0.627404, 0.329283, 0.043313], [0.069097, 0.919540, 0.011362], [0.016391, 0.088013, 0.895595]]
TO_P3 = [[0.822462, 0.177538, 0.0], [0.033194, 0.966806, 0.0], [0.017083, 0.072397, 0.910520]]
LUMA_2020 = (0.2627, 0.6780, 0.0593)
LUMA_P3 = (0.228975, 0.691739, 0.079287)


def pq_inverse_eotf(nits):
    m1, m2 = 2610 / 16384, 2523 / 4096 * 128
    c1, c2, c3 = 3424 / 4096, 2413 / 4096 * 32, 2392 / 4096 * 32
    y = (max(0.0, nits) / 10000) ** m1
    return ((c1 + c2 * y) / (1 + c3 * y)) ** m2


def hlg_oetf(e):
    a = 0.17883277
    b, c = 1 - 4 * a, 0.5 - a * math.log(4 * a)
    return math.sqrt(3 * e) if e <= 1 / 12 else a * math.log(12 * e - b) + c


def hdr_code(rgb, transfer, primaries):
    matrix, luma = (TO_2020, LUMA_2020) if primaries == "bt2020" else (TO_P3, LUMA_P3)
    lin = [srgb_to_linear(v) for v in rgb]
    wide = [sum(matrix[r][k] * lin[k] for k in range(3)) for r in range(3)]
    nits = [203.0 * v for v in wide]
    if transfer == "pq":
        codes = [pq_inverse_eotf(v) for v in nits]
    else:
        # Display light (1000 cd/m2 peak, gamma 1.2) back to scene light: Yd = Lw * Ys^gamma.
        lw, gamma = 1000.0, 1.2
        yd = sum(l * v for l, v in zip(luma, nits)) / lw
        ys = yd ** (1 / gamma) if yd > 0 else 0.0
        scene = [(v / lw) / (ys ** (gamma - 1)) if ys > 0 else 0.0 for v in nits]
        codes = [hlg_oetf(min(1.0, max(0.0, v))) for v in scene]
    return [int(round(min(1.0, max(0.0, c)) * 65535)) for c in codes]


def main():
    mode = sys.argv[1]
    if mode == "patches":
        out = []
        for i, (name, rgb) in enumerate(PATCHES):
            px, py = X0 + (i % COLS) * (PW + GAP), Y0 + (i // COLS) * (PH + GAP)
            out.append({"name": name, "srgb": rgb, "x": (px + PW / 2) / W, "y": (py + PH / 2) / H, "w": PW / W, "h": PH / H})
        json.dump(out, sys.stdout, indent=1)
        print()
        return
    path = sys.argv[2]
    if mode == "sdr":
        png(path, [[c for x in range(W) for c in pixel(x, y)] for y in range(H)], 8)
        return
    transfer = sys.argv[sys.argv.index("--transfer") + 1]
    primaries = sys.argv[sys.argv.index("--primaries") + 1] if "--primaries" in sys.argv else "bt2020"
    cache = {}
    rows = []
    for y in range(H):
        row = []
        for x in range(W):
            rgb = pixel(x, y)
            if rgb not in cache:
                cache[rgb] = hdr_code(rgb, transfer, primaries)
            row += cache[rgb]
        rows.append(row)
    png(path, rows, 16)


if __name__ == "__main__":
    main()
