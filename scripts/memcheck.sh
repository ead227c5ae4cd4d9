#!/usr/bin/env bash
# The memory check: runs `share ingest` (the release build: what ships, and 3-4
# times faster under valgrind than the debug build, whose Swift runs unoptimised) under
# valgrind memcheck, and the decoder helper `share-helper` it starts (valgrind
# follows the exec: --trace-children=yes; one log per process), on
#   - small and odd-size media generated here: videos at 1×1 … 359×641 in eight
#     codecs, and 1×1, 1×5000, 16-bit, CMYK and grey+alpha images, and JPEGs
#     decoded at 1/8, 1/4 and 1/2 of their size;
#   - every committed fixture in testdata/media, testdata/fidelity and testdata/sample-drop;
#   - the HEIF fixtures of testdata/heif: libavcodec tiles shrunk by libswscale
#     into a canvas, libheif's planes, embedded thumbnails;
#   - the fixtures of testdata/modern (issue 23): HDR video and stills (16-bit
#     RGB from libswscale and libheif, tone-mapped), Dolby Vision 5's grey plane,
#     AV1 under dav1, JPEG XL through libavcodec, RAW previews, fragmented MP4s
#     read by our box reader, posters decoded forward;
#   - the motion photos and Live Photos of testdata/motion (issue 24): moment
#     facts read from the descriptor, videos copied out in the kernel and probed,
#     still-image-time posters decoded forward;
#   - Ultra HDR JPEGs (issue 54: testdata/spatial's, upright and EXIF 6, and one
#     made from a real photo by bench/make-ultrahdr-photo.py) with JPEG
#     previews: each gain map decoded from memory, scaled, turned and encoded
#     for the thumbnail and every preview, and assembled by the parent; iPhone
#     HEICs' HEVC maps and AVIFs' AV1 maps (testdata/spatial's, and that real
#     photo made an AVIF with a `tmap` by bench/make-gainmap-avif.py) decoded by
#     libavcodec (dav1d for AV1) and shrunk by libswscale;
#   - Display P3 photos (testdata/real's Vision Pro HEIC and iPhone 13 mini
#     JPEG; issue 62): each thumbnail converted to sRGB by LittleCMS with the
#     transforms kept (Sources/CShims/icc_srgb.c);
#   - a folder of 3,000 entries (text files and a few images);
# and `share watch --once` on an inbox whose drop has long names (the watcher's
# own folder walk, FileSystem/DropSignature.swift).
#
# Fails (exit 1, printing valgrind's report) on any error valgrind reports that
# scripts/memcheck.supp does not suppress: invalid reads and writes, use of
# uninitialised values, invalid or mismatched frees, overlapping copies. Also
# fails if `share` crashes, or if a generated file is not delivered with a
# thumbnail (then its decoder was not exercised). Prints the elapsed time.
#
# usage: scripts/memcheck.sh
# env:   SHARE=path/to/share         use this binary instead of building .build/release/share
#        MEMCHECK_JOBS=1|2           valgrind processes at once (default 2, never more)
#        MEMCHECK_VALGRIND_ARGS=...  extra valgrind arguments (e.g. --track-origins=yes)
#        MEMCHECK_KEEP=1             keep the temporary folder (it is kept anyway on failure)
#        MEMCHECK_TIME_LIMIT=900     the stages' time limits, seconds (test.sh: 3600)
#        MEMCHECK_BATCHES="videos-1 …" run only these batches (for debugging; a partial check);
#                                    `one` (not in the default list) checks testdata/media/photo.jpg alone
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
started=$SECONDS

# Extra arguments for every `share ingest` / `share watch` run, in one place.
# Decoding runs in sandboxed helper processes by default. `share` decodes
# nothing itself (issue 59): the decoders run in `share-helper`, which valgrind follows
# (--trace-children=yes, below). A sandboxed helper forked under valgrind dies
# in its seccomp policy (valgrind's own calls are not on the allowlist), so the
# helpers run unsandboxed here: `--isolation none`.
share_extra_args=(--isolation none)

jobs="${MEMCHECK_JOBS:-2}"
if ! [[ "$jobs" =~ ^[12]$ ]]; then jobs=2; fi

