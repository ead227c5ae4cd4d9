#!/usr/bin/env bash
# Makes the generated fixtures of testdata/modern/ (issue 23: what phones and
# cameras make today). The real files there (see testdata/README.md) are
# committed as they are and never touched here.
#
#   bash testdata/make-modern.sh
#
# Needs ffmpeg 5.1 (libx265, libsvtav1, libaom, libjxl, libx264, libvpx),
# exiftool and python3 (standard library). Deterministic on one machine's
# tool versions (-fflags +bitexact, fixed sources).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=$here/modern
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$out/hdr" "$out/raw" "$out/video"
ff() { ffmpeg -v error -y "$@"; }
exact=(-fflags +bitexact -flags:v +bitexact -map_metadata -1)

# --- HDR: one SDR colour chart, as HDR code values, through real encoders ---
python3 "$here/hdr-chart.py" sdr "$out/hdr/chart.png"
python3 "$here/hdr-chart.py" hdr "$work/pq.png" --transfer pq
python3 "$here/hdr-chart.py" hdr "$work/hlg.png" --transfer hlg
python3 "$here/hdr-chart.py" hdr "$work/pq-p3.png" --transfer pq --primaries p3
python3 "$here/hdr-chart.py" patches > "$out/hdr/chart-patches.json"

# 2 s at 10 fps, a keyframe every second; limited-range BT.2020 Y'CbCr 4:2:0, 10 bits.
yuv=(-vf "scale=out_color_matrix=bt2020:out_range=tv,format=yuv420p10le")
still=(-loop 1 -framerate 10)
x265=(-c:v libx265 -preset medium -crf 16 -tag:v hvc1)
hevc_vui() { echo "log-level=error:keyint=10:min-keyint=10:colorprim=bt2020:transfer=$1:colormatrix=bt2020nc:range=limited:repeat-headers=1$2"; }
mastering="master-display=G(13250,34500)B(7500,3000)R(34000,16000)WP(15635,16450)L(10000000,1):max-cll=203,64:hdr10=1"
container=(-color_primaries bt2020 -colorspace bt2020nc -color_range tv)

# HDR10: PQ in the container (colr nclx) and the bitstream, mastering display
# 1000 cd/m2 and MaxCLL 203 (the chart's white is its brightest pixel).
ff "${still[@]}" -i "$work/pq.png" -t 2 "${yuv[@]}" "${x265[@]}" -x265-params "$(hevc_vui smpte2084 ":$mastering")" \
    "${container[@]}" -color_trc smpte2084 "${exact[@]}" "$out/hdr/hdr10-pq.mp4"
# HLG (BT.2100), no metadata: what phones record.
ff "${still[@]}" -i "$work/hlg.png" -t 2 "${yuv[@]}" "${x265[@]}" -x265-params "$(hevc_vui arib-std-b67 "")" \
    "${container[@]}" -color_trc arib-std-b67 "${exact[@]}" "$out/hdr/hlg.mp4"
# PQ signalled only in the HEVC VUI: no colr box, no mastering metadata (1000 cd/m2 assumed).
ff "${still[@]}" -i "$work/pq.png" -t 2 "${yuv[@]}" "${x265[@]}" -x265-params "$(hevc_vui smpte2084 "")" \
    "${exact[@]}" "$out/hdr/pq-vui-only.mp4"
# AV1 (SVT-AV1) PQ with its mastering display and content light level in metadata OBUs.
ff "${still[@]}" -i "$work/pq.png" -t 2 "${yuv[@]}" -c:v libsvtav1 -preset 8 -crf 20 -g 10 \
    -svtav1-params "mastering-display=G(0.170,0.797)B(0.131,0.046)R(0.708,0.292)WP(0.3127,0.3290)L(1000,0.0001):content-light=203,64:enable-hdr=1" \
    "${container[@]}" -color_trc smpte2084 "${exact[@]}" "$work/av1-pq.mp4" 2> /dev/null
cp "$work/av1-pq.mp4" "$out/hdr/av1-pq-mastering.mp4"
# Dolby Vision: profile 8.4 (an iPhone's: HLG base, hvc1 with dvvC), profile 5
# (dvh1 with dvcC, no compatible base; its base made full-range as profile 5's is),
# profile 10.1 (AV1 under dav1 with dvvC, an HDR10 base).
python3 "$here/mp4-edit.py" dolby-vision "$out/hdr/hlg.mp4" "$out/hdr/dolby-vision-8.4-hlg.mp4" --profile 8 --compatibility 4
ff "${still[@]}" -i "$work/pq.png" -t 2 -vf "scale=out_color_matrix=bt2020:out_range=pc,format=yuv420p10le" "${x265[@]}" \
    -x265-params "log-level=error:keyint=10:min-keyint=10:range=full:repeat-headers=1" "${exact[@]}" "$work/p5.mp4"
