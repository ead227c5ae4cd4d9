#!/usr/bin/env bash
# Generates the benchmark corpus into bench/corpus/ (gitignored):
#
#   photos/     60 phone-like 12 MP JPEGs (4000x3000, Q92, ~4 MB), EXIF Make/Model,
#               every third one with EXIF Orientation=6
#   videos/     8 1080p30 H.264 10 s clips with AAC audio, GOP 30, ~8-14 Mbit/s;
#               VID_0008.MP4 is portrait (rotate=90 display matrix)
#   mixed/      a realistic mixed drop: 12 MP JPEGs, 12 MP HEICs, a PNG screenshot,
#               an animated GIF, a 4K HEVC 3 s clip, a VP9 WebM, an H.264 clip,
#               an MP3, a PDF, zip and tar.gz archives, text files, extensionless
#               files and wrongly named files (JPEG as .png, MP4 as .jpg)
#   iphone/     16 iPhone-like 12 MP HEICs (4032x3024 grid of 8x6 HEVC tiles of
#               512x512, last column/row cropped; hvcC, ispe, colr, pixi; irot,
#               EXIF-6-without-irot, clap and thmb variants), ~2.6 MB each, written
#               by bench/make-heic.py (x265 all-intra tiles + our ISOBMFF writer)
#   scale100/   100 small files (90 JPEGs 640x480 ~30-50 KB + 10 text files)
#   scale1000/  1000 small files (900 JPEGs + 100 text files)
#
# Deterministic: fixed seeds everywhere, bitexact muxing, fixed timestamps in
# archives; x265/libvpx pinned to fixed thread settings; x264 in CRF mode
# (with VBV, -maxrate/-bufsize, multi-threaded x264 is not repeatable). With the same Debian 12
# tool versions the same command gives the same bytes (SHA256SUMS is written
# at the end so two machines can compare).
# Idempotent: each set is built in a temporary folder and renamed into place
# when complete; a set that already exists is skipped. `FORCE=1` rebuilds all.
#
# Usage: bash bench/make-corpus.sh [photos|videos|mixed|iphone|scale ...]   (default: all)
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CORPUS="${CORPUS:-$HERE/corpus}"
export LC_ALL=C.UTF-8 TZ=UTC PYTHONHASHSEED=0
# libvips' generators here (perlin, worley, gaussnoise) hash per pixel, so the
# thread count does not change the output; use both cores.
export VIPS_CONCURRENCY=2

for tool in vips ffmpeg ffprobe exiftool python3 tar gzip sha256sum; do
  command -v "$tool" >/dev/null || { echo "make-corpus: missing tool: $tool (see BENCHMARKS.md, 'Setup')" >&2; exit 1; }
done

mkdir -p "$CORPUS"
SCRATCH="$(mktemp -d "$CORPUS/.scratch.XXXXXX")"
trap 'rm -rf "$SCRATCH"' EXIT

log() { printf 'make-corpus: %s\n' "$*" >&2; }

FF=(ffmpeg -nostdin -v error -y)
BITEXACT=(-fflags +bitexact -flags:v +bitexact -flags:a +bitexact -map_metadata -1)

# want SET: true when SET must be (re)built.
want() {
  local set="$1"
  if [[ -d "$CORPUS/$set" && "${FORCE:-0}" != 1 ]]; then
    log "$set: present, skipped ($(find "$CORPUS/$set" -type f | wc -l) files)"
    return 1
  fi
  rm -rf "${CORPUS:?}/$set" "$SCRATCH/$set"
  mkdir -p "$SCRATCH/$set"
  log "$set: generating..."
  return 0
}
publish() { mv "$SCRATCH/$1" "$CORPUS/$1"; log "$1: done ($(find "$CORPUS/$1" -type f | wc -l) files, $(du -sh "$CORPUS/$1" | cut -f1))"; }