for tool in valgrind gdb ffmpeg vips jq; do
    command -v "$tool" >/dev/null || { echo "memcheck: $tool is missing (scripts/setup.sh installs it)" >&2; exit 2; }
done

share="${SHARE:-}"
if [[ -z "$share" ]]; then
    # Reuses .build: after scripts/test.sh's release build this is only a check.
    swift build -c release --product share 2>&1 | grep -vE 'warning: (prohibited flag|'"'"'main'"'"': Source files)' | tail -n 1
    swift build -c release --product share-helper 2>&1 | grep -vE 'warning: (prohibited flag|'"'"'main'"'"': Source files)' | tail -n 1
    share="$root/.build/release/share"
fi
# The helper executable: beside `share` (or SHARE_HELPER_PATH when set).
helper="${SHARE_HELPER_PATH:-$(dirname "$(readlink -f "$share")")/share-helper}"
[[ -x "$helper" ]] || { echo "memcheck: the decoder helper $helper is missing (build it: swift build --product share-helper)" >&2; exit 2; }

work="$(mktemp -d "${TMPDIR:-/tmp}/share-memcheck-XXXXXX")"
keep="${MEMCHECK_KEEP:-}"
cleanup() {
    local status=$? pid
    if [[ "$status" != 0 ]]; then
        # Stopped early (a generator failed, or Ctrl-C): stop our valgrind runs
        # still going (those without a status yet), by their process ids.
        for pid in "$work"/logs/*.pid; do
            if [[ -e "$pid" && ! -e "${pid%.pid}.status" ]]; then kill -KILL "$(cat "$pid")" 2>/dev/null || true; fi
        done
        wait || true
    fi
    if [[ -z "$keep" && "$status" == 0 ]]; then rm -rf "$work"; else echo "memcheck: kept $work"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM
mkdir -p "$work/videos" "$work/images" "$work/many" "$work/inbox/long-names" "$work/logs" "$work/reports" "$work/containers"

# valgrind 3.19 cannot read the DWARF 5 that Swift emits: for some builds it only
# warns, for others its debug-info reader gives up and valgrind exits. It never
# gets line numbers from it anyway, so it runs a copy without debug sections;
# the symbol table stays, so frames keep their names (and suppressions match).
if command -v objcopy >/dev/null; then
    objcopy --strip-debug "$share" "$work/share"
    share="$work/share"
    objcopy --strip-debug "$helper" "$work/share-helper"
    helper="$work/share-helper"
fi
export SHARE_HELPER_PATH="$helper"

# --- valgrind ----------------------------------------------------------------

valgrind_args=(
    --tool=memcheck
    --error-exitcode=99
    --leak-check=no
    --num-callers=40
    --suppressions="$root/scripts/memcheck.supp"
    # share-helper (the template and the helpers it forks) is checked too.
    --trace-children=yes
    # dav1d's hand-written assembly (AVIF, through libheif) needs these to
    # run correctly under valgrind.
    --vex-guest-max-insns=20 --vex-guest-chase=no
)
# shellcheck disable=SC2206
valgrind_args+=(${MEMCHECK_VALGRIND_ARGS:-})

# Vector code valgrind cannot follow runs as plain C: libvips' orc kernels
# (VIPS_NOVECTOR) and libjpeg-turbo's SIMD (JSIMD_FORCENONE). valgrind reports
# libjpeg-turbo's SIMD output at 1/4 and 1/8 scale as uninitialised for many
# sizes (djpeg -scale 1/8 alone does it on a 361x203 JPEG), yet that output is
# byte-identical with MALLOC_PERTURB_ set to any value and to the plain C
# decoder's: memcheck's definedness tracking of those instructions is
# approximate (libjpeg-turbo issue 238), the decode is not.
memcheck_env=(VIPS_NOVECTOR=1 JSIMD_FORCENONE=1)

# A run whose valgrind uses no CPU for this long has stalled (stall_watch).
stall_seconds="${MEMCHECK_STALL_SECONDS:-180}"

# stall_watch PID NAME: while PID runs, checks every 10 s that its CPU time
# grows; once it has not for $stall_seconds, writes every thread's stack to
# logs/NAME.stall (gdb through valgrind's gdbserver, vgdb) and kills it.
stall_watch() {
    local pid=$1 name=$2 last="" now still=0
    while now=$(awk '{ print $14 + $15 }' "/proc/$pid/stat" 2>/dev/null); do
        if [[ "$now" == "$last" ]]; then still=$((still + 10)); else still=0 last=$now; fi
        if ((still >= stall_seconds)); then
            timeout 120 gdb -q -batch -ex "target remote | vgdb --pid=$pid" -ex "thread apply all bt 30" "$share" \
                >"$work/logs/$name.stall" 2>&1 || true
            kill -KILL "$pid" 2>/dev/null || true
            return 0
        fi
        sleep 10
    done
}

# Valgrind's reports of errors, as they are printed (a killed run has no summary).
error_reports() { grep -cE '^==[0-9]+== (Invalid (read|write|free)|Conditional jump|Use of uninitialised|Syscall param|Mismatched free|Source and destination overlap)' "$1" || true; }

# memcheck NAME COMMAND ARGS... : runs `share COMMAND ARGS...` under valgrind.
# A run that stalls is killed, and the check fails with every thread's stack:
# any stall is a failure. (libvips 8.14.1's lost task, which once made stalls
# here, cannot happen any more: its idle workers never leave, see
# Sources/CShims/vips_threadset.c.)
memcheck() {
    local name=$1 command=$2
    shift 2
    local begun=$SECONDS status=0 pid
    rm -rf "$work/containers/$name" "$work/logs/$name.stall"
    # A batch may have a pipeline of its own (pipeline-NAME.json).
    local pipeline="$work/pipeline.json"
    [ -f "$work/pipeline-$name.json" ] && pipeline="$work/pipeline-$name.json"
    env "${memcheck_env[@]}" valgrind "${valgrind_args[@]}" --log-file="$work/logs/$name.valgrind.%p" \
        "$share" "$command" "${share_extra_args[@]}" --pipeline "$pipeline" --container "$work/containers/$name" --quiet "$@" \
        >"$work/logs/$name.out" 2>"$work/logs/$name.err" &
    pid=$!
    echo "$pid" >"$work/logs/$name.pid"
    stall_watch "$pid" "$name" &
    wait "$pid" || status=$?
    kill "$!" 2>/dev/null || true
    wait "$!" || true
    if [[ -e "$work/logs/$name.stall" ]]; then
        if grep -qE '^Thread ' "$work/logs/$name.stall"; then
            echo "memcheck: $name: stalled for ${stall_seconds} s and killed; every thread's stack:"
            grep -E '^(Thread|#)' "$work/logs/$name.stall" | sed -n '1,200p'
        else
            echo "memcheck: $name: stalled for ${stall_seconds} s and killed; gdb read no stack:"
            sed -n '1,20p' "$work/logs/$name.stall"
        fi
        status=98
    fi
    echo "$status" >"$work/logs/$name.status"
    echo "memcheck: $name: done in $((SECONDS - begun)) s (exit $status)"
}

# shellcheck disable=SC2206
batches=(${MEMCHECK_BATCHES:-many videos-1 videos-2 fixtures heif modern motion images gainmaps watch})
for batch in "${batches[@]}"; do
    [[ "$batch" =~ ^(one|many|videos-1|videos-2|fixtures|heif|modern|motion|images|gainmaps|watch)$ ]] || { echo "memcheck: no batch named $batch" >&2; exit 2; }
done
run_batch() {
    case "$1" in
        one) memcheck one ingest --report "$work/reports/one.json" testdata/media/photo.jpg ;;
        many) memcheck many ingest --report "$work/reports/many.json" "$work/many" ;;
        videos-1) memcheck videos-1 ingest --report "$work/reports/videos-1.json" "${video_files[@]:0:half}" ;;
        videos-2) memcheck videos-2 ingest --report "$work/reports/videos-2.json" "${video_files[@]:half}" ;;
        fixtures) memcheck fixtures ingest --report "$work/reports/fixtures.json" testdata/media/* testdata/fidelity/* testdata/sample-drop ;;
        heif) memcheck heif ingest --report "$work/reports/heif.json" testdata/heif/* ;;
        modern) memcheck modern ingest --report "$work/reports/modern.json" testdata/modern ;;
        motion) memcheck motion ingest --report "$work/reports/motion.json" testdata/motion ;;
        # images also has issue 33 item 5's panoramas (a 360° photo's centre view), gain maps and stereo pairs,
        # and issue 54's AVIFs whose AV1 map is damaged, larger than it says, or 10-bit (delivered SDR).
        images) memcheck images ingest --report "$work/reports/images.json" "$work"/images/* testdata/spatial/*.jpg testdata/spatial/*.heic testdata/spatial/*.avif testdata/real/vision-pro.HEIC testdata/real/iphone13mini-apple-gainmap-old.jpg ;;
        # Gain maps carried into the thumbnail and JPEG previews (issue 54): Ultra HDR JPEGs, iPhone HEICs (Apple's map, a tmap), AVIFs (an AV1 map).
        gainmaps) memcheck gainmaps ingest --report "$work/reports/gainmaps.json" testdata/spatial/ultrahdr*.jpg testdata/spatial/apple-hdr*.heic testdata/spatial/sdr-tmap.avif "$work/gainmaps" ;;
        # --report-dir: the contact sheet, its tiles decoded to pixels (PicturePixels) and composed.
        watch) memcheck watch watch --once --settle 0 --on-success keep --report-dir "$work/reports/watch-pictures" "$work/inbox" ;;
    esac
}
# The default pipeline with time limits raised: valgrind runs code 20–50 times
# slower, and a decode cut short by its time limit is a decode not checked.
# MEMCHECK_TIME_LIMIT: those limits in seconds (default 900; scripts/test.sh, which
# runs this beside the suite at the lowest priority, gives 3600).
jq --argjson limit "${MEMCHECK_TIME_LIMIT:-900}" '.name = "memcheck" | .stages |= map(if has("timeLimit") then .timeLimit = $limit else . end)' pipelines/default.json >"$work/pipeline.json"
jq '.stages |= map(if .stage == "thumbnail" then .sizes = [360, 720] | .format = "jpeg" else . end)' "$work/pipeline.json" >"$work/pipeline-gainmaps.json"
mkdir -p "$work/gainmaps"
python3 bench/make-ultrahdr-photo.py testdata/privacy/iphone6-gps.jpg "$work/gainmaps/iphone6-ultrahdr.jpg"
python3 bench/make-gainmap-avif.py "$work/gainmaps/iphone6-ultrahdr.jpg" "$work/gainmaps/iphone6-gainmap.avif" >/dev/null

# A folder of 3,000 entries: text files (names of varied length, so entries fall
# at every offset of glibc's readdir buffer) and a few images.
for i in $(seq 1 2990); do
    printf 'note %d\n' "$i" >"$work/many/note-$i-$(printf '%*s' $((i % 97)) '' | tr ' ' x).txt"
done
for name in photo.jpg alpha.png png16.png gray.jpg exif8.jpg progressive.jpg cmyk.jpg tiny-1x1.png wide-2000x10.png image.webp; do
    cp "testdata/media/$name" "$work/many/"
done
many_count=$(find "$work/many" -mindepth 1 -maxdepth 1 | wc -l)

# The 3,000-entry folder takes longest under valgrind: it starts first, while
# the rest is generated.
start_batch() {  # at most $jobs valgrind processes at once
    while (($(jobs -rp | wc -l) >= jobs)); do wait -n || true; done
    run_batch "$1" &
}
echo "memcheck: running batches ${batches[*]} under valgrind, $jobs at a time"
if [[ " ${batches[*]} " == *" many "* ]]; then start_batch many; fi

# --- Generated media -------------------------------------------------------

ffmpeg_make() {  # ffmpeg_make OUTPUT SIZE ARGS... : a 1 s test pattern, keyframes every 5 frames
    local output=$1 size=$2
    shift 2
    ffmpeg -v error -nostdin -y -f lavfi -i "testsrc=s=$size:d=1:r=10" -g 5 "$@" "$output" 2>"$work/ffmpeg.err"
}

skipped=()
sizes=(1x1 2x2 6x4 17x9 268x156 359x641)
# name, encoder, container, pixel format (4:2:0, what cameras and phones make)
codecs=("h264 libx264 mp4 yuv420p" "mpeg4 mpeg4 mp4 yuv420p" "flv1 flv flv yuv420p" "h263p h263p avi yuv420p"
    "mjpeg mjpeg avi yuvj420p" "vp8 libvpx webm yuv420p" "mpeg2 mpeg2video mpg yuv420p" "theora libtheora ogv yuv420p")
for entry in "${codecs[@]}"; do
    read -r name encoder extension format <<<"$entry"
    for size in "${sizes[@]}"; do
        output="$work/videos/$name-$size.$extension"
        if ffmpeg_make "$output" "$size" -c:v "$encoder" -pix_fmt "$format"; then continue; fi
        rm -f "$output"
        reason=$(head -n 1 "$work/ffmpeg.err" | sed 's/^\[[^]]*\] //')
        if [[ "$name" == h264 ]]; then
            # x264 refuses odd sizes in 4:2:0; 4:4:4 (High 4:4:4) takes them.
            output="$work/videos/$name-444-$size.$extension"
            if ffmpeg_make "$output" "$size" -c:v "$encoder" -pix_fmt yuv444p; then
                echo "memcheck: $name $size: $encoder refuses 4:2:0 ($reason); made in 4:4:4 instead"
                continue
            fi
            rm -f "$output"
        fi
        skipped+=("$name $size: $encoder refuses it ($reason)")
    done
done
# Plain H.263 only allows five picture sizes (128×96, 176×144, 352×288, 704×576,
# 1408×1152), none of the odd ones above: those are made with H.263+ (h263p),
# and one plain H.263 clip at QCIF stands for the phones' 3GP.
ffmpeg_make "$work/videos/h263-176x144.3gp" 176x144 -c:v h263
echo "memcheck: H.263: the odd sizes use H.263+ (h263p); plain H.263 only at 176x144 (its fixed sizes)"

# Made, but libav's own decoder refuses them (ffmpeg cannot read them back: libav's
# Theora decoder rejects libtheora's picture offset in frames under 16×16): no
# poster is expected of these; their probe still runs under valgrind.
: >"$work/no-poster-expected"
for video in "$work"/videos/*; do
    if ! ffmpeg -v error -nostdin -i "$video" -f null - >/dev/null 2>"$work/ffmpeg.err"; then
        echo "$video: ingested  no thumbnail" >>"$work/no-poster-expected"
        echo "memcheck: libav cannot decode $(basename "$video") ($(head -n 1 "$work/ffmpeg.err" | sed 's/^\[[^]]*\] //')): no poster expected"
    fi
done

# Images: 1×1, one-pixel-wide strips, 16-bit PNG and TIFF at odd sizes, CMYK
# JPEG, grey+alpha PNG (8 and 16 bits), JPEGs decoded at reduced scale.
image() {  # image OUTPUT SIZE ARGS...
    local output=$1 size=$2
    shift 2
    ffmpeg -v error -nostdin -y -f lavfi -i "testsrc=s=$size" -frames:v 1 "$@" "$output"
}
image "$work/images/tiny-1x1.png" 1x1
image "$work/images/tiny-1x1.jpg" 1x1
image "$work/images/tall-1x5000.png" 1x5000
image "$work/images/tall-1x5000.jpg" 1x5000
image "$work/images/wide-5000x1.png" 5000x1
image "$work/images/rgb48-17x9.png" 17x9 -pix_fmt rgb48be
image "$work/images/rgba64-359x641.png" 359x641 -pix_fmt rgba64be
image "$work/images/gray16-6x4.png" 6x4 -pix_fmt gray16be
image "$work/images/rgb48-17x9.tif" 17x9 -pix_fmt rgb48le
image "$work/images/rgba64-359x641.tif" 359x641 -pix_fmt rgba64le
image "$work/images/gray16-1x1.tif" 1x1 -pix_fmt gray16le
alpha_ramp="format=rgba,geq=r='r(X,Y)':g='g(X,Y)':b='b(X,Y)':a='255*X/W'"  # transparent at the left
image "$work/images/grey-alpha-17x9.png" 17x9 -vf "$alpha_ramp" -pix_fmt ya8
image "$work/images/grey-alpha-359x641.png" 359x641 -vf "$alpha_ramp" -pix_fmt ya8
image "$work/images/grey-alpha16-9x17.png" 9x17 -vf "$alpha_ramp" -pix_fmt ya16be
image "$work/images/src-268x156.png" 268x156
vips colourspace "$work/images/src-268x156.png" "$work/images/cmyk-268x156.jpg" cmyk
image "$work/images/src-17x9.png" 17x9
vips colourspace "$work/images/src-17x9.png" "$work/images/cmyk-17x9.jpg" cmyk
# JPEGs large enough to be decoded at 1/8, 1/4 and 1/2 (libjpeg's DCT scaling,
# MediaKit's JPEGScale), at sizes those factors do not divide.
image "$work/images/scaled-2881x1999.jpg" 2881x1999
image "$work/images/scaled-1447x813.jpg" 1447x813
image "$work/images/scaled-723x9.jpg" 723x9
vips copy "$work/images/scaled-1447x813.jpg" "$work/images/progressive-1447x813.jpg[interlace]"
image "$work/images/src-2900x17.png" 2900x17
vips colourspace "$work/images/src-2900x17.png" "$work/images/cmyk-2900x17.jpg" cmyk
rm "$work/images/src-268x156.png" "$work/images/src-17x9.png" "$work/images/src-2900x17.png"
vipsheader "$work/images/cmyk-17x9.jpg" | grep -q ', cmyk,' || { echo "memcheck: vips made no CMYK JPEG" >&2; exit 2; }

# An inbox for `share watch`: one drop of 400 files with 200-byte names (100 KB
# of directory entries, several buffers' worth).
for i in $(seq 1 400); do
    printf 'watched %d\n' "$i" >"$work/inbox/long-names/$(printf '%03d' "$i")-$(printf '%*s' 192 '' | tr ' ' y).txt"
done
# And a drop of pictures, whose contact sheet (--report-dir) decodes each
# thumbnail to pixels (PicturePixels) and composes them: odd sizes, grey, CMYK.
mkdir -p "$work/inbox/pictures"
cp testdata/media/photo.jpg testdata/media/cmyk.jpg testdata/media/portrait-exif6.jpg "$work/images/tiny-1x1.jpg" "$work/images/tall-1x5000.jpg" "$work/images/grey-alpha-17x9.png" "$work/inbox/pictures/" 2>/dev/null ||
    cp testdata/media/photo.jpg testdata/media/cmyk.jpg testdata/media/portrait-exif6.jpg "$work/inbox/pictures/"

echo "memcheck: generated $(ls "$work/videos" | wc -l) videos, $(ls "$work/images" | wc -l) images, a folder of $many_count entries ($((SECONDS - started)) s)"
if ((${#skipped[@]})); then
    for combination in "${skipped[@]}"; do echo "memcheck: skipped $combination"; done
fi

video_files=("$work"/videos/*)
half=$(((${#video_files[@]} + 1) / 2))
for batch in "${batches[@]}"; do
    if [[ "$batch" != many ]]; then start_batch "$batch"; fi
done
wait

# --- Verdict -------------------------------------------------------------------

failed=0
fail() { echo "memcheck: FAIL: $*"; failed=1; }
# valgrind 3.19 cannot read the DWARF 5 that Swift emits: drop its complaints.
valgrind_report() { grep -vE '^### unhandled dwarf2|get_Form_(szB|contents)|Serious error when reading debug info|When reading debug info from' "$1" | sed -n '1,400p'; }

for batch in "${batches[@]}"; do
    status=$(cat "$work/logs/$batch.status")
    # share's own log (its pid: valgrind runs in the process it was started as);
    # the others are the helper template's and its helpers' (share-helper).
    log="$work/logs/$batch.valgrind.$(cat "$work/logs/$batch.pid")"
    helpers=0
    for helper_log in "$work/logs/$batch.valgrind."*; do
        [[ "$helper_log" == "$log" ]] && continue
        helpers=$((helpers + 1))
        # A child's log (share-helper, or a probe share forks): any error reported fails the batch. (A template is
        # killed when share is done with it, so its log may have no summary.)
        helper_summary=$(grep -E '== ERROR SUMMARY:' "$helper_log" | tail -n 1 | sed 's/^==[0-9]*== //' || true)
        if [[ "$(error_reports "$helper_log")" != 0 ]] || { [[ -n "$helper_summary" ]] && ! grep -q 'ERROR SUMMARY: 0 errors' <<<"$helper_summary"; }; then
            fail "$batch: child process ($helper_log): ${helper_summary:-errors reported}"
            valgrind_report "$helper_log"
        fi
    done
    if [[ "$helpers" == 0 ]]; then fail "$batch: valgrind followed no share-helper process (--trace-children)"; fi
    summary=$(grep -E '== ERROR SUMMARY:' "$log" | tail -n 1 | sed 's/^==[0-9]*== //' || true)
    if [[ -z "$summary" ]]; then
        fail "$batch: valgrind gave no error summary (exit $status): valgrind or share died"
        valgrind_report "$log"; sed -n '1,40p' "$work/logs/$batch.err"
    elif [[ "$status" == 99 ]] || ! grep -q 'ERROR SUMMARY: 0 errors' <<<"$summary"; then
        fail "$batch: $summary"
        valgrind_report "$log"
    elif [[ "$status" != 0 && "$status" != 1 ]]; then
        # 0: all delivered; 1: some items failed (the fixtures hold damaged files
        # on purpose). Anything else is a crash or an unusable run.
        fail "$batch: share exited $status"
        valgrind_report "$log"; sed -n '1,40p' "$work/logs/$batch.err"
    else
        echo "memcheck: $batch: $summary (share; and $helpers child processes: share-helper's template and helpers, share's sandbox probes)"
    fi
done

# Generated media must be delivered with a thumbnail, or their decoders were not
# exercised; the 3,000-entry folder and the watched drop must be delivered whole.
undelivered() {  # items of a report that are not ingested with a thumbnail
    jq -r '.items[] | select(.status != "ingested" or .thumbnail == null) | "\(.source): \(.status) \(.reason // "") \(.error // "no thumbnail")"' "$1"
}
for batch in "${batches[@]}"; do
    report="$work/reports/$batch.json"
    if [[ "$batch" != watch && ! -s "$report" ]]; then fail "$batch: no report"; continue; fi
    case "$batch" in
        videos-* | images | heif)
            missing=$(undelivered "$report" | grep -vxF -f "$work/no-poster-expected" -e '' || true)
            if [[ -n "$missing" ]]; then fail "$batch: not delivered with a thumbnail:"; echo "$missing"; fi
            ;;
        many)
            delivered=$(jq '.counts.ingested' "$report")
            [[ "$delivered" == "$many_count" ]] || fail "many: $delivered of $many_count entries delivered"
            ;;
        fixtures | modern)
            echo "memcheck: $batch: $(jq -r '.counts | "\(.items) items, \(.ingested) ingested, \(.failed) failed, \(.skipped) skipped"' "$report")"
            timed_out=$(jq -r '.items[] | select(.reason == "timeLimit") | .source' "$report")
            [[ -z "$timed_out" ]] || fail "$batch: cut short by the time limit under valgrind: $timed_out"
            ;;
        gainmaps)
            # Every photo of this batch has a gain map: a thumbnail without one means its map's path was not run.
            sdr=$(jq -r '.items[] | select(.thumbnailHdr != "gainMap") | "\(.source): \(.status) \(.warnings // [] | join("; "))"' "$report")
            [[ -z "$sdr" ]] || { fail "gainmaps: no gain map carried into the thumbnail of:"; echo "$sdr"; }
            ;;
        watch)
            grep -q 'ingested=400 ' "$work/logs/watch.out" || fail "watch: the drop was not delivered whole: $(cat "$work/logs/watch.out")"
            sheets=$(find "$work/reports/watch-pictures" -name '*.jpg' 2>/dev/null | wc -l)
            [[ "$sheets" == 2 ]] || fail "watch: $sheets contact sheets for the two drops"
            ;;
    esac
done

echo "memcheck: elapsed $((SECONDS - started)) s"
if ((failed)); then
    keep=1
    exit 1
fi
echo "memcheck: clean"
