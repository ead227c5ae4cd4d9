#!/usr/bin/env bash
# Regenerates testdata/fidelity/ and testdata/fidelity/expected.json: one small
# fixture per class of file listed in issues 13 and 16 (HEIF transforms and
# grids, image sequences, 12-bit JPEG, ICO, TIFFs libvips rejects, text saved
# under image names, videos with a black first keyframe, MPEG-PS/TS, QuickTime
# without ftyp, audio with cover art). Run by hand, never by CI:
#
#     bash testdata/make-fidelity.sh
#
# Needs: ffmpeg/ffprobe 5.1 (libx264, libx265, libaom, libvpx, aac, ac3,
# libmp3lame, libvorbis, flac, mp2), vips 8.14 (heif, magick modules),
# libheif-examples (heif-info, heif-convert), exiftool, python3 (stdlib only).
# scripts/setup.sh installs them. HEIF/AVIF files are written by
# bench/make-heic.py (our own ISOBMFF writer around x265/aom bitstreams).
#
# Deterministic: fixed seeds, single-threaded encoders, bitexact muxing, no
# metadata copied from inputs. Running it twice gives byte-identical files with
# the same tool versions (the script checks nothing about that; compare
# `sha256sum testdata/fidelity/*` of two runs).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
OUT="$HERE/fidelity"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
export LC_ALL=C.UTF-8 TZ=UTC PYTHONHASHSEED=0 VIPS_CONCURRENCY=1

for tool in ffmpeg ffprobe vips vipsheader vipsthumbnail heif-info heif-convert exiftool python3; do
  command -v "$tool" >/dev/null || { echo "missing tool: $tool (bash scripts/setup.sh)" >&2; exit 1; }
done

# Keep notes (TRIAL.md, README) that are not generated.
mkdir -p "$OUT"
find "$OUT" -maxdepth 1 -type f ! -name '*.md' -delete
cd "$OUT"

FF=(ffmpeg -nostdin -v error -y)
BX=(-fflags +bitexact -flags:v +bitexact -flags:a +bitexact -map_metadata -1 -map_chapters -1)
X264=(-c:v libx264 -preset medium -threads 1 -x264-params "threads=1:lookahead-threads=1" -pix_fmt yuv420p)
HEIC=(python3 "$ROOT/bench/make-heic.py" encode --threads 1)

# ---------------------------------------------------------------------------
# 1. Upright pictures (pure python, seeded): red marker top-left, blue
#    bottom-right, as everywhere in testdata/.
# ---------------------------------------------------------------------------
python3 - "$WORK" <<'PY'
import math, os, random, sys
W = sys.argv[1]

def clamp(v):
    return 0 if v < 0 else 255 if v > 255 else int(v)

RED, BLUE = (220, 24, 24), (24, 48, 220)

