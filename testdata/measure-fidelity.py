#!/usr/bin/env python3
"""Measures testdata/fidelity/* with external tools and writes expected.json.

    python3 testdata/measure-fidelity.py testdata/fidelity [WORKDIR]

Called by make-fidelity.sh; can be re-run alone. Every number comes from a
tool: heif-info/heif-convert (libheif, which applies irot/imir/clap), exiftool
(EXIF Orientation, applied only when the HEIF has no transform property, the
rule of issue 13), ffprobe/ffmpeg (durations, keyframes, first frames, cover
art), vipsheader/vipsthumbnail (what today's libvips path does). The only
things written by hand are the class descriptions, the canonical extension and
MIME type, and the expected `type`.
"""
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

DIR = sys.argv[1]
WORK = sys.argv[2] if len(sys.argv) > 2 else tempfile.mkdtemp()
os.makedirs(WORK, exist_ok=True)
os.chdir(DIR)


def run(*a, ok=False):
    r = subprocess.run([str(x) for x in a], capture_output=True)
    if r.returncode and not ok:
        raise SystemExit("%s failed: %s" % (" ".join(map(str, a)), r.stderr.decode(errors="replace")))
    return r


def out(*a):
    return run(*a).stdout.decode()


def W(n):
    return os.path.join(WORK, n)