# base_image SEED OUT.v: a 4400x3300 synthetic 'photo' (smooth colour fields from
# Perlin noise, cell texture from Worley noise, fine detail and sensor-like grain),
# about 4 MB per 12 MP crop at Q92, i.e. the entropy of a phone photo.
base_image() {
  local s="$1" out="$2" w=4400 h=3300 d
  d="$(mktemp -d "$SCRATCH/base.XXXXXX")"
  vips perlin "$d/r.v" $w $h --cell-size 700 --uchar --seed $((s * 10 + 1))
  vips perlin "$d/g.v" $w $h --cell-size 530 --uchar --seed $((s * 10 + 2))
  vips perlin "$d/b.v" $w $h --cell-size 900 --uchar --seed $((s * 10 + 3))
  vips worley "$d/w.v" $w $h --cell-size 90 --seed $((s * 10 + 4))
  vips perlin "$d/d.v" $w $h --cell-size 24 --seed $((s * 10 + 5))
  vips gaussnoise "$d/n.v" $w $h --sigma 5 --mean 0 --seed $((s * 10 + 6))
  vips bandjoin "$d/r.v $d/g.v $d/b.v" "$d/rgb0.v"
  vips linear "$d/rgb0.v" "$d/rgb.v" 2.2 " -150"
  vips linear "$d/w.v" "$d/wl.v" 0.8 0
  vips linear "$d/d.v" "$d/dl.v" 40 0
  vips add "$d/wl.v" "$d/dl.v" "$d/t1.v"
  vips add "$d/t1.v" "$d/n.v" "$d/t2.v"
  vips add "$d/rgb.v" "$d/t2.v" "$d/sum.v"
  vips cast "$d/sum.v" "$d/c.v" uchar
  vips copy "$d/c.v" "$out" --interpretation srgb
  rm -rf "$d"
}

# crop_jpeg BASE.v X Y W H OUT.jpg
crop_jpeg() {
  local tmp="$SCRATCH/crop.$$.jpg"  # via a .jpg name: the saver is chosen by suffix
  vips crop "$1" "$tmp[Q=92,strip]" "$2" "$3" "$4" "$5"
  mv "$tmp" "$6"
}

# phone_exif FILE...: camera-like EXIF (fixed values, so deterministic).
phone_exif() {
  exiftool -q -overwrite_original -n -Make=Apple -Model="iPhone 13" -Software=17.1 \
    -DateTimeOriginal="2026:11:29 10:00:00" -CreateDate="2026:11:29 10:00:00" \
    -ExposureTime=0.008 -FNumber=1.6 -ISO=50 -FocalLength=5.1 -Orientation=1 "$@"
}

# video OUT.mp4 SECONDS SIZE SEED [extra ffmpeg output args...]: H.264 + AAC,
# phone-like: GOP 30 at 30 fps, CRF 22 on light sensor-like noise: ~8-14 Mbit/s
# spread evenly (keyframes ~150-300 KB), yuv420p. Not ABR: with this much
# noise a bitrate target starves every frame after the first few.
h264_video() {
  local out="$1" secs="$2" size="$3" seed="$4"; shift 4
  local sources=(testsrc2 mandelbrot rgbtestsrc testsrc2 smptehdbars testsrc2 mandelbrot testsrc2)
  local src="${sources[$((seed % ${#sources[@]}))]}"
  local vsrc
  case "$src" in
    mandelbrot) vsrc="mandelbrot=s=480x270:r=30:maxiter=256,scale=$size:flags=bicubic" ;;
    *) vsrc="$src=s=$size:r=30" ;;
  esac
  "${FF[@]}" \
    -f lavfi -i "$vsrc,noise=alls=6:allf=t:all_seed=$((seed * 7 + 1)),hue=H=0.3*t+$seed:s=1.2,format=yuv420p" \
    -f lavfi -i "sine=frequency=$((220 + seed * 55)):sample_rate=48000,pan=stereo|c0=c0|c1=c0" \
    -t "$secs" -map 0:v -map 1:a \
    -c:v libx264 -preset veryfast -profile:v high -crf 22 \
    -g 30 -keyint_min 30 -sc_threshold 0 -pix_fmt yuv420p \
    -c:a aac -b:a 128k -ac 2 "${BITEXACT[@]}" -movflags +faststart "$@" "$out"
}

