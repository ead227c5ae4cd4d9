#!/usr/bin/env python3
"""An Ultra HDR JPEG made from a real photo, for issue 54's measurements (no
Ultra HDR phone photo with a licence that allows committing it was found): the
photo as its SDR base, unchanged, and a gain map the way phones make them (a
quarter of the base's size, smooth, boosting the highlights): the base's
luminance blurred (sigma 4 px at the map's scale), mapped so that light above
mid-grey gets up to 2 stops (GainMapMax 2), encoded as a grey JPEG at Q85, with
the same hdrgm XMP and MPF layout as testdata/make-spatial.py's fixtures.

    python3 bench/make-ultrahdr-photo.py PHOTO.jpg OUT.jpg
"""
import importlib.util
import os
import subprocess
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("make_spatial", os.path.join(here, "..", "testdata", "make-spatial.py"))
spatial = importlib.util.module_from_spec(spec)
spec.loader.exec_module(spatial)


def main():
    photo, out = sys.argv[1], sys.argv[2]
    work = tempfile.mkdtemp(prefix="ultrahdr-photo.")
    small = os.path.join(work, "small.v")
    subprocess.run(["vips", "resize", photo, small, "0.25"], check=True)
    grey = os.path.join(work, "grey.v")
    subprocess.run(["vips", "colourspace", small, grey, "b-w"], check=True)
    blurred = os.path.join(work, "blurred.v")
    subprocess.run(["vips", "gaussblur", grey, blurred, "4"], check=True)
    # gain = clip((v - 128) * 2, 0, 255): highlights boosted, shadows not.
    mapped = os.path.join(work, "mapped.v")
    subprocess.run(["vips", "linear", "--uchar", "--", blurred, mapped, "2", "-256"], check=True)
    gain = os.path.join(work, "gain.jpg")
    subprocess.run(["vips", "copy", mapped, gain + "[Q=85,strip]"], check=True)
    gain_jpeg = open(gain, "rb").read()
    gain_jpeg = gain_jpeg[:2] + spatial.segment(0xE1, spatial.xmp(
        'xmlns:hdrgm="http://ns.adobe.com/hdr-gain-map/1.0/" hdrgm:Version="1.0" hdrgm:GainMapMin="0" hdrgm:GainMapMax="2" '
        'hdrgm:Gamma="1" hdrgm:OffsetSDR="0.015625" hdrgm:OffsetHDR="0.015625" hdrgm:HDRCapacityMin="0" hdrgm:HDRCapacityMax="2" '
        'hdrgm:BaseRenditionIsHDR="False">')) + gain_jpeg[2:]
    primary = open(photo, "rb").read()
    head = spatial.segment(0xE1, spatial.xmp('xmlns:hdrgm="http://ns.adobe.com/hdr-gain-map/1.0/" hdrgm:Version="1.0">'))
    size = len(primary) + len(head) + len(spatial.segment(0xE2, spatial.mpf(0, 0, 0)))
    at = 2
    while primary[at] == 0xFF and primary[at + 1] in (0xE0, 0xE1):
        at += 2 + int.from_bytes(primary[at + 2:at + 4], "big")
    mpf_at = at + len(head) + 4 + 4
    whole = primary[:at] + head + spatial.segment(0xE2, spatial.mpf(size, len(gain_jpeg), size - mpf_at)) + primary[at:]
    assert len(whole) == size
    open(out, "wb").write(whole + gain_jpeg)


if __name__ == "__main__":
    main()