# ---------------------------------------------------------------------------
# What each file is (hand-written); everything else is measured.
# ---------------------------------------------------------------------------
HEIC, AVIF = "image/heic", "image/avif"
C = {
    "heic-exif6-noirot.heic": dict(issue=13, cls="HEIC grid (3x2 tiles of 256) stored landscape, EXIF Orientation 6, no irot (iPhone 7 style)", type="image", ext="heic", mime=HEIC),
    "heic-irot.heic": dict(issue=13, cls="HEIC single image with irot 1 (90 deg anticlockwise)", type="image", ext="heic", mime=HEIC),
    "heic-imir.heic": dict(issue=13, cls="HEIC single image with imir axis 1 (libheif: left<->right)", type="image", ext="heic", mime=HEIC),
    "avif-clap.avif": dict(issue=13, cls="AVIF with clap (green margin cropped away)", type="image", ext="avif", mime=AVIF),
    "avif-irot.avif": dict(issue=13, cls="AVIF with irot 3 (270 deg anticlockwise)", type="image", ext="avif", mime=AVIF),
    "grid.heic": dict(issue=16, cls="HEIC grid, 3x2 tiles of 256x256, output 720x480 (last column/row cropped)", type="image", ext="heic", mime=HEIC),
    "grid-irot-exif6.heic": dict(issue=16, cls="HEIC grid with irot 3 and EXIF Orientation 6 (modern iPhone portrait: apply irot only)", type="image", ext="heic", mime=HEIC),
    "grid-clap.heic": dict(issue=16, cls="HEIC grid with clap", type="image", ext="heic", mime=HEIC),
    "sequence.avifs": dict(issue=13, cls="AVIF image sequence (ftyp avis, pict track, 5 frames; also a primary still item)", type="image", ext="avifs", mime="image/avif-sequence", animated=True),
    "sequence-msf1.heics": dict(issue=13, cls="HEIF image sequence (ftyp msf1, pict track, 5 HEVC frames, no meta box)", type="image", ext="heics", mime="image/heic-sequence", animated=True),
    "jpeg-12bit.jpg": dict(issue=13, cls="12-bit JPEG (SOF1, extended sequential, 4:4:4)", type="image", ext="jpg", mime="image/jpeg"),
    "ico-largest-third.ico": dict(issue=13, cls="ICO with 32, 16, 128 (PNG) and 48 px entries; the largest is the third", type="image", ext="ico", mime="image/vnd.microsoft.icon"),
    "tiff-float64.tif": dict(issue=13, cls="TIFF RGB 64-bit IEEE float per sample (valid; tiff2vips: samples out of range)", type="image", ext="tiff", mime="image/tiff"),
    "tiff-float16.tif": dict(issue=13, cls="TIFF RGB 16-bit IEEE float (half) per sample (valid; tiff2vips: unsupported tiff image type)", type="image", ext="tiff", mime="image/tiff"),
    "tiff-bigtiff.tif": dict(issue=13, cls="BigTIFF (magic 43, 8-byte offsets), 8-bit RGB: libvips reads it (found in the trial: sniffed as unknown)", type="image", ext="tiff", mime="image/tiff"),
    "tiff-planar-2pages.tif": dict(issue=13, cls="TIFF 16-bit RGB, planar (PlanarConfiguration 2), 2 pages: control, libvips reads it", type="image", ext="tiff", mime="image/tiff"),
    "html-named.jpg": dict(issue=13, cls="HTML error page saved as .jpg", type="file", ext="html", mime="text/html"),
    "xml-named.jpg": dict(issue=13, cls="XML error document saved as .jpg", type="file", ext="xml", mime="application/xml"),
    "svg-named.png": dict(issue=13, cls="SVG saved as .png", type="file", ext="svg", mime="image/svg+xml"),
    "text-named.png": dict(issue=13, cls="plain text saved as .png", type="file", ext="txt", mime="text/plain"),
    "empty.jpg": dict(issue=13, cls="zero-byte file named .jpg", type="file", ext="jpg", mime="application/octet-stream"),
    "black-first-key.mp4": dict(issue=13, cls="MP4 (H.264/AAC), keyframe 0 black, keyframe 2.08 s bright", type="video", ext="mp4", mime="video/mp4"),
    "black-first-key-cues.mkv": dict(issue=13, cls="Matroska with Cues, keyframe 0 black, keyframe 2.08 s bright", type="video", ext="mkv", mime="video/x-matroska"),
    "black-first-key-nocues.mkv": dict(issue=13, cls="Matroska without Cues and without Duration (muxed to a pipe), black first keyframe", type="video", ext="mkv", mime="video/x-matroska"),
    "black-first-key.webm": dict(issue=13, cls="WebM (VP9/Opus), keyframe 0 black, keyframe 2.08 s bright", type="video", ext="webm", mime="video/webm"),
    "black-first-key.ts": dict(issue=13, cls="MPEG-TS (no index), keyframe 0 black, keyframe 2.08 s bright", type="video", ext="ts", mime="video/mp2t"),
    "mpeg1-ps.mpg": dict(issue=13, cls="MPEG-1 system stream (MPEG-1 video, MP2): no duration in any header", type="video", ext="mpg", mime="video/mpeg"),
    "mpeg2-ps.mpg": dict(issue=13, cls="MPEG-2 program stream (VOB-style, MPEG-2 video, AC-3): no duration in any header", type="video", ext="mpg", mime="video/mpeg"),
    "mpeg2-ts-h264.ts": dict(issue=13, cls="MPEG-TS, 188-byte packets, H.264 + AC-3", type="video", ext="ts", mime="video/mp2t"),
    "avchd.m2ts": dict(issue=13, cls="AVCHD-style BDAV MPEG-TS, 192-byte packets (4-byte arrival timestamp), H.264 + AC-3", type="video", ext="m2ts", mime="video/mp2t"),
    "avchd.mts": dict(issue=13, cls="the same as avchd.m2ts under the camera's .mts name", type="video", ext="mts", mime="video/mp2t"),
    "qt-first-free.mov": dict(issue=13, cls="QuickTime without ftyp, first atom free", type="video", ext="mov", mime="video/quicktime"),
    "qt-first-wide.mov": dict(issue=13, cls="QuickTime without ftyp, first atom wide", type="video", ext="mov", mime="video/quicktime"),
    "qt-first-skip.mov": dict(issue=13, cls="QuickTime without ftyp, first atom skip", type="video", ext="mov", mime="video/quicktime"),
    "qt-first-mdat.mov": dict(issue=13, cls="QuickTime without ftyp, first atom mdat (moov at the end)", type="video", ext="mov", mime="video/quicktime"),
    "qt-first-moov.mov": dict(issue=13, cls="QuickTime without ftyp, first atom moov", type="video", ext="mov", mime="video/quicktime"),
    "qt-first-pnot.mov": dict(issue=13, cls="QuickTime without ftyp, first atom pnot (preview reference), then moov, mdat", type="video", ext="mov", mime="video/quicktime"),
    "adts-id3-apic.aac": dict(issue=13, cls="AAC in ADTS after an ID3v2.3 tag with an APIC cover", type="file", ext="aac", mime="audio/aac", audio=True),
    "cover-id3-apic.mp3": dict(issue=13, cls="MP3 with ID3v2.3 APIC cover", type="file", ext="mp3", mime="audio/mpeg", audio=True),
    "cover-covr.m4a": dict(issue=13, cls="M4A (AAC) with covr cover", type="file", ext="m4a", mime="audio/mp4", audio=True),
    "cover-picture.flac": dict(issue=13, cls="FLAC with a PICTURE metadata block", type="file", ext="flac", mime="audio/flac", audio=True),
    "cover-vorbis-picture.ogg": dict(issue=13, cls="Ogg Vorbis with a METADATA_BLOCK_PICTURE comment", type="file", ext="ogg", mime="audio/ogg", audio=True),
}