python3 "$here/mp4-edit.py" dolby-vision "$work/p5.mp4" "$out/hdr/dolby-vision-5.mp4" --profile 5 --compatibility 0 --entry dvh1
python3 "$here/mp4-edit.py" dolby-vision "$work/av1-pq.mp4" "$out/hdr/dolby-vision-10.1-av1.mp4" --profile 10 --compatibility 1 --entry dav1

# HDR stills: AVIF (libaom, through ffmpeg's avif muxer) in BT.2020 and in P3,
# and a 16-bit JPEG XL (libjxl) in P3, all PQ.
for p in "pq bt2020" "pq-p3 smpte432"; do
    set -- $p
    ff -i "$work/$1.png" "${yuv[@]}" -c:v libaom-av1 -crf 20 -cpu-used 6 -still-picture 1 -color_primaries "$2" \
        -color_trc smpte2084 -colorspace bt2020nc -color_range tv -frames:v 1 "${exact[@]}" "$out/hdr/$1.avif"
done
# An AVIF whose base is that PQ chart and whose gain map (green and magenta, never
# to be shown) maps it down: a tmap item in an altr group (make-gainmap.py).
python3 "$here/make-gainmap.py" "$work/pq.png" "$out/hdr/hdr-base-gain-map.avif"
ff -i "$work/pq-p3.png" -c:v libjxl -distance 1 -color_primaries smpte432 -color_trc smpte2084 -colorspace rgb \
    -frames:v 1 "${exact[@]}" "$out/hdr/pq-p3-16bit.jxl"

# --- RAW: ExifTool's real maker structures with real previews grafted in ---
python3 "$here/make-raw.py" "$out/raw" "$out/raw"

# --- Containers and posters ---
# A fragmented MP4 as a live encoder leaves it: no mehd, every duration "unknown".
ff -f lavfi -i testsrc2=size=320x240:rate=30 -t 1.07 -c:v libx264 -g 15 -pix_fmt yuv420p -video_track_timescale 30000 \
    -movflags frag_keyframe+empty_moov+default_base_moof "${exact[@]}" "$work/frag.mp4"
python3 "$here/mp4-edit.py" live-fragmented "$work/frag.mp4" "$out/video/fragmented-no-mehd.mp4"
# The same with a mehd stating the fragments' duration (32 frames at 30 fps =
# 32000 in the movie timescale of 30000), the other durations still unknown.
python3 "$here/mp4-edit.py" live-fragmented "$work/frag.mp4" "$out/video/fragmented-mehd.mp4" --mehd 32000
# A stream copy cut at 1.2 s of a clip with one keyframe: its edit list starts
# 1.2 s after its only sync sample, a pre-roll the decoder must drop.
ff -f lavfi -i testsrc2=size=320x240:rate=25 -t 3 -c:v libx264 -g 1000 -keyint_min 1000 -sc_threshold 0 -bf 2 \
    -pix_fmt yuv420p "${exact[@]}" "$work/one-key.mp4"
ff -ss 1.2 -i "$work/one-key.mp4" -c copy "${exact[@]}" "$out/video/edit-list-preroll.mp4"
# 1 s of HEVC with B-frames, one keyframe, black (the first two frames).
ff -f lavfi -i "testsrc2=size=320x240:rate=25,drawbox=x=0:y=0:w=iw:h=ih:color=black:t=fill:enable='lt(t,0.08)'" -t 1 \
    -c:v libx265 -x265-params "log-level=error:keyint=250:min-keyint=250:scenecut=0:bframes=3" -pix_fmt yuv420p \
    -tag:v hvc1 "${exact[@]}" "$out/video/black-only-keyframe-hevc.mp4"
# Matroska whose title says "webm": its DocType (matroska) decides, not the bytes "webm".
ff -f lavfi -i testsrc2=size=320x240:rate=25 -t 1 -c:v libvpx-vp9 -b:v 200k -metadata title="exported for the webm player" \
    -f matroska "${exact[@]}" "$out/video/matroska-titled-webm.mkv"
# An MPEG-1 system stream of one picture (6 KB: a VCD-era camera's shortest clip).
ff -f lavfi -i testsrc2=size=160x120:rate=25 -t 0.04 -c:v mpeg1video -f mpeg "${exact[@]}" "$out/video/mpeg1-system-6k.mpg"
# QuickTime Motion-JPEG with two fields per sample (mjpa, interlaced) and PCM sound, as cameras wrote it.
ff -f lavfi -i testsrc2=size=240x160:rate=15 -f lavfi -i sine=frequency=440:sample_rate=8000 -t 1 \
    -vf "format=yuvj420p" -c:v mjpeg -q:v 9 -vtag jpeg -c:a pcm_u8 -f mov "${exact[@]}" "$out/video/quicktime-mjpeg.mov"

echo "written: $out"
