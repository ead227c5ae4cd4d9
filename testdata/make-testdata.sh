#!/usr/bin/env bash
# Regenerates testdata/media/, testdata/media/expected.json and testdata/sample-drop/
# from scratch. Run by hand (not by CI):
#
#     bash testdata/make-testdata.sh
#
# Needs: ffmpeg/ffprobe 5.1 (libx264, libx265, libvpx-vp9, libopus, libvorbis,
# libmp3lame, aac), vips 8.14 (with libheif + x265/aom, libjxl, libwebp, poppler),
# exiftool, python3 (stdlib only). ImageMagick is not used.
#
# Everything is deterministic: fixed seeds, single-threaded encoders, bitexact
# muxing, no metadata copied from inputs, fixed timestamps in archives.
# Running it twice must give byte-identical files (checked with sha256sum).
# Note: the bytes depend on the tool versions (x264/x265/libvpx/libjxl/aom/zlib
# builds); with the same Debian 12 packages they are reproducible.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
MEDIA="$HERE/media"
DROP="$HERE/sample-drop"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

export LC_ALL=C.UTF-8 TZ=UTC PYTHONHASHSEED=0 VIPS_CONCURRENCY=1

for tool in ffmpeg ffprobe vips vipsheader exiftool python3; do
  command -v "$tool" >/dev/null || { echo "missing tool: $tool" >&2; exit 1; }
done

rm -rf "$MEDIA" "$DROP"
mkdir -p "$MEDIA" "$DROP/chat"

# ---------------------------------------------------------------------------
# 1. Raw pixel sources (pure python, seeded) -> PPM/PGM in $WORK
# ---------------------------------------------------------------------------
python3 - "$WORK" <<'PY'
import math, random, struct, sys, os
W = sys.argv[1]

def ppm(path, w, h, px, maxval=255):
    with open(os.path.join(W, path), "wb") as f:
        f.write(b"P6\n%d %d\n%d\n" % (w, h, maxval))
        f.write(px)

def pgm(path, w, h, px):
    with open(os.path.join(W, path), "wb") as f:
        f.write(b"P5\n%d %d\n255\n" % (w, h))
        f.write(px)

def clamp(v):
    return 0 if v < 0 else 255 if v > 255 else int(v)

RED = (220, 24, 24)
BLUE = (24, 48, 220)