# ---------------------------------------------------------------------------
# Pixel measurements on an upright 8-bit sRGB picture
# ---------------------------------------------------------------------------
CORNERS = {"top_left": (0.03, 0.03), "top_right": (0.97, 0.03), "bottom_left": (0.03, 0.97), "bottom_right": (0.97, 0.97)}


def to_srgb8(src, dst):
    run("vips", "colourspace", src, dst, "srgb")
    if int(out("vipsheader", "-f", "bands", dst)) > 3:
        run("vips", "extract_band", dst, dst + ".3.v", 0, "--n", 3)
        shutil.move(dst + ".3.v", dst)


def look(png):
    """corner RGBs, marker location (red corner), mean luma (0-255)."""
    t = W("look.v")
    to_srgb8(png, t)
    w, h = int(out("vipsheader", "-f", "width", t)), int(out("vipsheader", "-f", "height", t))
    rgb = {}
    for k, (fx, fy) in CORNERS.items():
        x, y = min(w - 1, int(fx * w)), min(h - 1, int(fy * h))
        rgb[k] = [int(float(v)) for v in out("vips", "getpoint", t, x, y).split()[:3]]
    red = [k for k, (r, g, b) in rgb.items() if (r - 220) ** 2 + (g - 24) ** 2 + (b - 24) ** 2 < 30 ** 2]
    run("vips", "colourspace", t, W("grey.v"), "b-w")
    luma = round(float(out("vips", "avg", W("grey.v"))), 1)
    return {"width": w, "height": h, "corner_rgb": rgb, "marker": red[0] if len(red) == 1 else None,
            "mean_luma": luma}


def orient(png, o):
    """Applies EXIF orientation o to png (vips), returns the new path."""
    ops = {1: [], 2: [("flip", "horizontal")], 3: [("rot", "d180")], 4: [("flip", "vertical")],
           5: [("rot", "d90"), ("flip", "horizontal")], 6: [("rot", "d90")],
           7: [("rot", "d270"), ("flip", "horizontal")], 8: [("rot", "d270")]}[o]
    cur = png
    for i, (op, arg) in enumerate(ops):
        nxt = W("orient%d.v" % i)
        run("vips", op, cur, nxt, arg)
        cur = nxt
    return cur


def exif_orientation(p):
    j = json.loads(out("exiftool", "-j", "-n", "-Orientation", p))[0]
    return j.get("Orientation")


def vips_view(p):
    """What today's libvips path gives: loader, size, and vipsthumbnail -s 360."""
    r = run("vipsheader", "-f", "vips-loader", p, ok=True)
    if r.returncode:
        err = [l.strip() for l in r.stderr.decode(errors="replace").splitlines() if l.strip()]
        msg = " | ".join(err) if err else "failed"
        return {"reads": False, "error": re.sub(r"/tmp/magick-[^' ]+", "<tmp>", msg)}
    v = {"reads": True, "loader": r.stdout.decode().strip(),
         "width": int(out("vipsheader", "-f", "width", p)), "height": int(out("vipsheader", "-f", "height", p))}
    t = run("vipsthumbnail", "-s", "360", "-o", W("vt.png"), p, ok=True)
    if t.returncode:
        err = t.stderr.decode(errors="replace").strip().splitlines()
        v["thumbnail_error"] = err[-1] if err else "failed"
    else:
        lk = look(W("vt.png"))
        v["thumbnail"] = {"width": lk["width"], "height": lk["height"], "marker": lk["marker"],
                          "mean_luma": lk["mean_luma"]}
    return v