# rotate90 IN OUT: remux with a 90° display matrix (a portrait phone video).
rotate90() {
  "${FF[@]}" -i "$1" -map 0 -c copy "${BITEXACT[@]}" -metadata:s:v:0 rotate=90 -movflags +faststart "$2"
  rm -f "$1"
}

# ---------------------------------------------------------------------------
make_photos() {
  want photos || return 0
  local dir="$SCRATCH/photos" n=0 base s i x y
  for s in 1 2 3 4 5 6; do
    base="$SCRATCH/base$s.v"
    base_image "$s" "$base"
    for i in 0 1 2 3 4 5 6 7 8 9; do
      n=$((n + 1))
      # Ten distinct crops of each base (offsets on a 5x2 grid, nudged per seed).
      x=$(((i % 5) * 95 + s * 2)); y=$(((i / 5) * 149 + s * 5))
      crop_jpeg "$base" "$x" "$y" 4000 3000 "$dir/$(printf 'IMG_%04d.JPG' "$n")"
    done
    rm -f "$base"
  done
  phone_exif "$dir"/*.JPG
  # About a third are portrait shots stored landscape with Orientation=6.
  local rotated=()
  for ((n = 1; n <= 60; n += 3)); do rotated+=("$dir/$(printf 'IMG_%04d.JPG' "$n")"); done
  exiftool -q -overwrite_original -n -Orientation=6 "${rotated[@]}"
  publish photos
}

make_videos() {
  want videos || return 0
  local dir="$SCRATCH/videos" i
  for i in 1 2 3 4 5 6 7; do
    log "videos: VID_000$i.MP4"
    h264_video "$dir/VID_000$i.MP4" 10 1920x1080 "$i"
  done
  log "videos: VID_0008.MP4 (portrait, rotate=90)"
  # ffmpeg 5.1 writes the rotate tag as a display matrix only when remuxing.
  h264_video "$SCRATCH/portrait.mp4" 10 1920x1080 8
  rotate90 "$SCRATCH/portrait.mp4" "$dir/VID_0008.MP4"
  publish videos
}

write_pdf() {
  python3 - "$1" <<'PY'
import sys
# A small, valid 3-page PDF with text and a filled shape per page (no deps).
pages = []
for n in range(1, 4):
    text = f"Quarterly report page {n}"
    stream = (f"0.2 0.4 0.8 rg 72 500 468 200 re f 0 0 0 rg BT /F1 28 Tf 72 740 Td ({text}) Tj ET "
              f"BT /F1 12 Tf 72 460 Td (share-ingest benchmark corpus, deterministic content.) Tj ET").encode()
    pages.append(stream)
objs = []
objs.append(b"<< /Type /Catalog /Pages 2 0 R >>")
kids = " ".join(f"{4 + 2 * i} 0 R" for i in range(len(pages)))
objs.append(f"<< /Type /Pages /Kids [{kids}] /Count {len(pages)} >>".encode())
objs.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
for i, s in enumerate(pages):
    objs.append(f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents {5 + 2 * i} 0 R >>".encode())
    objs.append(b"<< /Length %d >>\nstream\n" % len(s) + s + b"\nendstream")
out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
offsets = []
for i, o in enumerate(objs, 1):
    offsets.append(len(out))
    out += b"%d 0 obj\n" % i + o + b"\nendobj\n"
xref = len(out)
out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objs) + 1)
for off in offsets:
    out += b"%010d 00000 n \n" % off
out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objs) + 1, xref)
open(sys.argv[1], "wb").write(out)
PY
}

write_texts() {  # DIR PREFIX COUNT SEED EXT
  python3 - "$@" <<'PY'
import os, random, sys
d, prefix, count, seed, ext = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
words = ("lorem ipsum dolor sit amet share ingest photo video thumbnail manifest container "
         "copy sniff probe redirect holiday beach family birthday receipt invoice meeting notes").split()
rnd = random.Random(seed)
for i in range(1, count + 1):
    lines = [" ".join(rnd.choice(words) for _ in range(rnd.randint(6, 14))) for _ in range(rnd.randint(5, 60))]
    with open(os.path.join(d, f"{prefix}{i:04d}{ext}"), "w") as f:
        f.write("\n".join(lines) + "\n")
PY
}

make_mixed() {
  want mixed || return 0
  local dir="$SCRATCH/mixed" base="$SCRATCH/base7.v" w="$SCRATCH/mixwork"
  mkdir -p "$w"
  base_image 7 "$base"
  # Three 12 MP JPEGs (one with Orientation=6).
  crop_jpeg "$base" 10 20 4000 3000 "$dir/IMG_1001.JPG"
  crop_jpeg "$base" 250 110 4000 3000 "$dir/IMG_1002.JPG"
  crop_jpeg "$base" 390 290 4000 3000 "$dir/IMG_1003.JPG"
  phone_exif "$dir"/IMG_100?.JPG
  exiftool -q -overwrite_original -n -Orientation=6 "$dir/IMG_1002.JPG"
  # Two 12 MP HEICs, as an iPhone writes them (4032x3024, HEVC).
  log "mixed: HEIC (x265 via libheif, slow)"
  vips crop "$base" "$w/h1.v" 0 0 4032 3024
  vips copy "$w/h1.v" "$dir/IMG_1004.HEIC[Q=50,compression=hevc,strip]"
  vips crop "$base" "$w/h2.v" 360 270 4032 3024
  vips copy "$w/h2.v" "$dir/IMG_1005.HEIC[Q=50,compression=hevc,strip]"
  # A JPEG without extension, and a JPEG named .png (1080p crops).
  crop_jpeg "$base" 1000 1000 1920 1440 "$dir/photo from chat"
  crop_jpeg "$base" 2000 800 1600 1200 "$dir/actually-a-jpeg.png"
  rm -f "$base"
  # PNG screenshot (phone portrait, flat UI-like areas).
  "${FF[@]}" -f lavfi -i "testsrc2=s=1170x2532:r=1,drawbox=x=0:y=0:w=1170:h=180:color=white:t=fill,drawbox=x=60:y=2300:w=1050:h=140:color=0x2060F0:t=fill" \
    -frames:v 1 "${BITEXACT[@]}" "$dir/Screenshot 2026-11-29 at 10.00.00.png"
  # Animated GIF.
  "${FF[@]}" -f lavfi -i "testsrc=s=480x270:r=10:d=3" \
    -vf "split[a][b];[a]palettegen=max_colors=64[p];[b][p]paletteuse=dither=bayer" "${BITEXACT[@]}" "$dir/reaction.gif"
  # 4K HEVC 3 s clip with audio (x265 ultrafast).
  log "mixed: 4K HEVC clip"
  "${FF[@]}" -f lavfi -i "testsrc2=s=3840x2160:r=30,noise=alls=4:allf=t:all_seed=41,format=yuv420p" \
    -f lavfi -i "sine=frequency=330:sample_rate=48000" -t 3 -map 0:v -map 1:a \
    -c:v libx265 -preset ultrafast -crf 26 -x265-params "log-level=error:keyint=30:min-keyint=30:pools=2:frame-threads=1" -tag:v hvc1 \
    -c:a aac -b:a 128k "${BITEXACT[@]}" -movflags +faststart "$dir/IMG_2001.MOV"
  # WebM VP9 clip with Opus.
  "${FF[@]}" -f lavfi -i "testsrc2=s=1280x720:r=30,noise=alls=3:allf=t:all_seed=43,format=yuv420p" \
    -f lavfi -i "sine=frequency=550:sample_rate=48000" -t 4 -map 0:v -map 1:a \
    -c:v libvpx-vp9 -deadline realtime -cpu-used 8 -b:v 3M -g 60 -threads 1 \
    -c:a libopus -b:a 96k "${BITEXACT[@]}" "$dir/screen-recording.webm"
  # A 1080p H.264 phone clip, and an MP4 named .jpg.
  h264_video "$dir/VID_3001.MP4" 5 1920x1080 3
  h264_video "$dir/actually-a-video.jpg" 3 1920x1080 5 -f mp4
  # MP3.
  "${FF[@]}" -f lavfi -i "sine=frequency=440:sample_rate=44100:d=20" -f lavfi -i "sine=frequency=660:sample_rate=44100:d=20" \
    -filter_complex "amix=inputs=2" -c:a libmp3lame -b:a 192k "${BITEXACT[@]}" "$dir/voice memo.mp3"
  # PDF.
  write_pdf "$dir/report.pdf"
  # Text files, and an extensionless text file.
  write_texts "$dir" "notes-" 3 51 .txt
  write_texts "$w" "readme" 1 52 ""
  mv "$w/readme0001" "$dir/README"
  printf 'name,amount\nalpha,1\nbeta,2\ngamma,3\n' >"$dir/data.csv"
  # Archives with fixed timestamps and ordering.
  mkdir -p "$w/arch"
  write_texts "$w/arch" "doc-" 5 53 .txt
  cp "$dir/actually-a-jpeg.png" "$w/arch/picture.jpg"
  python3 - "$w/arch" "$dir/photos.zip" <<'PY'
import os, sys, zipfile
src, out = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
    for name in sorted(os.listdir(src)):
        info = zipfile.ZipInfo(name, date_time=(2026, 11, 29, 10, 0, 0))
        info.compress_type = zipfile.ZIP_DEFLATED
        info.external_attr = 0o644 << 16
        z.writestr(info, open(os.path.join(src, name), "rb").read())
PY
  tar --sort=name --mtime=@1764410400 --owner=0 --group=0 --numeric-owner --format=gnu -C "$w" -cf - arch | gzip -n -9 >"$dir/backup.tar.gz"
  rm -rf "$w"
  publish mixed
}

make_iphone() {
  want iphone || return 0
  # x265 with pools=2 and frame-threads=1 is deterministic (intra-only, one
  # picture per tile); ~20 s per file on two cores.
  python3 "$HERE/make-heic.py" iphone --out "$SCRATCH/iphone" --count 16 --threads 2
  publish iphone
}

make_scale() {
  local need=0 frames="$SCRATCH/frames"
  [[ ! -d "$CORPUS/scale100" || ! -d "$CORPUS/scale1000" || "${FORCE:-0}" == 1 ]] && need=1
  if [[ $need == 0 ]]; then log "scale100, scale1000: present, skipped"; return 0; fi
  rm -rf "${CORPUS:?}/scale100" "${CORPUS:?}/scale1000"
  mkdir -p "$frames"
  log "scale: 900 small JPEGs"
  # 900 distinct 640x480 JPEGs (~30-50 KB) from one ffmpeg run.
  "${FF[@]}" -f lavfi -i "testsrc2=s=640x480:r=30,noise=alls=7:allf=t:all_seed=77,hue=H=0.05*n" \
    -frames:v 900 -q:v 5 "${BITEXACT[@]}" "$frames/IMG_%04d.jpg"
  want scale1000
  cp "$frames"/*.jpg "$SCRATCH/scale1000/"
  write_texts "$SCRATCH/scale1000" "note-" 100 1000 .txt
  want scale100
  local i
  for ((i = 1; i <= 90; i++)); do cp "$frames/$(printf 'IMG_%04d.jpg' $((i * 10)))" "$SCRATCH/scale100/"; done
  write_texts "$SCRATCH/scale100" "note-" 10 100 .txt
  rm -rf "$frames"
  publish scale100
  publish scale1000
}

sets=("$@")
[[ ${#sets[@]} -eq 0 ]] && sets=(photos videos mixed iphone scale)
for set in "${sets[@]}"; do
  case "$set" in
    photos) make_photos ;;
    videos) make_videos ;;
    mixed) make_mixed ;;
    iphone) make_iphone ;;
    scale) make_scale ;;
    *) echo "make-corpus: unknown set '$set' (photos, videos, mixed, iphone, scale)" >&2; exit 2 ;;
  esac
done

# (only the sets that exist: building one set alone must not fail here)
(cd "$CORPUS" && for d in photos videos mixed iphone scale100 scale1000; do if [[ -d $d ]]; then find "$d" -type f; fi; done | LC_ALL=C sort | xargs -r -d '\n' sha256sum >SHA256SUMS)
log "corpus ready in $CORPUS ($(du -sh --exclude=.scratch\* "$CORPUS" | cut -f1)); checksums in $CORPUS/SHA256SUMS"