def landscape(w, h, seed, hue=0.0, markers=True):
    """A synthetic 'photo': sky gradient, sun, wavy hills, noisy grass.
    Markers (when upright): red square at top-left, blue at bottom-right."""
    rnd = random.Random(seed)
    ph1, ph2 = rnd.uniform(0, 6.28), rnd.uniform(0, 6.28)
    sunx, suny, sunr = rnd.uniform(0.55, 0.8) * w, 0.22 * h, 0.07 * min(w, h)
    m = max(8, min(w, h) // 10)          # marker size
    out = bytearray(w * h * 3)
    i = 0
    for y in range(h):
        fy = y / h
        for x in range(w):
            hor = h * 0.55 + h * 0.06 * math.sin(x / (w / 12.0) + ph1) + h * 0.03 * math.sin(x / (w / 37.0) + ph2)
            n = rnd.randint(-10, 10)
            if y < hor:
                d = math.hypot(x - sunx, y - suny)
                if d < sunr:
                    r, g, b = 250, 236, 170
                else:
                    glow = max(0.0, 1.0 - d / (sunr * 4))
                    r = 110 + 70 * fy + 90 * glow + hue * 40
                    g = 150 + 50 * fy + 60 * glow
                    b = 205 - 25 * fy - 40 * glow - hue * 40
                    n //= 3
            else:
                t = (y - hor) / (h - hor + 1)
                tex = 18 * math.sin(x * 0.21 + y * 0.13) * math.sin(y * 0.37 - x * 0.05)
                r = 70 + 60 * t + tex + hue * 60
                g = 120 - 30 * t + tex
                b = 45 + 10 * t + tex / 2
            if markers and x < m and y < m:
                r, g, b = RED; n = 0
            elif markers and x >= w - m and y >= h - m:
                r, g, b = BLUE; n = 0
            out[i] = clamp(r + n); out[i + 1] = clamp(g + n); out[i + 2] = clamp(b + n)
            i += 3
    return bytes(out)

ppm("land.ppm", 640, 480, landscape(640, 480, 1))
ppm("land2.ppm", 640, 480, landscape(640, 480, 2, hue=0.6))    # different photo (chat/IMG_0001.JPG)
ppm("land3.ppm", 640, 480, landscape(640, 480, 3, hue=0.3))    # exif3
ppm("land4.ppm", 320, 240, landscape(320, 240, 4, hue=0.8))    # no-extension-jpeg
ppm("land5.ppm", 320, 240, landscape(320, 240, 5, hue=0.1))    # jpeg-named.png
ppm("port.ppm", 480, 640, landscape(480, 640, 6))               # exif6 / exif8 upright
ppm("small.ppm", 128, 96, landscape(128, 96, 7))                # bmp / tiff

# screenshot: flat UI
w, h = 600, 400
s = bytearray(w * h * 3)
def rect(x0, y0, x1, y1, c):
    for y in range(y0, y1):
        for x in range(x0, x1):
            j = (y * w + x) * 3
            s[j:j + 3] = bytes(c)
rect(0, 0, w, h, (246, 246, 248))
rect(0, 0, w, 28, (222, 222, 226))
for k, c in enumerate([(255, 95, 87), (254, 188, 46), (40, 200, 64)]):
    rect(10 + k * 18, 9, 20 + k * 18, 19, c)
rect(0, 28, 150, h, (232, 234, 240))
for k in range(8):
    rect(16, 48 + k * 28, 16 + 60 + (k * 37) % 60, 58 + k * 28, (150, 150, 160))
rect(170, 48, 580, 120, (66, 133, 244))
rect(186, 70, 400, 82, (255, 255, 255))
rect(186, 92, 320, 100, (200, 220, 255))
for k in range(9):
    rect(170, 140 + k * 26, 170 + 200 + (k * 53) % 210, 150 + k * 26, (60, 60, 70))
rect(480, 330, 580, 370, (52, 168, 83))
rect(0, 0, 24, 24, RED)           # markers like the photos
rect(w - 24, h - 24, w, h, BLUE)
ppm("screenshot.ppm", w, h, bytes(s))

# alpha: coloured disc with soft edge on transparent background
w = h = 256
rgb = bytearray(w * h * 3); a = bytearray(w * h)
for y in range(h):
    for x in range(w):
        d = math.hypot(x - 127.5, y - 127.5)
        j = y * w + x
        rgb[3 * j:3 * j + 3] = bytes((clamp(255 * x / w), clamp(255 * y / h), 160))
        if d < 90:
            a[j] = 255
        elif d < 120:
            a[j] = clamp(255 * (120 - d) / 30)
        else:
            a[j] = 0
        if 100 <= x < 156 and 20 <= y < 40:
            a[j] = 128                   # a half-transparent bar
ppm("alpha-rgb.ppm", w, h, bytes(rgb))
pgm("alpha-a.pgm", w, h, bytes(a))

# 16-bit gradient
w, h = 128, 128
p = bytearray()
for y in range(h):
    for x in range(w):
        # linear ramps with non-zero low bytes (real 16-bit data, but compresses well)
        p += struct.pack(">HHH", 600 + x * 500 + y * 3, 900 + y * 500 + x * 3, 20000 + (x + y) * 131)
ppm("png16.ppm", w, h, bytes(p), 65535)

# 1x1 and 2000x10
ppm("tiny.ppm", 1, 1, bytes((255, 128, 0)))
w, h = 2000, 10
p = bytearray()
for y in range(h):
    for x in range(w):
        p += bytes((clamp(255 * x / (w - 1)), clamp(128 + 100 * math.sin(x / 50.0)), clamp(255 - 255 * x / (w - 1))))
ppm("wide.ppm", w, h, bytes(p))
PY

# ---------------------------------------------------------------------------
# 2. Images
# ---------------------------------------------------------------------------
cd "$MEDIA"
V=vips
$V jpegsave "$WORK/land.ppm" photo.jpg --Q 80 --strip --optimize-coding
# A realistic camera-ish EXIF block (capture date, camera, GPS) on photo.jpg only.
exiftool -q -overwrite_original -n \
  -Make=ShareIngest -Model="Synthetic Camera 1" -Orientation=1 \
  -DateTimeOriginal="2024:05:17 10:30:00" -CreateDate="2024:05:17 10:30:00" -OffsetTimeOriginal="+02:00" \
  -GPSLatitude=48.8584 -GPSLatitudeRef=N -GPSLongitude=2.2945 -GPSLongitudeRef=E \
  photo.jpg

# Orientation cases. The stored pixels are the upright picture rotated the opposite
# way, so that after applying the EXIF orientation the red marker is top-left.
$V rot "$WORK/port.ppm" "$WORK/exif6.v" d270          # stored 640x480, display 480x640
$V jpegsave "$WORK/exif6.v" portrait-exif6.jpg --Q 80 --strip --optimize-coding
exiftool -q -overwrite_original -n -Orientation=6 portrait-exif6.jpg
$V rot "$WORK/land3.ppm" "$WORK/exif3.v" d180         # stored 640x480, display 640x480
$V jpegsave "$WORK/exif3.v" exif3.jpg --Q 80 --strip --optimize-coding
exiftool -q -overwrite_original -n -Orientation=3 exif3.jpg
$V rot "$WORK/port.ppm" "$WORK/exif8.v" d90           # stored 640x480, display 480x640
$V jpegsave "$WORK/exif8.v" exif8.jpg --Q 80 --strip --optimize-coding
exiftool -q -overwrite_original -n -Orientation=8 exif8.jpg

$V pngsave "$WORK/screenshot.ppm" screenshot.png --compression 9 --filter all --strip
$V bandjoin "$WORK/alpha-rgb.ppm $WORK/alpha-a.pgm" "$WORK/alpha.v"
$V copy "$WORK/alpha.v" "$WORK/alpha2.v" --interpretation srgb
$V pngsave "$WORK/alpha2.v" alpha.png --compression 9 --filter all --strip

# Animated GIF: 4 frames of 200x100, 250 ms each, looping forever.
ffmpeg -hide_banner -loglevel error -nostdin -y -f lavfi \
  -i "testsrc2=s=200x100:r=4:d=1,split[a][b];[a]palettegen=max_colors=64:stats_mode=full[p];[b][p]paletteuse=dither=none" \
  -map_metadata -1 -fflags +bitexact -loop 0 -f gif animated.gif

$V webpsave "$WORK/land.ppm" image.webp --Q 60 --strip
$V heifsave "$WORK/land.ppm" image.heic --Q 40 --bitdepth 8 --compression hevc --strip
$V heifsave "$WORK/land.ppm" image.avif --Q 40 --bitdepth 8 --compression av1 --encoder aom --effort 4 --strip
$V tiffsave "$WORK/small.ppm" image.tiff --compression deflate --predictor horizontal --strip
$V jxlsave "$WORK/land.ppm" image.jxl --Q 60 --effort 7 --strip
$V colourspace "$WORK/land.ppm" "$WORK/gray.v" b-w
$V jpegsave "$WORK/gray.v" gray.jpg --Q 80 --strip --optimize-coding
$V resize "$WORK/land.ppm" "$WORK/half.v" 0.5
$V colourspace "$WORK/half.v" "$WORK/cmyk.v" cmyk
$V jpegsave "$WORK/cmyk.v" cmyk.jpg --Q 80 --strip --optimize-coding
$V pngsave "$WORK/png16.ppm" png16.png --compression 9 --filter all --strip --bitdepth 16
$V jpegsave "$WORK/land.ppm" progressive.jpg --Q 80 --strip --interlace
$V pngsave "$WORK/tiny.ppm" tiny-1x1.png --compression 9 --filter all --strip
$V pngsave "$WORK/wide.ppm" wide-2000x10.png --compression 9 --filter all --strip

# BMP (vips has no bmpsave without ImageMagick): written by hand, 24-bit BI_RGB, bottom-up.
python3 - "$WORK/small.ppm" image.bmp <<'PY'
import struct, sys
data = open(sys.argv[1], "rb").read()
parts = data.split(b"\n", 3)
w, h = map(int, parts[1].split()); px = parts[3]
row = (w * 3 + 3) & ~3
body = bytearray()
for y in range(h - 1, -1, -1):
    line = px[y * w * 3:(y + 1) * w * 3]
    bgr = bytearray(len(line))
    bgr[0::3] = line[2::3]; bgr[1::3] = line[1::3]; bgr[2::3] = line[0::3]
    body += bgr + b"\0" * (row - w * 3)
hdr = struct.pack("<2sIHHI", b"BM", 14 + 40 + len(body), 0, 0, 54)
dib = struct.pack("<IiiHHIIiiII", 40, w, h, 1, 24, 0, len(body), 2835, 2835, 0, 0)
open(sys.argv[2], "wb").write(hdr + dib + body)
PY

# ---------------------------------------------------------------------------
# 3. Video and audio
# ---------------------------------------------------------------------------
FF=(ffmpeg -hide_banner -loglevel error -nostdin -y)
BX=(-map_metadata -1 -fflags +bitexact -flags:v +bitexact -flags:a +bitexact)
X264=(-c:v libx264 -preset medium -profile:v high -pix_fmt yuv420p -threads 1 -sc_threshold 0)
AAC=(-c:a aac -b:a 32k -ac 1 -ar 48000)
# Upright scene with orientation markers: red box top-left, blue box bottom-right,
# a moving testsrc2 inset in the middle. $1=WxH of the upright picture.
scene() {
  local w=${1%x*} h=${1#*x} d=$2
  echo "color=c=0x707880:s=${w}x${h}:r=25:d=${d}[bg];testsrc2=s=$((w/2))x$((h/2)):r=25:d=${d}[fg];[bg][fg]overlay=x=$((w/4)):y=$((h/4)),drawbox=x=0:y=0:w=$((w/6)):h=$((w/6)):color=0xDC1818:t=fill,drawbox=x=$((w-w/6)):y=$((h-w/6)):w=$((w/6)):h=$((w/6)):color=0x1830DC:t=fill"
}
TONE="sine=frequency=440:sample_rate=48000"

# 2.0 s H.264 + AAC, GOP 25 -> keyframes at 0 s and 1 s. moov at the end (no faststart).
"${FF[@]}" -f lavfi -i "$(scene 320x240 2)" -f lavfi -i "$TONE:duration=2" \
  "${X264[@]}" -crf 32 -g 25 -keyint_min 25 "${AAC[@]}" "${BX[@]}" -t 2 clip-h264.mp4

# Portrait: upright 240x320 picture stored transposed as 320x240, with a display
# matrix that rotates 90 deg clockwise (like an iPhone portrait video).
# NOTE ffmpeg 5.1: "-metadata:s:v:0 rotate=90" writes a COUNTER-clockwise matrix
# (ffprobe rotation=90); "rotate=-90" writes the clockwise one (ffprobe rotation=-90),
# which is what iPhones produce. (ffmpeg >= 6: -display_rotation -90.)
"${FF[@]}" -f lavfi -i "$(scene 240x320 2),transpose=2" -f lavfi -i "$TONE:duration=2" \
  "${X264[@]}" -crf 32 -g 25 -keyint_min 25 "${AAC[@]}" "${BX[@]}" -t 2 "$WORK/portrait-norot.mp4"
"${FF[@]}" -i "$WORK/portrait-norot.mp4" -map 0 -c copy -metadata:s:v:0 rotate=-90 "${BX[@]}" portrait-rot90.mp4

# 0.4 s, video only (10 frames).
"${FF[@]}" -f lavfi -i "$(scene 320x240 0.4)" "${X264[@]}" -crf 32 -g 25 "${BX[@]}" -t 0.4 short-0.4s.mp4

# HEVC, hvc1 tag, 1 s.
"${FF[@]}" -f lavfi -i "$(scene 320x240 1)" -c:v libx265 -preset medium -crf 34 -pix_fmt yuv420p \
  -x265-params "log-level=error:pools=1:frame-threads=1:wpp=0" -tag:v hvc1 "${BX[@]}" -t 1 clip-hevc.mp4

# VP9 + Opus in WebM, 1 s.
"${FF[@]}" -f lavfi -i "$(scene 320x240 1)" -f lavfi -i "$TONE:duration=1" \
  -c:v libvpx-vp9 -b:v 0 -crf 50 -deadline good -cpu-used 4 -row-mt 0 -threads 1 -pix_fmt yuv420p -g 25 \
  -c:a libopus -b:a 24k -ac 1 "${BX[@]}" -t 1 clip-vp9.webm

# QuickTime .mov, H.264 + AAC, 1 s.
"${FF[@]}" -f lavfi -i "$(scene 320x240 1)" -f lavfi -i "$TONE:duration=1" \
  "${X264[@]}" -crf 32 -g 25 "${AAC[@]}" "${BX[@]}" -t 1 -f mov clip.mov

# fade-in: 1.5 s pure black then a bright picture; GOP 12 at 25 fps, no scene-cut
# keyframes -> keyframes at 0, 0.48, 0.96, 1.44 (still black), 1.92 s (bright).
"${FF[@]}" -f lavfi \
  -i "color=c=black:s=320x240:r=25:d=1.5[k];testsrc2=s=320x240:r=25:d=0.5,colorlevels=romin=0.55:gomin=0.55:bomin=0.55[b];[k][b]concat=n=2:v=1:a=0" \
  "${X264[@]}" -crf 32 -g 12 -keyint_min 12 "${BX[@]}" -t 2 fade-in.mp4

# Matroska, H.264 + AAC, 1 s.
"${FF[@]}" -f lavfi -i "$(scene 320x240 1)" -f lavfi -i "$TONE:duration=1" \
  "${X264[@]}" -crf 32 -g 25 "${AAC[@]}" "${BX[@]}" -t 1 clip.mkv

# AVI: MPEG-4 part 2 (XVID fourcc) + MP3, 1 s.
"${FF[@]}" -f lavfi -i "$(scene 320x240 1)" -f lavfi -i "$TONE:duration=1" \
  -c:v mpeg4 -q:v 20 -g 25 -vtag XVID -pix_fmt yuv420p -threads 1 \
  -c:a libmp3lame -b:a 32k -ac 1 "${BX[@]}" -t 1 clip.avi

# 3GP: H.264 baseline 176x144 + AAC 1 s.
"${FF[@]}" -f lavfi -i "$(scene 176x144 1)" -f lavfi -i "$TONE:duration=1" \
  -c:v libx264 -preset medium -profile:v baseline -pix_fmt yuv420p -threads 1 -crf 32 -g 25 \
  -c:a aac -b:a 24k -ac 1 -ar 16000 "${BX[@]}" -t 1 -f 3gp clip.3gp

# Audio
"${FF[@]}" -f lavfi -i "$TONE:duration=1" -c:a libmp3lame -b:a 32k -ac 1 -ar 44100 "${BX[@]}" audio.mp3
"${FF[@]}" -f lavfi -i "$TONE:duration=1" "${AAC[@]}" "${BX[@]}" -f ipod audio.m4a
"${FF[@]}" -f lavfi -i "sine=frequency=440:sample_rate=16000:duration=0.5" -c:a pcm_s16le -ac 1 "${BX[@]}" audio.wav
"${FF[@]}" -f lavfi -i "$TONE:duration=1" -c:a libvorbis -q:a 0 -ac 1 -ar 22050 "${BX[@]}" audio.ogg
"${FF[@]}" -f lavfi -i "sine=frequency=440:sample_rate=16000:duration=1" -c:a flac -ac 1 "${BX[@]}" audio.flac

# ---------------------------------------------------------------------------
# 4. Documents, archives, text
# ---------------------------------------------------------------------------
python3 - <<'PY'
import gzip, io, json, tarfile, zipfile, random

# --- one-page PDF written by hand (US Letter, 612x792 pt) ---
content = (b"q 0.85 0.1 0.1 rg 72 600 468 120 re f Q\n"
           b"q 0.1 0.2 0.85 RG 4 w 72 400 m 540 400 l S Q\n"
           b"BT /F1 24 Tf 72 500 Td (share-ingest test document) Tj ET\n")
objs = [
    b"<< /Type /Catalog /Pages 2 0 R >>",
    b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
    b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>",
    b"<< /Length %d >>\nstream\n" % len(content) + content + b"endstream",
    b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
]
out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
offs = []
for n, body in enumerate(objs, 1):
    offs.append(len(out))
    out += b"%d 0 obj\n" % n + body + b"\nendobj\n"
xref = len(out)
out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objs) + 1)
for o in offs:
    out += b"%010d 00000 n \n" % o