# ---------------------------------------------------------------------------
def heif_entry(p, e):
    info = run("heif-info", p, ok=True)
    txt = info.stdout.decode(errors="replace")
    dump = run("heif-info", "-d", p, ok=True).stdout.decode(errors="replace")
    m = re.search(r"image: (\d+)x(\d+) \(id=\d+\), primary", txt)
    e["libheif"] = {"reads": bool(m) and info.returncode == 0}
    boxes = re.findall(r"Box: (\w{4})", dump)
    e["boxes"] = sorted(set(b for b in boxes if b in ("irot", "imir", "clap", "grid", "thmb", "dimg", "colr", "pixi", "ispe", "hvcC", "av1C", "idat", "moov", "meta")))
    e["ftyp"] = open(p, "rb").read(12)[8:12].decode()
    if m:
        e["libheif"]["width"], e["libheif"]["height"] = int(m.group(1)), int(m.group(2))
        hc = run("heif-convert", p, W("h.png"), ok=True)
        if hc.returncode:
            e["libheif"] = {"reads": False, "heif_info_primary": [int(m.group(1)), int(m.group(2))],
                            "error": (hc.stdout + hc.stderr).decode(errors="replace").strip().splitlines()[-1]}
            return None
        # heif-convert copies the EXIF into the PNG; look at the raw pixels.
        run("vips", "copy", W("h.png"), W("h.v"))
        src = W("h.v")
        transforms = [b for b in ("clap", "irot", "imir") if b in e["boxes"]]
        o = exif_orientation(p)
        e["transforms"] = transforms
        e["exif_orientation"] = o
        if not transforms and o and o != 1:
            src = orient(src, o)
            e["display_rule"] = "no HEIF transform property: EXIF Orientation %d applied" % o
        elif transforms and o and o != 1:
            e["display_rule"] = "HEIF transforms applied by libheif; EXIF Orientation %d ignored" % o
        else:
            e["display_rule"] = "as decoded by libheif (transforms applied)"
        lk = look(src)
        e["coded_width"], e["coded_height"] = tile_canvas(dump, e)
        return lk
    return None


def tile_canvas(dump, e):
    """ispe values in the file: the largest is the coded picture (or grid)."""
    sizes = [(int(a), int(b)) for a, b in re.findall(r"image width: (\d+)\s+image height: (\d+)", dump)]
    return (max(sizes, key=lambda s: s[0] * s[1]) if sizes else (None, None))


def ffprobe(p):
    return json.loads(out("ffprobe", "-v", "error", "-show_format", "-show_streams", "-of", "json", p))


def ms(x):
    return None if x in (None, "N/A") else int(round(float(x) * 1000))


def first_frame(p, extra=()):
    run("ffmpeg", "-v", "error", "-y", *extra, "-i", p, "-map", "0:v:0", "-frames:v", "1", "-pix_fmt", "rgb24", W("f.png"))
    return W("f.png")


