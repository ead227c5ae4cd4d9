#!/usr/bin/env python3
"""Compares a `share ingest --report` file with testdata/fidelity/expected.json
and prints one line per fixture that comes out wrong (what a user would see):

    share ingest --container /tmp/c --report /tmp/r.json testdata/fidelity
    python3 testdata/check-fidelity.py [--all] /tmp/r.json [testdata/fidelity/expected.json]

With --all, fixtures missing from the report count as wrong (use it when the
whole folder was ingested).

Checks, per issue 13: status (a valid file is not refused), type, extension,
MIME type, displayed width/height, duration (within 2 % or 50 ms), and that the
thumbnail exists when one is expected, is upright (red marker at its top-left,
sampled 3 % in) and not black (mean luma > 40). Exit status 1 when any
fixture is wrong. Needs vips (to sample thumbnails).
"""
import json
import os
import subprocess
import sys
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
args = [a for a in sys.argv[1:] if a != "--all"]
report = json.load(open(args[0]))
expected = json.load(open(args[1] if len(args) > 1 else os.path.join(HERE, "fidelity", "expected.json")))


def path_of(url):
    return urllib.parse.unquote(urllib.parse.urlparse(url).path) if url else None


def thumb_look(p):
    def v(*a):
        return subprocess.run(["vips", *a], check=True, capture_output=True).stdout.decode()
    w = int(subprocess.run(["vipsheader", "-f", "width", p], check=True, capture_output=True).stdout)
    h = int(subprocess.run(["vipsheader", "-f", "height", p], check=True, capture_output=True).stdout)
    r, g, b = [int(float(x)) for x in v("getpoint", p, str(int(0.03 * w)), str(int(0.03 * h))).split()[:3]]
    luma = float(v("avg", p))
    return w, h, (r - 220) ** 2 + (g - 24) ** 2 + (b - 24) ** 2 < 45 ** 2, luma


bad = 0
seen = set()
for it in report["items"]:
    name = os.path.basename(it["source"])
    e = expected.get(name)
    if e is None:
        continue
    seen.add(name)
    problems = []
    if it["status"] != "ingested":
        problems.append("refused (%s: %s)" % (it.get("stage"), it.get("reason") or it.get("error")))
    else:
        if it.get("type") != e["type"]:
            problems.append("type %s, expected %s" % (it.get("type"), e["type"]))
        ext = os.path.splitext(path_of(it["path"]) or "")[1].lstrip(".").lower()
        if ext != e["extension"] and not (ext in ("tif", "tiff") and e["extension"] in ("tif", "tiff")):
            problems.append("extension .%s, expected .%s" % (ext, e["extension"]))
        if it.get("mimeType") != e["mime"]:
            problems.append("mime %s, expected %s" % (it.get("mimeType"), e["mime"]))
        if e.get("display_width") and (it.get("width"), it.get("height")) != (e["display_width"], e["display_height"]):
            problems.append("size %sx%s, expected %dx%d" % (it.get("width"), it.get("height"), e["display_width"], e["display_height"]))
        if e.get("duration_ms"):
            d = it.get("duration")
            if d is None:
                problems.append("no duration, expected %d ms" % e["duration_ms"])
            elif abs(d - e["duration_ms"]) > max(50, 0.02 * e["duration_ms"]):
                problems.append("duration %d ms, expected %d ms" % (d, e["duration_ms"]))
        t = path_of(it.get("thumbnail"))
        if e.get("thumbnail") and not t:
            problems.append("no thumbnail")
        elif t and os.path.exists(t) and e.get("thumbnail"):
            w, h, red, luma = thumb_look(t)
            if luma <= 40:
                problems.append("black thumbnail (mean %.0f)" % luma)
            elif not red:
                problems.append("thumbnail not upright (no marker at top-left, %dx%d)" % (w, h))
    if problems:
        bad += 1
        print("%-28s %s" % (name, "; ".join(problems)))
missing = sorted(set(expected) - seen) if "--all" in sys.argv else []
for m in missing:
    print("%-28s not in the report" % m)
print("%d of %d fixtures wrong" % (bad + len(missing), len(expected) if "--all" in sys.argv else len(seen)))
sys.exit(1 if bad or missing else 0)