out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objs) + 1, xref)
open("document.pdf", "wb").write(out)

# --- zip with fixed timestamps ---
def zadd(z, name, data):
    zi = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
    zi.compress_type = zipfile.ZIP_DEFLATED
    zi.create_system = 3
    zi.external_attr = (0o100644 << 16)
    z.writestr(zi, data)
with zipfile.ZipFile("archive.zip", "w") as z:
    zadd(z, "readme.txt", "This is a small text file inside a zip archive.\n")
    zadd(z, "folder/data.txt", "line 1\nline 2\nline 3\n")

# --- tar.gz: fixed mtime/owner, gzip mtime=0, no file name in gzip header ---
raw = io.BytesIO()
with tarfile.open(fileobj=raw, mode="w", format=tarfile.USTAR_FORMAT) as t:
    for name, data in [("readme.txt", b"This is a small text file inside a tar.gz archive.\n"),
                       ("folder/data.txt", b"line 1\nline 2\nline 3\n")]:
        ti = tarfile.TarInfo(name)
        ti.size = len(data); ti.mtime = 1577836800; ti.mode = 0o644
        ti.uid = ti.gid = 0; ti.uname = ti.gname = ""
        t.addfile(ti, io.BytesIO(data))
with open("archive.tar.gz", "wb") as f:
    with gzip.GzipFile(filename="", mode="wb", fileobj=f, mtime=0, compresslevel=9) as g:
        g.write(raw.getvalue())