def video_entry(p, e):
    j = ffprobe(p)
    f = j["format"]
    vs = [s for s in j["streams"] if s["codec_type"] == "video" and not s.get("disposition", {}).get("attached_pic")]
    aus = [s for s in j["streams"] if s["codec_type"] == "audio"]
    v = vs[0]
    start = float(f.get("start_time", 0) or 0)
    pk = json.loads(out("ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries",
                        "packet=pts_time,dts_time,duration_time,flags", "-of", "json", p))["packets"]
    ends = [float(x["pts_time"]) + float(x.get("duration_time") or 0) for x in pk if x.get("pts_time") not in (None, "N/A")]
    firsts = [float(x["pts_time"]) for x in pk if x.get("pts_time") not in (None, "N/A")]
    kf = sorted(round((float(x["pts_time"]) - start) * 1000) for x in pk if "K" in x["flags"] and x.get("pts_time") not in (None, "N/A"))
    e["container"] = f["format_name"]
    e["ffprobe_format_duration_ms"] = ms(f.get("duration"))
    e["video_packets_span_ms"] = round((max(ends) - min(firsts)) * 1000)
    e["duration_ms"] = e["ffprobe_format_duration_ms"] if e["ffprobe_format_duration_ms"] else e["video_packets_span_ms"]
    rot = 0
    for sd in v.get("side_data_list", []):
        if "rotation" in sd:
            rot = int(sd["rotation"])
    e["video_codec"] = v["codec_name"]
    e["audio_codec"] = aus[0]["codec_name"] if aus else None
    e["display_width"] = v["height"] if abs(rot) in (90, 270) else v["width"]
    e["display_height"] = v["width"] if abs(rot) in (90, 270) else v["height"]
    e["keyframes_ms"] = kf
    lum = {}
    for k in kf[:4]:
        o = run("ffmpeg", "-v", "error", "-ss", "%.3f" % (k / 1000), "-i", p, "-map", "0:v:0", "-frames:v", "1",
                "-vf", "format=gray,scale=32:24", "-f", "rawvideo", "-")
        lum[str(k)] = round(sum(o.stdout) / max(1, len(o.stdout)), 1)
    e["mean_luma_at_keyframes"] = lum
    bright = [int(k) for k, l in lum.items() if l > 40]
    e["first_bright_keyframe_ms"] = bright[0] if bright else None
    at = (e["first_bright_keyframe_ms"] or 0) / 1000
    lk = look(first_frame(p, ["-ss", "%.3f" % at]))
    d = open(p, "rb").read()
    if p.endswith(".mkv") or p.endswith(".webm"):
        e["has_cues"] = b"\x1c\x53\xbb\x6b" in d
        e["has_duration_element"] = ebml_has_duration(d)
    if e["container"] == "mpegts":
        e["ts_packet_size"] = 192 if d[4] == 0x47 and d[196] == 0x47 else 188
    if p.endswith(".mov"):
        e["first_atom"] = d[4:8].decode()
        e["has_ftyp"] = b"ftyp" in d[:64]
    if p.endswith(".mpg"):
        e["pack_header"] = d[:4].hex()
        e["note"] = "MPEG-PS has no duration field: ffprobe estimates it from the timestamps at the end"
    return lk


def ebml_has_duration(d):
    """Segment > Info > Duration (0x4489) present?"""
    def vint(i, keep_marker):
        b, n, m = d[i], 1, 0x80
        while not b & m:
            m >>= 1
            n += 1
        v = b if keep_marker else b & (m - 1)
        for k in range(1, n):
            v = (v << 8) | d[i + k]
        return v, n, (v == (1 << (7 * n)) - 1)

    def children(s, e):
        i = s
        while i < e:
            eid, n, _ = vint(i, True)
            size, m, unknown = vint(i + n, False)
            body = i + n + m
            yield eid, body, (e if unknown else body + size)
            if unknown:
                return
            i = body + size

    for eid, b, e in children(0, len(d)):
        if eid == 0x18538067:
            for cid, cb, ce in children(b, e):
                if cid == 0x1549A966:
                    return any(x == 0x4489 for x, _, _ in children(cb, ce))
    return False


def audio_entry(p, e):
    j = ffprobe(p)
    f = j["format"]
    a = [s for s in j["streams"] if s["codec_type"] == "audio"][0]
    pics = [s for s in j["streams"] if s["codec_type"] == "video" and s.get("disposition", {}).get("attached_pic")]
    e["container"] = f["format_name"]
    e["audio_codec"] = a["codec_name"]
    e["duration_ms"] = ms(f.get("duration"))
    e["audio_stream_duration_ms"] = ms(a.get("duration"))
    d = open(p, "rb").read()
    if d[:3] == b"ID3":
        sz = d[6:10]
        n = 10 + ((sz[0] << 21) | (sz[1] << 14) | (sz[2] << 7) | sz[3])
        e["id3v2_bytes"] = n
        e["after_id3"] = "adts" if d[n] == 0xFF and d[n + 1] & 0xF6 == 0xF0 else "mpeg-audio" if d[n] == 0xFF else d[n:n + 4].hex()
    if pics:
        s = pics[0]
        e["cover"] = {"codec": s["codec_name"], "width": s["width"], "height": s["height"]}
        lk = look(first_frame(p))
        e["cover"]["marker"] = lk["marker"]
        e["cover"]["mean_luma"] = lk["mean_luma"]
        e["thumbnail_from"] = "cover art"
        return lk
    e["cover"] = None
    return None