def landscape(w, h, seed, hue=0.0):
    """Sky gradient, sun, wavy hills, noisy grass (as make-testdata.sh)."""
    rnd = random.Random(seed)
    ph1, ph2 = rnd.uniform(0, 6.28), rnd.uniform(0, 6.28)
    sunx, suny, sunr = rnd.uniform(0.55, 0.8) * w, 0.22 * h, 0.07 * min(w, h)
    m = max(8, min(w, h) // 10)
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
            if x < m and y < m:
                r, g, b = RED; n = 0
            elif x >= w - m and y >= h - m:
                r, g, b = BLUE; n = 0
            out[i] = clamp(r + n); out[i + 1] = clamp(g + n); out[i + 2] = clamp(b + n)
            i += 3
    return bytes(out)

def ppm(name, w, h, px):
    with open(os.path.join(W, name), "wb") as f:
        f.write(b"P6\n%d %d\n255\n" % (w, h) + px)

ppm("land720.ppm", 720, 480, landscape(720, 480, 11))
ppm("port480.ppm", 480, 720, landscape(480, 720, 12, hue=0.3))
ppm("port480x640.ppm", 480, 640, landscape(480, 640, 13, hue=0.6))
ppm("land696.ppm", 696, 464, landscape(696, 464, 18, hue=0.2))
ppm("land360.ppm", 360, 240, landscape(360, 240, 19, hue=0.5))
ppm("cover.ppm", 160, 160, landscape(160, 160, 14, hue=0.8))
ppm("jpeg12.ppm", 320, 240, landscape(320, 240, 15, hue=0.1))
ppm("icon128.ppm", 128, 128, landscape(128, 128, 16, hue=0.4))
ppm("tiff.ppm", 64, 48, landscape(64, 48, 17, hue=0.7))
PY
vips pngsave "$WORK/land360.ppm" "$WORK/land360.png" --strip
vips jpegsave "$WORK/cover.ppm" "$WORK/cover.jpg" --Q 85 --strip --optimize-coding

# ---------------------------------------------------------------------------
# 2. HEIF / AVIF stills (bench/make-heic.py undoes the transforms, so every
#    file displays upright with red at the top-left when decoded correctly)
# ---------------------------------------------------------------------------
# iPhone 7 style: grid, pixels stored landscape, EXIF Orientation 6, no irot.
"${HEIC[@]}" --in "$WORK/port480x640.ppm" --out heic-exif6-noirot.heic --tile 256 \
  --exif-orientation 6 --model "iPhone 7" --thumb 160 --crf 30
# Single-image HEIC with irot 1 (90 degrees anticlockwise) and with imir.
"${HEIC[@]}" --in "$WORK/port480.ppm" --out heic-irot.heic --irot 1 --crf 30
"${HEIC[@]}" --in "$WORK/land720.ppm" --out heic-imir.heic --imir 1 --crf 30
# AVIF with clap (a green margin around the displayed area), and with irot.
"${HEIC[@]}" --codec av1 --in "$WORK/land720.ppm" --out avif-clap.avif --clap 720 480 --crf 36
"${HEIC[@]}" --codec av1 --in "$WORK/port480.ppm" --out avif-irot.avif --irot 3 --crf 36
# Grids: 3x2 tiles of 256x256, the last column/row cropped by the output size.
"${HEIC[@]}" --in "$WORK/land720.ppm" --out grid.heic --tile 256 --crf 30
# Modern iPhone portrait: grid + irot 3 *and* EXIF Orientation 6 (apply irot only).
"${HEIC[@]}" --in "$WORK/port480.ppm" --out grid-irot-exif6.heic --tile 256 --irot 3 \
  --exif-orientation 6 --exif-only-tag --model "iPhone 13" --crf 30
"${HEIC[@]}" --in "$WORK/land696.ppm" --out grid-clap.heic --tile 256 --clap 696 464 --crf 30

# ---------------------------------------------------------------------------
# 3. Image sequences
# ---------------------------------------------------------------------------
# AVIF sequence (ftyp avis, a `pict` track plus a primary still item), from
# ffmpeg's avif muxer: 5 frames at 5 fps, the hue turning after frame 0.
"${FF[@]}" -loop 1 -framerate 5 -i "$WORK/land360.png" -vf "hue=h=36*n,format=yuv420p" -frames:v 5 \
  -c:v libaom-av1 -crf 40 -b:v 0 -cpu-used 6 -row-mt 0 -threads 1 -g 5 "${BX[@]}" -f avif sequence.avifs
# HEIF image sequence (ftyp msf1, handler pict, no meta): an HEVC MP4 whose
# ftyp and handler are rewritten below.
"${FF[@]}" -loop 1 -framerate 5 -i "$WORK/land360.png" -vf "hue=h=36*n,format=yuv420p" -frames:v 5 \
  -c:v libx265 -preset medium -crf 30 -tag:v hvc1 -x265-params "log-level=error:info=0:pools=1:frame-threads=1:keyint=5" \
  "${BX[@]}" -movflags +faststart -f mp4 "$WORK/seq-hevc.mp4"

# ---------------------------------------------------------------------------
# 4. Videos whose first keyframe is black and second (2.08 s) is bright
# ---------------------------------------------------------------------------
# 25 fps, keyframes forced at frames 0 and 52 (t = 0 and 2.08 s), 4 s.
BRIGHT="testsrc2=s=240x160:r=25,drawbox=x=0:y=0:w=24:h=24:color=0xDC1818:t=fill,drawbox=x=216:y=136:w=24:h=24:color=0x1830DC:t=fill,drawbox=x=0:y=0:w=240:h=160:color=black:t=fill:enable='lt(t\,1.96)'"
KF=(-force_key_frames "expr:eq(n,0)+eq(n,52)" -g 200 -keyint_min 200 -sc_threshold 0)
AUD=(-f lavfi -i "sine=frequency=440:sample_rate=48000")
"${FF[@]}" -f lavfi -i "$BRIGHT" "${AUD[@]}" -t 4 -map 0:v -map 1:a "${X264[@]}" -crf 30 "${KF[@]}" \
  -c:a aac -b:a 64k -ac 1 "${BX[@]}" -movflags +faststart black-first-key.mp4
# Matroska with Cues (seekable output) ...
"${FF[@]}" -f lavfi -i "$BRIGHT" "${AUD[@]}" -t 4 -map 0:v -map 1:a "${X264[@]}" -crf 30 "${KF[@]}" \
  -c:a aac -b:a 64k -ac 1 "${BX[@]}" -f matroska black-first-key-cues.mkv
# ... and without: written to a pipe, the muxer cannot go back, so there is no
# Cues element, no SeekHead entry for it and no Duration.
# (-t on the inputs: with an output -t, ffmpeg hands the muxer a duration.)
"${FF[@]}" -t 4 -f lavfi -i "$BRIGHT" -t 4 "${AUD[@]}" -map 0:v -map 1:a "${X264[@]}" -crf 30 "${KF[@]}" \
  -c:a aac -b:a 64k -ac 1 "${BX[@]}" -f matroska - >black-first-key-nocues.mkv
"${FF[@]}" -f lavfi -i "$BRIGHT" "${AUD[@]}" -t 4 -map 0:v -map 1:a -c:v libvpx-vp9 -deadline good -cpu-used 4 \
  -threads 1 -row-mt 0 -b:v 0 -crf 45 "${KF[@]}" -auto-alt-ref 0 -c:a libopus -b:a 48k -ac 1 "${BX[@]}" black-first-key.webm
# MPEG-TS: no index at all.
"${FF[@]}" -f lavfi -i "$BRIGHT" "${AUD[@]}" -t 4 -map 0:v -map 1:a "${X264[@]}" -crf 30 "${KF[@]}" \
  -c:a aac -b:a 64k -ac 1 "${BX[@]}" -f mpegts black-first-key.ts

# ---------------------------------------------------------------------------
# 5. MPEG program and transport streams (bright from the first frame)
# ---------------------------------------------------------------------------
SRC="testsrc2=s=240x160:r=25,drawbox=x=0:y=0:w=24:h=24:color=0xDC1818:t=fill,drawbox=x=216:y=136:w=24:h=24:color=0x1830DC:t=fill"
"${FF[@]}" -f lavfi -i "$SRC" "${AUD[@]}" -t 2 -map 0:v -map 1:a -c:v mpeg1video -q:v 12 -g 12 -bf 2 \
  -c:a mp2 -b:a 64k -ac 1 "${BX[@]}" -f mpeg mpeg1-ps.mpg
"${FF[@]}" -f lavfi -i "$SRC" "${AUD[@]}" -t 2 -map 0:v -map 1:a -c:v mpeg2video -q:v 12 -g 12 -bf 2 \
  -c:a ac3 -b:a 96k -ac 2 "${BX[@]}" -f vob mpeg2-ps.mpg
# AVCHD style: H.264 + AC-3 in 192-byte packets (4-byte arrival timestamp).
AVC=(-f lavfi -i "$SRC" "${AUD[@]}" -t 2 -map 0:v -map 1:a "${X264[@]}" -crf 30 -g 25 -bf 2 -c:a ac3 -b:a 96k -ac 2)
"${FF[@]}" "${AVC[@]}" "${BX[@]}" -f mpegts -mpegts_m2ts_mode 1 avchd.m2ts
"${FF[@]}" "${AVC[@]}" "${BX[@]}" -f mpegts -mpegts_m2ts_mode 1 avchd.mts
"${FF[@]}" "${AVC[@]}" "${BX[@]}" -f mpegts mpeg2-ts-h264.ts

# ---------------------------------------------------------------------------
# 6. QuickTime base movie (ftyp qt, wide, mdat, moov) for the atom rewrites
# ---------------------------------------------------------------------------
"${FF[@]}" -f lavfi -i "testsrc2=s=320x240:r=25,drawbox=x=0:y=0:w=32:h=32:color=0xDC1818:t=fill,drawbox=x=288:y=208:w=32:h=32:color=0x1830DC:t=fill" \
  "${AUD[@]}" -t 2 -map 0:v -map 1:a "${X264[@]}" -crf 32 -g 25 -c:a aac -b:a 64k -ac 1 "${BX[@]}" -f mov "$WORK/base.mov"

# ---------------------------------------------------------------------------
# 7. Audio with cover art
# ---------------------------------------------------------------------------
TONE=(-f lavfi -i "sine=frequency=523:sample_rate=44100:duration=3")
"${FF[@]}" "${TONE[@]}" -i "$WORK/cover.jpg" -map 0 -map 1 -c:a libmp3lame -b:a 64k -ac 1 -c:v copy \
  -disposition:v attached_pic -metadata:s:v title="Album cover" -metadata:s:v comment="Cover (front)" \
  -id3v2_version 3 "${BX[@]}" -metadata title="Cover art test" cover-id3-apic.mp3
"${FF[@]}" "${TONE[@]}" -c:a aac -b:a 64k -ac 1 "${BX[@]}" -f adts "$WORK/raw.aac"
"${FF[@]}" "${TONE[@]}" -i "$WORK/cover.jpg" -map 0 -map 1 -c:a aac -b:a 64k -ac 1 -c:v copy \
  -disposition:v attached_pic "${BX[@]}" -metadata title="Cover art test" -f ipod cover-covr.m4a
"${FF[@]}" "${TONE[@]}" -i "$WORK/cover.jpg" -map 0 -map 1 -c:a flac -ac 1 -c:v copy \
  -disposition:v attached_pic -metadata:s:v comment="Cover (front)" "${BX[@]}" -metadata title="Cover art test" cover-picture.flac

# ---------------------------------------------------------------------------
# 8. Python-made files: container rewrites, 12-bit JPEG, ICO, TIFF, text,
#    ADTS after ID3, Ogg Vorbis with METADATA_BLOCK_PICTURE
# ---------------------------------------------------------------------------
python3 - "$WORK" <<'PY'
import base64, math, os, struct, subprocess, sys, zlib
W = sys.argv[1]
P = lambda n: os.path.join(W, n)

def read_ppm(path):
    d = open(path, "rb").read()
    hdr = d.split(b"\n", 3)
    w, h = map(int, hdr[1].split())
    return w, h, hdr[3]

# --- ISOBMFF top-level rewrite with stco/co64 patching -----------------------
def atoms(d):
    i, out = 0, []
    while i < len(d):
        size, typ = struct.unpack(">I4s", d[i:i + 8])
        assert size >= 8
        out.append((typ, d[i:i + size]))
        i += size
    return out

def patch_offsets(moov, delta):
    """Adds delta to every stco/co64 entry inside moov (a bytes atom)."""
    b = bytearray(moov)
    def walk(s, e):
        i = s
        while i + 8 <= e:
            size, typ = struct.unpack(">I4s", b[i:i + 8])
            if typ in (b"moov", b"trak", b"mdia", b"minf", b"stbl", b"edts", b"dinf"):
                walk(i + 8, i + size)
            elif typ == b"stco":
                n = struct.unpack(">I", b[i + 12:i + 16])[0]
                for k in range(n):
                    o = i + 16 + 4 * k
                    struct.pack_into(">I", b, o, struct.unpack(">I", b[o:o + 4])[0] + delta)
            elif typ == b"co64":
                n = struct.unpack(">I", b[i + 12:i + 16])[0]
                for k in range(n):
                    o = i + 16 + 8 * k
                    struct.pack_into(">Q", b, o, struct.unpack(">Q", b[o:o + 8])[0] + delta)
            i += size
    walk(0, len(b))
    return bytes(b)

def rebuild(src_atoms, order, old_mdat_pos):
    """order: list of atom bytes or names from src; returns bytes with offsets fixed."""
    parts = [a if isinstance(a, bytes) and len(a) > 4 else dict(src_atoms)[a] for a in order]
    # first pass: where mdat lands
    pos = 0
    for p in parts:
        if p[4:8] == b"mdat":
            new_mdat_pos = pos
        pos += len(p)
    delta = new_mdat_pos - old_mdat_pos
    return b"".join(patch_offsets(p, delta) if p[4:8] == b"moov" else p for p in parts)

def pos_of(d, typ):
    i = 0
    for t, a in atoms(d):
        if t == typ:
            return i
        i += len(a)

base = open(P("base.mov"), "rb").read()
A = atoms(base)
assert [t for t, _ in A] == [b"ftyp", b"wide", b"mdat", b"moov"], [t for t, _ in A]
mdat_pos = pos_of(base, b"mdat")
free = struct.pack(">I4s", 16, b"free") + bytes(8)
skip = struct.pack(">I4s", 24, b"skip") + b"QuickTime 7 skip atom\0\0\0"[:16]
# pnot: a preview reference (modification date, version 0, atom type PICT, index 1)
pnot = struct.pack(">I4sIH4sH", 20, b"pnot", 0xB5B5B5B5, 0, b"PICT", 1)
layouts = {
    "qt-first-free.mov": [free, b"wide", b"mdat", b"moov"],
    "qt-first-wide.mov": [b"wide", b"mdat", b"moov"],
    "qt-first-skip.mov": [skip, b"mdat", b"moov"],
    "qt-first-mdat.mov": [b"mdat", b"moov"],
    "qt-first-moov.mov": [b"moov", b"wide", b"mdat"],
    "qt-first-pnot.mov": [pnot, b"moov", b"mdat"],
}
for name, order in layouts.items():
    out = rebuild(A, order, mdat_pos)
    assert b"ftyp" not in out[:64]
    open(name, "wb").write(out)

# --- HEIF image sequence: ftyp msf1 + handler pict ---------------------------
seq = open(P("seq-hevc.mp4"), "rb").read()
S = atoms(seq)
ftyp = struct.pack(">I4s4sI", 8 + 8 + 12, b"ftyp", b"msf1", 0) + b"msf1iso8hevc"
moov = dict(S)[b"moov"].replace(b"hdlr\0\0\0\0\0\0\0\0vide", b"hdlr\0\0\0\0\0\0\0\0pict")
assert moov != dict(S)[b"moov"]
order = [ftyp] + [moov if t == b"moov" else a for t, a in S if t != b"ftyp"]
open("sequence-msf1.heics", "wb").write(rebuild(S, order, pos_of(seq, b"mdat")))

# --- 12-bit baseline-extended (SOF1) JPEG, 4:4:4, optimised Huffman ----------
def jpeg12(path, w, h, rgb):
    # 12-bit YCbCr from the 8-bit picture plus a smooth 12-bit ramp so the low
    # four bits carry information.
    Y, Cb, Cr = [], [], []
    for y in range(h):
        for x in range(w):
            r, g, b = rgb[3 * (y * w + x):3 * (y * w + x) + 3]
            fine = ((x * 5 + y * 3) % 16) / 16.0
            R, G, B = r * 16 + fine, g * 16 + fine, b * 16 + fine
            Y.append(0.299 * R + 0.587 * G + 0.114 * B)
            Cb.append(-0.168736 * R - 0.331264 * G + 0.5 * B + 2048)
            Cr.append(0.5 * R - 0.418688 * G - 0.081312 * B + 2048)
    C = [[(math.sqrt(0.125) if u == 0 else 0.5) * math.cos((2 * x + 1) * u * math.pi / 16) for x in range(8)] for u in range(8)]
    QL = [16, 11, 10, 16, 24, 40, 51, 61, 12, 12, 14, 19, 26, 58, 60, 55, 14, 13, 16, 24, 40, 57, 69, 56, 14, 17, 22, 29, 51, 87, 80, 62,
          18, 22, 37, 56, 68, 109, 103, 77, 24, 35, 55, 64, 81, 104, 113, 92, 49, 64, 78, 87, 103, 121, 120, 101, 72, 92, 95, 98, 112, 100, 103, 99]
    QC = [17, 18, 24, 47, 99, 99, 99, 99, 18, 21, 26, 66, 99, 99, 99, 99, 24, 26, 56, 99, 99, 99, 99, 99, 47, 66, 99, 99, 99, 99, 99, 99] + [99] * 32
    QL = [max(1, (q * 50 + 50) // 100) for q in QL]          # quality 75
    QC = [max(1, (q * 50 + 50) // 100) for q in QC]
    ZZ = [0, 1, 8, 16, 9, 2, 3, 10, 17, 24, 32, 25, 18, 11, 4, 5, 12, 19, 26, 33, 40, 48, 41, 34, 27, 20, 13, 6, 7, 14, 21, 28,
          35, 42, 49, 56, 57, 50, 43, 36, 29, 22, 15, 23, 30, 37, 44, 51, 58, 59, 52, 45, 38, 31, 39, 46, 53, 60, 61, 54, 47, 55, 62, 63]
    def blocks(plane, q):
        out = []
        for by in range(0, h, 8):
            for bx in range(0, w, 8):
                blk = [[plane[min(h - 1, by + j) * w + min(w - 1, bx + i)] - 2048 for i in range(8)] for j in range(8)]
                tmp = [[sum(C[u][x] * blk[y][x] for x in range(8)) for u in range(8)] for y in range(8)]
                coef = [sum(C[v][y] * tmp[y][u] for y in range(8)) for v in range(8) for u in range(8)]
                out.append([int(round(coef[ZZ[k]] / q[ZZ[k]])) for k in range(64)])
        return out
    comps = [blocks(Y, QL), blocks(Cb, QC), blocks(Cr, QC)]
    def cat(v):
        v = abs(v); n = 0
        while v: n += 1; v >>= 1
        return n
    # symbols per block: (table, symbol, extra bits)
    seqs, freq = [], {0: {}, 1: {}, 2: {}, 3: {}}     # 0/1 DC lum/chroma, 2/3 AC
    pred = [0, 0, 0]
    nb = len(comps[0])
    for b in range(nb):
        for c in range(3):
            blk = comps[c][b]
            t = 0 if c == 0 else 1
            d = blk[0] - pred[c]; pred[c] = blk[0]
            s = cat(d)
            seqs.append((t, s, s, d))
            freq[t][s] = freq[t].get(s, 0) + 1
            run = 0
            last = max([k for k in range(1, 64) if blk[k]] or [0])
            for k in range(1, last + 1):
                v = blk[k]
                if v == 0:
                    run += 1
                    continue
                while run > 15:
                    seqs.append((t + 2, 0xF0, 0, 0)); freq[t + 2][0xF0] = freq[t + 2].get(0xF0, 0) + 1; run -= 16
                s = cat(v); sym = (run << 4) | s
                seqs.append((t + 2, sym, s, v)); freq[t + 2][sym] = freq[t + 2].get(sym, 0) + 1
                run = 0
            if last < 63:
                seqs.append((t + 2, 0, 0, 0)); freq[t + 2][0] = freq[t + 2].get(0, 0) + 1
    def huff(fr):
        # JPEG Annex K.2: code sizes limited to 16 bits, with a reserved all-ones code.
        f = dict(fr); f[256] = 1
        size = {s: 0 for s in f}; others = {s: None for s in f}
        while True:
            items = sorted((v, s) for s, v in f.items() if v > 0)
            if len(items) < 2: break
            (v1, c1), (v2, c2) = items[0], items[1]
            f[c1] = v1 + v2; f[c2] = 0
            c = c1
            while True:
                size[c] += 1
                if others[c] is None: break
                c = others[c]
            others[c] = c2
            c = c2
            while True:
                size[c] += 1
                if others[c] is None: break
                c = others[c]
        bits = [0] * 33
        for s, n in size.items():
            if n: bits[n] += 1
        for i in range(32, 16, -1):
            while bits[i] > 0:
                j = i - 2
                while bits[j] == 0: j -= 1
                bits[i] -= 2; bits[i - 1] += 1; bits[j + 1] += 2; bits[j] -= 1
        i = 16
        while bits[i] == 0: i -= 1
        bits[i] -= 1
        syms = sorted((n, s) for s, n in size.items() if n and s != 256)
        vals = [s for _, s in syms]
        codes, code, k = {}, 0, 0
        for L in range(1, 17):
            for _ in range(bits[L]):
                codes[vals[k]] = (code, L); code += 1; k += 1
            code <<= 1
        return bits[1:17], vals, codes
    tabs = [huff(freq[t]) for t in range(4)]
    bw = bytearray(); acc = 0; nbits = 0
    def put(v, n):
        nonlocal acc, nbits
        acc = (acc << n) | (v & ((1 << n) - 1)); nbits += n
        while nbits >= 8:
            byte = (acc >> (nbits - 8)) & 0xFF; nbits -= 8
            bw.append(byte)
            if byte == 0xFF: bw.append(0)
    for t, sym, s, v in seqs:
        code, L = tabs[t][2][sym]
        put(code, L)
        if s:
            put(v if v > 0 else v + (1 << s) - 1, s)
    if nbits: put((1 << (8 - nbits)) - 1, 8 - nbits)
    def seg(m, p): return b"\xff" + bytes([m]) + struct.pack(">H", len(p) + 2) + p
    out = b"\xff\xd8" + seg(0xE0, b"JFIF\0\x01\x01\x00\x00\x01\x00\x01\x00\x00")
    out += seg(0xDB, b"\x00" + bytes(QL[ZZ[k]] for k in range(64)) + b"\x01" + bytes(QC[ZZ[k]] for k in range(64)))
    out += seg(0xC1, struct.pack(">BHHB", 12, h, w, 3) + b"\x01\x11\x00\x02\x11\x01\x03\x11\x01")
    for t, (cls, idx) in enumerate([(0, 0), (0, 1), (1, 0), (1, 1)]):
        bits, vals, _ = tabs[t]
        out += seg(0xC4, bytes([(cls << 4) | idx]) + bytes(bits) + bytes(vals))
    out += seg(0xDA, b"\x03\x01\x00\x02\x11\x03\x11\x00\x3f\x00") + bytes(bw) + b"\xff\xd9"
    open(path, "wb").write(out)

w, h, px = read_ppm(P("jpeg12.ppm"))
jpeg12("jpeg-12bit.jpg", w, h, px)

# --- ICO: 32, 16, 128 (PNG, the picture with markers), 48 -------------------
def png(w, h, rgba):
    raw = b"".join(b"\0" + rgba[y * w * 4:(y + 1) * w * 4] for y in range(h))
    ch = lambda t, d: struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d))
    return b"\x89PNG\r\n\x1a\n" + ch(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 6, 0, 0, 0)) + \
        ch(b"IDAT", zlib.compress(raw, 9)) + ch(b"IEND", b"")

def bmp_icon(w, h, rgb):
    """32-bit BGRA DIB, bottom-up, height doubled, with an all-opaque AND mask."""
    hdr = struct.pack("<IiiHHIIiiII", 40, w, 2 * h, 1, 32, 0, 0, 0, 0, 0, 0)
    xor = b"".join(bytes((rgb[2], rgb[1], rgb[0], 255)) * w for _ in range(h))
    mask = bytes(((w + 31) // 32) * 4 * h)
    return hdr + xor + mask

w, h, px = read_ppm(P("icon128.ppm"))
rgba = b"".join(px[i:i + 3] + b"\xff" for i in range(0, len(px), 3))
entries = [(32, bmp_icon(32, 32, (40, 170, 170))), (16, bmp_icon(16, 16, (40, 170, 170))),
           (128, png(128, 128, rgba)), (48, bmp_icon(48, 48, (40, 170, 170)))]
off = 6 + 16 * len(entries)
ico = struct.pack("<HHH", 0, 1, len(entries))
for size, data in entries:
    ico += struct.pack("<BBBBHHII", size % 256, size % 256, 0, 0, 1, 32, len(data), off)
    off += len(data)
open("ico-largest-third.ico", "wb").write(ico + b"".join(d for _, d in entries))

# --- TIFFs: 64-bit float (tiff2vips: "samples out of range"), 16-bit float
#     ("unsupported tiff image type"), and a planar 2-page 16-bit one that
#     tiff2vips does read (the control) --------------------------------------
def tiff(path, w, h, px, bps, fmt, planar, pages=1):
    out = bytearray(b"II*\0\0\0\0\0")
    ifds = []
    for p in range(pages):
        def enc(v8):
            v = v8 / 255.0
            if fmt == 3 and bps == 64: return struct.pack("<d", v)
            if fmt == 3 and bps == 16:
                return struct.pack("<e", v)
            return struct.pack("<H", int(round(v * 65535)))
        vals = [px[3 * i + c] if p == 0 else 255 - px[3 * i + c] for i in range(w * h) for c in range(3)]
        if planar == 1:
            planes = [b"".join(enc(v) for v in vals)]
        else:
            planes = [b"".join(enc(vals[3 * i + c]) for i in range(w * h)) for c in range(3)]
        offs = []
        for pl in planes:
            offs.append(len(out)); out += pl
        ents = [(256, 4, [w]), (257, 4, [h]), (258, 3, [bps] * 3), (259, 3, [1]), (262, 3, [2]),
                (273, 4, offs), (274, 3, [1]), (277, 3, [3]), (278, 4, [h]), (279, 4, [len(x) for x in planes]),
                (282, 5, [72, 1]), (283, 5, [72, 1]), (284, 3, [planar]), (296, 3, [2]), (339, 3, [fmt] * 3)]
        if pages > 1:
            ents.append((297, 3, [p, pages]))
        ents.sort()
        start = len(out)
        blob_base = start + 2 + 12 * len(ents) + 4
        ifd, blobs = bytearray(), bytearray()
        for tag, typ, v in ents:
            raw = b"".join(struct.pack({3: "<H", 4: "<I", 5: "<I"}[typ], x) for x in v)
            cnt = len(v) // 2 if typ == 5 else len(v)
            if len(raw) <= 4:
                ifd += struct.pack("<HHI", tag, typ, cnt) + raw.ljust(4, b"\0")
            else:
                ifd += struct.pack("<HHII", tag, typ, cnt, blob_base + len(blobs)); blobs += raw
        ifds.append(start)
        out += struct.pack("<H", len(ents)) + ifd + b"\0\0\0\0" + blobs
    struct.pack_into("<I", out, 4, ifds[0])
    for a, b in zip(ifds, ifds[1:]):
        n = struct.unpack_from("<H", out, a)[0]
        struct.pack_into("<I", out, a + 2 + 12 * n, b)
    open(path, "wb").write(out)

w, h, px = read_ppm(P("tiff.ppm"))
tiff("tiff-float64.tif", w, h, px, 64, 3, 1)
tiff("tiff-float16.tif", w, h, px, 16, 3, 1)
tiff("tiff-planar-2pages.tif", w, h, px, 16, 1, 2, pages=2)

# BigTIFF (magic 43, 8-byte offsets): 8-bit RGB, one strip. libtiff, and so
# libvips, reads it; a sniffer that knows only magic 42 does not.
def bigtiff(path, w, h, px):
    data_off = 16
    ents = [(256, 4, [w]), (257, 4, [h]), (258, 3, [8, 8, 8]), (259, 3, [1]), (262, 3, [2]),
            (273, 16, [data_off]), (277, 3, [3]), (278, 4, [h]), (279, 16, [len(px)]), (284, 3, [1])]
    ifd_off = data_off + len(px) + (len(px) % 2)
    blob_base = ifd_off + 8 + 20 * len(ents) + 8
    ifd, blobs = bytearray(), bytearray()
    for tag, typ, v in ents:
        raw = b"".join(struct.pack({3: "<H", 4: "<I", 16: "<Q"}[typ], x) for x in v)
        if len(raw) <= 8:
            ifd += struct.pack("<HHQ", tag, typ, len(v)) + raw.ljust(8, b"\0")
        else:
            ifd += struct.pack("<HHQQ", tag, typ, len(v), blob_base + len(blobs)); blobs += raw
    out = b"II" + struct.pack("<HHHQ", 43, 8, 0, ifd_off) + px + b"\0" * (len(px) % 2)
    out += struct.pack("<Q", len(ents)) + ifd + struct.pack("<Q", 0) + blobs
    open(path, "wb").write(out)

bigtiff("tiff-bigtiff.tif", w, h, px)

# --- text formats under image names, and an empty .jpg ---------------------
open("html-named.jpg", "w", newline="\n").write(
    "<!DOCTYPE html>\n<html lang=\"en\">\n<head><meta charset=\"utf-8\"><title>403 Forbidden</title></head>\n"
    "<body><h1>403 Forbidden</h1><p>You don't have permission to access this resource.</p></body>\n</html>\n")
open("xml-named.jpg", "w", newline="\n").write(
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>AccessDenied</Code>"
    "<Message>Request has expired</Message><RequestId>4442587FB7D0A2F9</RequestId></Error>\n")
open("svg-named.png", "w", newline="\n").write(
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"240\" height=\"160\" viewBox=\"0 0 240 160\">\n"
    "  <rect width=\"240\" height=\"160\" fill=\"#6aa0d8\"/>\n  <circle cx=\"150\" cy=\"70\" r=\"40\" fill=\"#f4e49c\"/>\n"
    "  <rect width=\"24\" height=\"24\" fill=\"#dc1818\"/>\n  <rect x=\"216\" y=\"136\" width=\"24\" height=\"24\" fill=\"#1830dc\"/>\n</svg>\n")
open("text-named.png", "w", newline="\n").write(
    "This is a plain text note that someone saved as a .png.\nLine two.\n")
open("empty.jpg", "wb").close()

# --- AAC (ADTS) after an ID3v2 tag with APIC: the MP3's own ID3v2 tag -------
mp3 = open("cover-id3-apic.mp3", "rb").read()
assert mp3[:3] == b"ID3"
sz = mp3[6:10]
tag_len = 10 + ((sz[0] << 21) | (sz[1] << 14) | (sz[2] << 7) | sz[3])
assert b"APIC" in mp3[:tag_len]
adts = open(P("raw.aac"), "rb").read()
assert adts[0] == 0xFF and adts[1] & 0xF6 == 0xF0
open("adts-id3-apic.aac", "wb").write(mp3[:tag_len] + adts)

# --- FLAC-style PICTURE block for Ogg Vorbis (METADATA_BLOCK_PICTURE) ------
jpg = open(P("cover.jpg"), "rb").read()
mime, desc = b"image/jpeg", b"Cover (front)"
pic = struct.pack(">II", 3, len(mime)) + mime + struct.pack(">I", len(desc)) + desc + \
    struct.pack(">IIIII", 160, 160, 24, 0, len(jpg)) + jpg
open(P("mbp.txt"), "w").write(base64.b64encode(pic).decode())
PY
"${FF[@]}" "${TONE[@]}" -c:a libvorbis -q:a 1 -ac 1 "${BX[@]}" -metadata title="Cover art test" \
  -metadata METADATA_BLOCK_PICTURE="$(cat "$WORK/mbp.txt")" cover-vorbis-picture.ogg

# ---------------------------------------------------------------------------
# 9. expected.json, measured with ffprobe, heif-info/heif-convert, exiftool,
#    vipsheader/vipsthumbnail
# ---------------------------------------------------------------------------
python3 "$HERE/measure-fidelity.py" "$OUT" "$WORK"

# Size budget: every file < 150 KiB, the folder < 3 MB.
python3 - "$OUT" <<'PY'
import os, sys
tot = 0
for f in sorted(os.listdir(sys.argv[1])):
    n = os.path.getsize(os.path.join(sys.argv[1], f)); tot += n
    assert n < 150 * 1024, "too big: %s (%d bytes)" % (f, n)
assert tot < 3000000, tot
print("fidelity: %d files, %d bytes" % (len(os.listdir(sys.argv[1])), tot))
PY