open("notes.txt", "w", encoding="utf-8", newline="\n").write(
    "Notes for share-ingest\n"
    "Café crème, naïve façade, Ünïcödé, Straße, Ærøskøbing.\n"
    "日本語のテキスト — Ελληνικά — русский — עברית\n"
    "Emoji: 📷 🎬 ✅\n")
json.dump({"name": "share-ingest test data", "version": 1, "tags": ["photo", "vidéo", "音声"],
           "nested": {"ok": True, "count": 3, "ratio": 0.5, "none": None}},
          open("data.json", "w", encoding="utf-8"), ensure_ascii=False, indent=2, sort_keys=True)
open("data.json", "a", encoding="utf-8").write("\n")

# --- pseudo-random bytes named .jpg ---
open("random.jpg", "wb").write(random.Random(1).randbytes(4096))
PY
vips thumbnail document.pdf "$WORK/pdf-thumb.jpg" 100   # must be loadable (poppler)

# ---------------------------------------------------------------------------
# 5. Tricky names / broken files
# ---------------------------------------------------------------------------
$V jpegsave "$WORK/land4.ppm" no-extension-jpeg --Q 80 --strip --optimize-coding
$V jpegsave "$WORK/land5.ppm" jpeg-named.png --Q 80 --strip --optimize-coding
"${FF[@]}" -f lavfi -i "testsrc2=s=160x120:r=25:d=0.4" "${X264[@]}" -crf 32 -g 25 "${BX[@]}" -t 0.4 -f mp4 video-named.jpg
: > empty.jpg
python3 - <<'PY'
d = open("photo.jpg", "rb").read(); open("truncated.jpg", "wb").write(d[:len(d) * 40 // 100])
m = open("clip-h264.mp4", "rb").read(); open("truncated.mp4", "wb").write(m[:len(m) * 30 // 100])
assert b"moov" not in m[:len(m) * 30 // 100], "truncated.mp4 must not contain moov"
PY
cp photo.jpg "$(printf 'caf\xc3\xa9 photo \xc3\xbcn\xc3\xafcode.jpg')"   # NFC bytes, exact copy

# ---------------------------------------------------------------------------
# 6. expected.json (measured, not guessed)
# ---------------------------------------------------------------------------
python3 - "$WORK" <<'PY'
import hashlib, json, os, struct, subprocess, sys, unicodedata
WORK = sys.argv[1]

def run(*a):
    return subprocess.run(a, check=True, capture_output=True).stdout

def probe(p):
    return json.loads(run("ffprobe", "-v", "error", "-show_format", "-show_streams", "-of", "json", p))

def vhdr(p, field):
    v = run("vipsheader", "-f", field, p).decode().strip()
    # enums print as "((VipsBandFormat) VIPS_FORMAT_UCHAR)" -> "uchar"
    if v.startswith("((Vips"):
        v = v.split(")")[1].strip().rstrip(")").split("_", 2)[2].lower()
    return v

def exif(p):
    return json.loads(run("exiftool", "-j", "-n", "-G1", p))[0]

def ms(x):
    return None if x in (None, "N/A") else int(round(float(x) * 1000))

def sample_display(p, pts):
    """Autorotate (EXIF) and sample RGB at relative points in display space."""
    a = os.path.join(WORK, "sample-a.v")
    t = os.path.join(WORK, "sample.v")
    run("vips", "autorot", p, a)
    run("vips", "colourspace", a, t, "srgb")     # CMYK, grey, 16-bit -> 8-bit sRGB
    w, h = int(vhdr(t, "width")), int(vhdr(t, "height"))
    res = {}
    for name, (fx, fy) in pts.items():
        x, y = min(w - 1, int(fx * w)), min(h - 1, int(fy * h))
        v = run("vips", "getpoint", t, str(x), str(y)).decode().split()
        res[name] = [int(float(c)) for c in v[:3]]
    return res

MARKERS = {"top_left": (0.03, 0.03), "top_right": (0.97, 0.03), "bottom_left": (0.03, 0.97), "bottom_right": (0.97, 0.97)}

def jpeg_info(p):
    d = open(p, "rb").read()
    i, sof, comps = 2, None, None
    while i < len(d) - 4:
        if d[i] != 0xFF: break
        mk = d[i + 1]
        if mk in (0xD8, 0x01) or 0xD0 <= mk <= 0xD7: i += 2; continue
        ln = struct.unpack(">H", d[i + 2:i + 4])[0]
        if mk in (0xC0, 0xC1, 0xC2):
            sof = mk; comps = d[i + 9]; break
        i += 2 + ln
    return {"progressive": sof == 0xC2, "components": comps}

def image_entry(p, mime):
    e = {"kind": "image", "mime": mime}
    loader = vhdr(p, "vips-loader")
    e["format"] = {"jpegload": "jpeg", "pngload": "png", "gifload": "gif", "webpload": "webp",
                   "tiffload": "tiff", "jxlload": "jxl"}.get(loader, loader)
    if loader == "heifload":
        e["format"] = "avif" if vhdr(p, "heif-compression") == "av1" else "heic"
    w, h = int(vhdr(p, "width")), int(vhdr(p, "height"))
    bands = int(vhdr(p, "bands"))
    interp = vhdr(p, "interpretation")
    pages = int(vhdr(p, "n-pages")) if "n-pages" in run("vipsheader", "-a", p).decode() else 1
    try:
        ori = int(vhdr(p, "orientation"))
    except subprocess.CalledProcessError:
        ori = 1
    x = exif(p)
    ex_ori = x.get("IFD0:Orientation")
    e.update({"width": w, "height": h,
              "orientation": ex_ori if ex_ori is not None else 1,
              "display_width": h if ori in (5, 6, 7, 8) else w,
              "display_height": w if ori in (5, 6, 7, 8) else h,
              "bands": bands, "has_alpha": bands in (2, 4) and interp != "cmyk",
              "interpretation": interp, "band_format": vhdr(p, "format"),
              "bit_depth": 16 if vhdr(p, "format") == "ushort" else 8})
    if e["has_alpha"]:
        t = os.path.join(WORK, "alpha.v")
        run("vips", "extract_band", p, t, str(bands - 1))
        e["alpha_min"] = int(float(run("vips", "min", t).decode()))
        e["alpha_max"] = int(float(run("vips", "max", t).decode()))
        e["has_transparent_pixels"] = e["alpha_min"] < 255
    if e["format"] == "gif":
        e["frames"] = pages
        e["frame_delays_ms"] = [int(v) for v in vhdr(p, "delay").split()]
        e["loop"] = int(vhdr(p, "loop"))
        e["duration_ms"] = sum(e["frame_delays_ms"])
    if e["format"] == "jpeg":
        e.update(jpeg_info(p))
    dt = x.get("ExifIFD:DateTimeOriginal")
    if dt: e["exif_date_time_original"] = dt
    if "GPS:GPSLatitude" in x:
        e["gps"] = [round(x["GPS:GPSLatitude"], 4), round(x["GPS:GPSLongitude"], 4)]
    if x.get("IFD0:Make"): e["exif_make"] = x["IFD0:Make"]
    if x.get("IFD0:Model"): e["exif_model"] = x["IFD0:Model"]
    if e["format"] != "gif" and w >= 32 and h >= 32:
        e["display_corner_rgb"] = sample_display(p, MARKERS)
    return e

def bmp_entry(p):
    d = open(p, "rb").read()
    w, h, planes, bpp = struct.unpack("<iiHH", d[18:30])
    return {"kind": "image", "mime": "image/bmp", "format": "bmp", "width": w, "height": abs(h),
            "orientation": 1, "display_width": w, "display_height": abs(h), "bands": 3,
            "has_alpha": False, "bit_depth": bpp // 3, "bottom_up": h > 0}

def av_entry(p, kind, mime):
    j = probe(p)
    f = j["format"]
    e = {"kind": kind, "mime": mime, "format": f["format_name"],
         "duration_ms": ms(f.get("duration"))}
    vs = [s for s in j["streams"] if s["codec_type"] == "video"]
    aus = [s for s in j["streams"] if s["codec_type"] == "audio"]
    if vs:
        v = vs[0]
        rot = 0
        for sd in v.get("side_data_list", []):
            if "rotation" in sd: rot = int(sd["rotation"])
        w, h = v["width"], v["height"]
        cnt = json.loads(run("ffprobe", "-v", "error", "-select_streams", "v:0", "-count_frames",
                             "-show_entries", "stream=nb_read_frames", "-of", "json", p))
        # keyframes from packet flags (the vp9 decoder ignores -skip_frame nokey)
        kf = json.loads(run("ffprobe", "-v", "error", "-select_streams", "v:0",
                            "-show_entries", "packet=pts_time,flags", "-of", "json", p))
        n, d = map(int, v["r_frame_rate"].split("/"))
        e.update({"video_codec": v["codec_name"], "codec_tag": v["codec_tag_string"],
                  "profile": v.get("profile"), "pix_fmt": v.get("pix_fmt"),
                  "width": w, "height": h, "rotation": rot,
                  "display_width": h if abs(rot) in (90, 270) else w,
                  "display_height": w if abs(rot) in (90, 270) else h,
                  "fps": round(n / d, 3),
                  "video_duration_ms": ms(v.get("duration")),
                  "frames": int(cnt["streams"][0]["nb_read_frames"]),
                  "keyframes_ms": sorted(ms(pk["pts_time"]) for pk in kf["packets"] if "K" in pk["flags"])})
    if aus:
        a = aus[0]
        e.update({"audio_codec": a["codec_name"], "sample_rate": int(a["sample_rate"]),
                  "channels": a["channels"], "audio_duration_ms": ms(a.get("duration"))})
    e["has_audio"] = bool(aus)
    e["has_video"] = bool(vs)
    if f["format_name"].startswith("mov"):
        d = open(p, "rb").read()
        e["moov_before_mdat"] = d.find(b"moov") < d.find(b"mdat")
    return e

def display_rgb_video(p, at):
    """First frame at `at` seconds, autorotated like ffmpeg/players do."""
    raw = os.path.join(WORK, "frame.png")
    run("ffmpeg", "-v", "error", "-y", "-ss", str(at), "-i", p, "-frames:v", "1", raw)
    return sample_display(raw, MARKERS)

def mean_luma(p, at):
    out = run("ffmpeg", "-v", "error", "-ss", str(at), "-i", p, "-frames:v", "1",
              "-vf", "format=gray,scale=32:24", "-f", "rawvideo", "-")
    return round(sum(out) / len(out), 1)

def sniff(d):
    """Magic-byte sniffing, as a content-based detector would do it."""
    if len(d) == 0: return None
    if d[:3] == b"\xff\xd8\xff": return "image/jpeg"
    if d[:8] == b"\x89PNG\r\n\x1a\n": return "image/png"
    if d[:6] in (b"GIF87a", b"GIF89a"): return "image/gif"
    if d[:4] == b"RIFF" and d[8:12] == b"WEBP": return "image/webp"
    if d[:4] == b"RIFF" and d[8:12] == b"WAVE": return "audio/wav"
    if d[:4] == b"RIFF" and d[8:12] == b"AVI ": return "video/x-msvideo"
    if d[:2] == b"BM": return "image/bmp"
    if d[:4] in (b"II*\0", b"MM\0*"): return "image/tiff"
    if d[:2] == b"\xff\x0a" or d[:12] == b"\0\0\0\x0cJXL \r\n\x87\n": return "image/jxl"
    if d[4:8] == b"ftyp":
        return {b"heic": "image/heic", b"mif1": "image/heif", b"avif": "image/avif", b"qt  ": "video/quicktime",
                b"M4A ": "audio/mp4", b"3gp6": "video/3gpp", b"3gp4": "video/3gpp", b"3gp5": "video/3gpp"}.get(d[8:12], "video/mp4")
    if d[:4] == b"\x1a\x45\xdf\xa3": return "video/webm" if b"webm" in d[:64] else "video/x-matroska"
    if d[:3] == b"ID3" or (d[0] == 0xFF and d[1] & 0xE0 == 0xE0): return "audio/mpeg"
    if d[:4] == b"OggS": return "audio/ogg"
    if d[:4] == b"fLaC": return "audio/flac"
    if d[:5] == b"%PDF-": return "application/pdf"
    if d[:4] == b"PK\x03\x04": return "application/zip"
    if d[:2] == b"\x1f\x8b": return "application/gzip"
    return None

MIME = {".jpg": "image/jpeg", ".png": "image/png", ".gif": "image/gif", ".webp": "image/webp",
        ".heic": "image/heic", ".avif": "image/avif", ".tiff": "image/tiff", ".jxl": "image/jxl",
        ".mp4": "video/mp4", ".mov": "video/quicktime", ".webm": "video/webm", ".mkv": "video/x-matroska",
        ".avi": "video/x-msvideo", ".3gp": "video/3gpp", ".mp3": "audio/mpeg", ".m4a": "audio/mp4",
        ".wav": "audio/wav", ".ogg": "audio/ogg", ".flac": "audio/flac"}

EXT_MIME = dict(MIME, **{".bmp": "image/bmp", ".pdf": "application/pdf", ".zip": "application/zip",
                         ".gz": "application/gzip", ".txt": "text/plain", ".json": "application/json"})

out = {}
for name in sorted(os.listdir(".")):
    if name == "expected.json": continue
    data = open(name, "rb").read()
    ext = os.path.splitext(name)[1].lower()
    base = {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
    if name in ("empty.jpg", "truncated.jpg", "truncated.mp4", "random.jpg"):
        e = {"kind": "invalid",
             "reason": {"empty.jpg": "zero bytes",
                        "truncated.jpg": "first 40% of photo.jpg (no EOI marker; header still parses)",
                        "truncated.mp4": "first 30% of clip-h264.mp4; moov atom is at the end so it is missing",
                        "random.jpg": "4096 pseudo-random bytes (python random.Random(1).randbytes)"}[name]}
        if name == "truncated.jpg":
            e["header_width"], e["header_height"] = int(vhdr(name, "width")), int(vhdr(name, "height"))
            e["prefix_of"] = "photo.jpg"
        if name == "truncated.mp4":
            e["prefix_of"] = "clip-h264.mp4"
            e["has_moov"] = b"moov" in data
            e["ffprobe_fails"] = subprocess.run(["ffprobe", "-v", "error", name], capture_output=True).returncode != 0
        if name == "random.jpg":
            e["vips_loads"] = subprocess.run(["vipsheader", name], capture_output=True).returncode == 0
    elif name == "image.bmp":
        e = bmp_entry(name)
    elif name in ("no-extension-jpeg", "jpeg-named.png"):
        e = image_entry(name, "image/jpeg")
    elif name == "video-named.jpg":
        e = av_entry(name, "video", "video/mp4")
    elif ext in (".jpg", ".png", ".gif", ".webp", ".heic", ".avif", ".tiff", ".jxl"):
        e = image_entry(name, MIME[ext])
    elif ext in (".mp4", ".mov", ".webm", ".mkv", ".avi", ".3gp"):
        e = av_entry(name, "video", MIME[ext])
        if e["width"] >= 160 and name != "fade-in.mp4":
            e["display_corner_rgb"] = display_rgb_video(name, 0)
        if name == "fade-in.mp4":
            e["black_until_ms"] = 1500
            e["mean_luma_at_keyframes"] = {str(k): mean_luma(name, k / 1000) for k in e["keyframes_ms"]}
    elif ext in (".mp3", ".m4a", ".wav", ".ogg", ".flac"):
        e = av_entry(name, "audio", MIME[ext])
    elif ext == ".pdf":
        e = {"kind": "document", "mime": "application/pdf", "format": "pdf",
             "pages": int(vhdr(name, "n-pages")), "page_size_pt": [612, 792],
             "width": int(vhdr(name, "width")), "height": int(vhdr(name, "height")),
             "note": "width/height are what vips pdfload renders at its default 72 dpi"}
    elif ext == ".zip":
        import zipfile
        with zipfile.ZipFile(name) as z:
            e = {"kind": "archive", "mime": "application/zip", "format": "zip",
                 "entries": [{"name": i.filename, "size": i.file_size} for i in z.infolist()]}
    elif name.endswith(".tar.gz"):
        import tarfile
        with tarfile.open(name) as t:
            e = {"kind": "archive", "mime": "application/gzip", "format": "tar.gz",
                 "entries": [{"name": i.name, "size": i.size} for i in t.getmembers()]}
    elif ext == ".txt":
        s = data.decode("utf-8")
        e = {"kind": "text", "mime": "text/plain", "format": "text", "encoding": "utf-8",
             "characters": len(s), "lines": s.count("\n")}
    elif ext == ".json":
        json.loads(data)
        e = {"kind": "text", "mime": "application/json", "format": "json", "encoding": "utf-8", "valid": True}
    else:
        raise SystemExit("no expectation rule for " + name)
    e = {k: v for k, v in e.items() if v is not None}
    e.update(base)
    sn = sniff(data)
    if sn is None and e["kind"] == "text": sn = e["mime"]
    e["sniffed_mime"] = sn
    if data[4:8] == b"ftyp": e["ftyp_major_brand"] = data[8:12].decode("ascii")
    if sn and e["kind"] != "invalid" and sn != e["mime"]:
        raise SystemExit("%s: sniffed %s but expected %s" % (name, sn, e["mime"]))
    # what a purely extension-based guess would say, vs. the bytes
    e["extension_matches_content"] = sn is not None and EXT_MIME.get(ext) == sn
    out[name] = e

# identical-content groups (for dedupe tests)
by_hash = {}
for n, e in out.items():
    by_hash.setdefault(e["sha256"], []).append(n)
for n, e in out.items():
    dup = [m for m in by_hash[e["sha256"]] if m != n]
    if dup: e["same_bytes_as"] = dup
assert unicodedata.is_normalized("NFC", "".join(out))
with open("expected.json", "w", encoding="utf-8") as f:
    json.dump(out, f, ensure_ascii=False, indent=2, sort_keys=True)
    f.write("\n")
PY

# ---------------------------------------------------------------------------
# 7. sample-drop/ (README demo)
# ---------------------------------------------------------------------------
cp photo.jpg "$DROP/IMG_0001.JPG"
cp image.heic "$DROP/IMG_0002.HEIC"
cp portrait-rot90.mp4 "$DROP/VID_0003.MP4"
cp screenshot.png "$DROP/Screenshot 2026-11-29.png"
cp document.pdf "$DROP/report.pdf"
cp notes.txt "$DROP/notes.txt"
$V jpegsave "$WORK/land2.ppm" "$DROP/chat/IMG_0001.JPG" --Q 80 --strip --optimize-coding
exiftool -q -overwrite_original -n -Orientation=1 -DateTimeOriginal="2025:12:24 18:05:00" "$DROP/chat/IMG_0001.JPG"
# A fake Finder .DS_Store (Bud1 magic + zero padding): must be skipped as hidden.
python3 -c 'import sys; open(sys.argv[1],"wb").write(b"\x00\x00\x00\x01Bud1" + bytes(4088))' "$DROP/.DS_Store"

# Size budget: every file < 60 KiB, media/ < 1 MB, sample-drop/ < 300 KB.
python3 - "$MEDIA" "$DROP" <<'PY'
import os, sys
tot = {}
for root in sys.argv[1:]:
    tot[root] = 0
    for d, _, fs in os.walk(root):
        for f in fs:
            n = os.path.getsize(os.path.join(d, f)); tot[root] += n
            assert n < 60 * 1024, "too big: %s (%d bytes)" % (f, n)
assert tot[sys.argv[1]] < 1000000 and tot[sys.argv[2]] < 300000, tot
PY

echo "done:"
(cd "$HERE" && find media sample-drop -type f -printf '%s\t%p\n' | sort -k2)
du -sb "$MEDIA" "$DROP"