result = {}
for name in sorted(os.listdir(".")):
    if name.endswith(".json") or name.endswith(".md"):
        continue
    c = C.get(name)
    if c is None:
        raise SystemExit("no class for " + name)
    data = open(name, "rb").read()
    e = {"class": c["cls"], "issue": c["issue"], "type": c["type"], "extension": c["ext"], "mime": c["mime"],
         "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
    lk = None
    ext = name.rsplit(".", 1)[1]
    if ext in ("heic", "avif", "avifs", "heics"):
        lk = heif_entry(name, e)
        if c.get("animated"):
            pj = ffprobe(name)
            vs = [s for s in pj["streams"] if s["codec_type"] == "video"]
            e["ffmpeg"] = {"reads": bool(vs), "frames": int(vs[0]["nb_frames"]) if vs else None,
                           "stream_duration_ms": ms(vs[0].get("duration")) if vs else None,
                           "format_duration_ms": ms(pj["format"].get("duration"))}
            e["frames"] = e["ffmpeg"]["frames"]
            ff = look(first_frame(name))
            e["ffmpeg"]["first_frame_marker"] = ff["marker"]
            if lk is None:
                lk = ff
                e["display_rule"] = "first frame of the pict track (ffmpeg)"
        e["vips"] = vips_view(name)
    elif name == "jpeg-12bit.jpg":
        pj = ffprobe(name)["streams"][0]
        e["bits_per_sample"] = int(pj["bits_per_raw_sample"])
        e["ffmpeg"] = {"reads": True, "codec": pj["codec_name"], "pix_fmt": pj["pix_fmt"]}
        lk = look(first_frame(name))
        e["vips"] = vips_view(name)
    elif name.endswith(".ico"):
        pj = ffprobe(name)
        ents = [{"index": s["index"], "codec": s["codec_name"], "width": s["width"], "height": s["height"]} for s in pj["streams"]]
        e["entries"] = ents
        big = max(ents, key=lambda s: s["width"] * s["height"])
        e["largest_entry_index"] = big["index"]
        run("ffmpeg", "-v", "error", "-y", "-i", name, "-map", "0:%d" % big["index"], "-frames:v", "1",
            "-pix_fmt", "rgb24", W("ico.png"))
        lk = look(W("ico.png"))
        e["ffmpeg"] = {"reads": True, "note": "one stream per entry; map the largest"}
        e["vips"] = vips_view(name)
    elif name.endswith(".tif"):
        r = run("vips", "magickload", name, W("tif.png"), ok=True)
        e["imagemagick_via_vips_magickload"] = r.returncode == 0
        lk = look(W("tif.png")) if r.returncode == 0 else None
        if lk is None and run("vips", "copy", name, W("tif.png"), ok=True).returncode == 0:
            lk = look(W("tif.png"))
        r = run("ffmpeg", "-v", "error", "-y", "-i", name, "-frames:v", "1", "-pix_fmt", "rgb24", W("tff.png"), ok=True)
        e["ffmpeg"] = {"reads": r.returncode == 0 and os.path.exists(W("tff.png"))}
        if e["ffmpeg"]["reads"]:
            e["ffmpeg"]["marker"] = look(W("tff.png"))["marker"]
            os.remove(W("tff.png"))
        e["pages"] = 2 if "2pages" in name else 1
        e["vips"] = vips_view(name)
    elif c["type"] == "file" and not c.get("audio"):
        e["size"] = len(data)
        e["thumbnail"] = False
        e["warning_expected"] = True
        e["file_reports"] = out("file", "-b", "--mime-type", name).strip() if shutil.which("file") else None
        e["vips"] = vips_view(name) if data else {"reads": False, "error": "empty"}
    elif c.get("audio"):
        lk = audio_entry(name, e)
    else:
        lk = video_entry(name, e)
    if c["type"] == "image":
        e["display_width"], e["display_height"] = lk["width"], lk["height"]
    if lk:
        e["thumbnail"] = True
        e["marker"] = lk["marker"]
        e["mean_luma"] = lk["mean_luma"]
        e["display_corner_rgb"] = lk["corner_rgb"]
        if c["type"] != "file":
            assert lk["marker"] == "top_left", (name, lk)
            assert lk["mean_luma"] > 40, (name, lk)
    elif "thumbnail" not in e:
        e["thumbnail"] = False
    result[name] = {k: v for k, v in e.items() if v is not None or k in ("cover",)}

with open("expected.json", "w") as f:
    json.dump(result, f, indent=2, sort_keys=True)
    f.write("\n")
