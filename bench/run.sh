#!/usr/bin/env bash
# Runs the benchmark: `share ingest` (A, "ours") against the tools a user would
# pick instead (B, "theirs"), side by side in the same run, alternating
# A B A B ... over ROUNDS rounds, and prints medians, ratios ours/theirs, peak
# RSS and ours' per-stage timings. See BENCHMARKS.md.
#
# Environment:
#   SHARE_BIN=/path/to/share  use this binary (default: `swift build -c release`
#                             in the package, then .build/release/share)
#   ROUNDS=5                  timed rounds per scenario
#   WARMUP=1                  untimed warm-up runs of each side before timing (0: none)
#   SCENARIOS="photos videos mixed iphone scale"
#   OURS_VARIANTS="ours=ARGS ..."   several configurations of ours, run side by side
#                             in every round (A1 A2 … B), e.g. to price an option:
#                             OURS_VARIANTS="ours=--isolation=process ours-none=--isolation=none"
#                             (each NAME=ARGS: a side name starting with "ours",
#                             then extra `share ingest` arguments, comma-separated,
#                             the first of which may be @/path/to/another/share;
#                             default "ours=": one side, no extra arguments)
#   BEFORE_BIN=/path/to/share another build of share, run as a third side ("before")
#                             in every round of the non-scale scenarios, so a
#                             change is measured before and after in one run
#   FLOOR=1                   with photos: also time the floor (djpeg -scale 1/8 of
#                             every photo, CPU summed and divided by 2 cores, plus
#                             cp + sync of the files), ROUNDS times; with videos:
#                             one keyframe decoded per file (ffmpeg, less its
#                             start-up), the same way
#   CORPUS=bench/corpus       made by bench/make-corpus.sh
#   RESULTS=bench/results/<UTC timestamp>   where logs, reports and the summary go
#   BENCH_WORK=$RESULTS/work  where each run's fresh output folder is made (and
#                             removed after the run, untimed)
#
# The page cache cannot be dropped here (no privilege to rely on, and other work
# shares the machine), so both sides are warmed equally instead: one untimed run
# of each before the timed rounds, so both read the corpus from the page cache.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(dirname "$HERE")"
ROUNDS="${ROUNDS:-5}"
WARMUP="${WARMUP:-1}"
SCENARIOS="${SCENARIOS:-photos videos mixed iphone scale}"
FLOOR="${FLOOR:-1}"
CORPUS="${CORPUS:-$HERE/corpus}"
STAMP="$(date -u +%Y%m%dT%H%M%SZ)"
RESULTS="${RESULTS:-$HERE/results/$STAMP}"
WORK="${BENCH_WORK:-$RESULTS/work}"
export LC_ALL=C.UTF-8

say() { printf 'bench: %s\n' "$*" >&2; }
die() { printf 'bench: %s\n' "$*" >&2; exit 1; }

[[ -x /usr/bin/time ]] || die "/usr/bin/time is missing: apt-get install -y time"
for tool in vipsthumbnail vipsheader ffmpeg ffprobe file python3 xargs find sync; do
  command -v "$tool" >/dev/null || die "missing tool: $tool (see BENCHMARKS.md, 'Setup')"
done
for set in $SCENARIOS; do
  [[ "$set" == scale ]] && set="scale100 scale1000"
  for set in $set; do [[ -d "$CORPUS/$set" ]] || die "corpus set $CORPUS/$set is missing: run bash bench/make-corpus.sh first"; done
done

if [[ -z "${SHARE_BIN:-}" ]]; then
  say "building: swift build -c release (in $ROOT)"
  # share-helper too: share starts its decoder helpers from it, beside itself.
  (cd "$ROOT" && swift build -c release --product share && swift build -c release --product share-helper) >&2
  SHARE_BIN="$ROOT/.build/release/share"
fi
[[ -x "$SHARE_BIN" ]] || die "SHARE_BIN=$SHARE_BIN is not an executable"
SHARE_BIN="$(cd "$(dirname "$SHARE_BIN")" && pwd)/$(basename "$SHARE_BIN")"
if [[ -n "${BEFORE_BIN:-}" ]]; then
  [[ -x "$BEFORE_BIN" ]] || die "BEFORE_BIN=$BEFORE_BIN is not an executable"
  BEFORE_BIN="$(cd "$(dirname "$BEFORE_BIN")" && pwd)/$(basename "$BEFORE_BIN")"
fi

mkdir -p "$RESULTS/logs" "$RESULTS/reports" "$WORK"
RUNS="$RESULTS/runs.tsv"
printf 'scenario\tside\tround\twall_s\trss_kib\tcpu_s\texit\titems\tthumbnails\n' >"$RUNS"

# --- machine description ----------------------------------------------------
{
  echo "date_utc: $STAMP"
  echo "nproc: $(nproc)"
  echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
  echo "mem_total: $(awk '/MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo)"
  echo "kernel: $(uname -srm)"
  echo "disk: $(df -hT "$WORK" | awk 'NR==2 {print $1, $2, $3 " total,", $5 " free"}')"
  echo "loadavg_at_start: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "libvips: $(vips --version 2>/dev/null)"
  echo "ffmpeg: $(ffmpeg -version | head -1 | cut -d' ' -f3)"
  echo "file: $(file --version | head -1)"
  echo "share: $SHARE_BIN ($(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')$(git -C "$ROOT" diff --quiet HEAD -- Sources Package.swift 2>/dev/null || echo '+uncommitted'))"
  [[ -n "${BEFORE_BIN:-}" ]] && echo "before: $BEFORE_BIN"
  echo "rounds: $ROUNDS, warmup: $WARMUP"
} >"$RESULTS/machine.txt"
cat "$RESULTS/machine.txt" >&2

# --- one run ----------------------------------------------------------------
# run_one SCENARIO SIDE ROUND KIND DROP [EXTRA]
#   KIND: ours | before | photos | videos | mixed | iphone (the baseline script bench/baselines/KIND.sh)
#   EXTRA: ours' extra arguments, comma-separated
#   ROUND 0 is the untimed warm-up (logged, not counted).
run_one() {
  local scenario="$1" side="$2" round="$3" kind="$4" drop="$5" extra="${6:-}"
  local tag="$scenario-$side-r$round" out="$WORK/$scenario-$side-r$round"
  local log="$RESULTS/logs/$tag" rc=0 t0 t1 wall rss cpu items=0 thumbs=0
  rm -rf "$out"
  mkdir -p "$out"
  local cmd
  if [[ "$kind" == ours ]]; then
    local bin="$SHARE_BIN" extra_args=()
    if [[ -n "$extra" ]]; then IFS=, read -r -a extra_args <<<"$extra"; fi
    if [[ "${extra_args[0]:-}" == @* ]]; then bin="${extra_args[0]#@}"; extra_args=("${extra_args[@]:1}"); fi
    cmd=("$bin" ingest --container "$out/container" --report "$out/report.json" --quiet)
    if ((${#extra_args[@]})); then cmd+=("${extra_args[@]}"); fi
    cmd+=("$drop/")
  elif [[ "$kind" == before ]]; then
    cmd=("$BEFORE_BIN" ingest --container "$out/container" --report "$out/report.json" --quiet "$drop/")
  else
    cmd=(bash "$HERE/baselines/$kind.sh" "$drop" "$out/out")
  fi
  printf '%q ' "${cmd[@]}" >"$log.cmd"; echo >>"$log.cmd"
  t0=$(date +%s%N)
  /usr/bin/time -f '%e %M %U %S' -o "$log.time" -- "${cmd[@]}" >"$log.out" 2>"$log.err" || rc=$?
  t1=$(date +%s%N)
  wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.3f", (b - a) / 1e9}')
  rss=$(tail -1 "$log.time" | awk '{print $2}')
  cpu=$(tail -1 "$log.time" | awk '{printf "%.2f", $3 + $4}')
  # What each side delivered: items and thumbnails.
  if [[ "$kind" == ours || "$kind" == before ]]; then
    if [[ -f "$out/report.json" ]]; then
      cp "$out/report.json" "$RESULTS/reports/$tag.json"
      read -r items thumbs < <(python3 - "$out/report.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
items = [i for i in r.get("items", []) if i.get("status") == "ingested"]
thumbs = sum(1 for i in items if i.get("thumbnail") or (i.get("entry") or {}).get("thumbnail"))
print(len(items), thumbs)
PY
      )
    fi
  else
    if [[ -d "$out/out/media" ]]; then
      items=$(find "$out/out/media" -type f | wc -l)
    else
      items=$(find "$out/out" -maxdepth 1 -type f ! -name '*_thumb.jpg' ! -name '*.MP4.jpg' ! -name '*.duration' | wc -l)
    fi
    thumbs=$(find "$out/out" -type f -size +0 \( -path '*/thumbs/*' -o -name '*_thumb.jpg' -o -name '*.MP4.jpg' \) | wc -l)
  fi
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$scenario" "$side" "$round" "$wall" "$rss" "$cpu" "$rc" "$items" "$thumbs" >>"$RUNS"
  say "$(printf '%-7s %-7s %-7s %7.2f s  cpu %6.2f s  %6d MiB  exit %d  items %s thumbs %s' "$scenario" "$side" \
    "$([[ $round == 0 ]] && echo warmup || echo "r$round")" "$wall" "$cpu" $((rss / 1024)) "$rc" "$items" "$thumbs")"
  rm -rf "$out"
}

# scenario NAME A_SIDE A_KIND A_DROP B_SIDE B_KIND B_DROP
#   With A_KIND ours and OURS_VARIANTS set, A is each variant in turn (A1 A2 … B),
#   except in scale.
scenario() {
  local name="$1" a_side="$2" a_kind="$3" a_drop="$4" b_side="$5" b_kind="$6" b_drop="$7" r variant
  local variants=("$a_side=")
  # (scale compares ours with ours on ten times the files: no variants there)
  if [[ "$a_kind" == ours && "$name" != scale && -n "${OURS_VARIANTS:-}" ]]; then read -r -a variants <<<"$OURS_VARIANTS"; fi
  say "scenario $name: ${variants[*]%%=*} vs $b_side, $ROUNDS rounds, A B A B"
  local c=""
  [[ -n "${BEFORE_BIN:-}" && "$name" != scale ]] && c=before
  if [[ "$WARMUP" != 0 ]]; then
    for variant in "${variants[@]}"; do run_one "$name" "${variant%%=*}" 0 "$a_kind" "$a_drop" "${variant#*=}"; done
    run_one "$name" "$b_side" 0 "$b_kind" "$b_drop"
    [[ -n "$c" ]] && run_one "$name" before 0 before "$a_drop"
  fi
  for ((r = 1; r <= ROUNDS; r++)); do
    for variant in "${variants[@]}"; do run_one "$name" "${variant%%=*}" "$r" "$a_kind" "$a_drop" "${variant#*=}"; done
    run_one "$name" "$b_side" "$r" "$b_kind" "$b_drop"
    [[ -n "$c" ]] && run_one "$name" before "$r" before "$a_drop"
  done
  return 0
}

# The photos floor (issue 16): what any tool must spend at least. libjpeg's
# entropy decoding at 1/8 DCT scale (djpeg -scale 1/8, the shrink-on-load both
# sides use), its CPU summed over every photo and divided by the 2 cores, plus
# copying the files (cp + sync, wall). Written to floor.tsv.
photos_floor() {
  local drop="$1" r cpu copy
  command -v djpeg >/dev/null || { say "no djpeg (apt-get install libjpeg-turbo-progs): photos floor skipped"; return 0; }
  printf 'round\tdjpeg_cpu_s\tcopy_s\tfloor_s\n' >"$RESULTS/floor.tsv"
  for ((r = 1; r <= ROUNDS; r++)); do
    /usr/bin/time -f '%U %S' -o "$RESULTS/logs/floor-r$r.time" -- \
      sh -c 'for f in "$@"; do djpeg -scale 1/8 -outfile /dev/null "$f"; done' sh "$drop"/* 2>/dev/null
    cpu=$(tail -1 "$RESULTS/logs/floor-r$r.time" | awk '{printf "%.3f", $1 + $2}')
    copy=$(copy_seconds "$drop" "$WORK/floor-r$r")
    printf '%s\t%s\t%s\t%s\n' "$r" "$cpu" "$copy" "$(awk -v c="$cpu" -v k="$copy" 'BEGIN {printf "%.3f", c / 2 + k}')" >>"$RESULTS/floor.tsv"
    say "$(printf 'floor   r%-6s djpeg cpu %6.2f s  copy %5.2f s' "$r" "$cpu" "$copy")"
  done
}

# Seconds (wall) to copy every file of DROP into a new folder OUT with cp, then
# sync: the copy every floor includes. OUT is removed after.
copy_seconds() {
  local t0 t1
  rm -rf "$2"; mkdir -p "$2"
  t0=$(date +%s%N); cp -- "$1"/* "$2/"; sync; t1=$(date +%s%N)
  rm -rf "$2"
  awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.3f", (b - a) / 1e9}'
}

# The videos floor (issue 35): decoding one keyframe per file, what any tool
# that makes a poster must spend. ffmpeg on one thread, keyframes only, the
# first video frame, no output; its CPU summed over every video, less the CPU of
# the same number of ffmpeg starts that decode nothing (a 1-frame null source),
# divided by the 2 cores, plus copying the files (cp + sync, wall). Written to
# videofloor.tsv.
videos_floor() {
  local drop="$1" r cpu start copy n
  n=$(find "$drop" -maxdepth 1 -type f | wc -l)
  printf 'round\tdecode_cpu_s\tstart_cpu_s\tcopy_s\tfloor_s\n' >"$RESULTS/videofloor.tsv"
  for ((r = 1; r <= ROUNDS; r++)); do
    /usr/bin/time -f '%U %S' -o "$RESULTS/logs/videofloor-r$r.time" -- \
      sh -c 'for f in "$@"; do ffmpeg -nostdin -v error -threads 1 -skip_frame nokey -i "$f" -map 0:v:0 -frames:v 1 -f null -; done' sh "$drop"/* 2>/dev/null
    cpu=$(tail -1 "$RESULTS/logs/videofloor-r$r.time" | awk '{printf "%.3f", $1 + $2}')
    /usr/bin/time -f '%U %S' -o "$RESULTS/logs/videostart-r$r.time" -- \
      sh -c 'i=0; while [ $i -lt "$1" ]; do ffmpeg -nostdin -v error -threads 1 -f lavfi -i nullsrc=s=16x16:d=0.04 -frames:v 1 -f null -; i=$((i + 1)); done' sh "$n" 2>/dev/null
    start=$(tail -1 "$RESULTS/logs/videostart-r$r.time" | awk '{printf "%.3f", $1 + $2}')
    copy=$(copy_seconds "$drop" "$WORK/videofloor-r$r")
    printf '%s\t%s\t%s\t%s\t%s\n' "$r" "$cpu" "$start" "$copy" "$(awk -v c="$cpu" -v s="$start" -v k="$copy" 'BEGIN {d = c - s; if (d < 0) d = 0; printf "%.3f", d / 2 + k}')" >>"$RESULTS/videofloor.tsv"
    say "$(printf 'vfloor  r%-6s decode cpu %5.2f s  starts %5.2f s  copy %5.2f s' "$r" "$cpu" "$start" "$copy")"
  done
}

for s in $SCENARIOS; do
  case "$s" in
    photos)
      scenario photos ours ours "$CORPUS/photos" theirs photos "$CORPUS/photos"
      [[ "$FLOOR" != 0 ]] && photos_floor "$CORPUS/photos"
      ;;
    videos)
      scenario videos ours ours "$CORPUS/videos" theirs videos "$CORPUS/videos"
      [[ "$FLOOR" != 0 ]] && videos_floor "$CORPUS/videos"
      ;;
    mixed) scenario mixed ours ours "$CORPUS/mixed" theirs mixed "$CORPUS/mixed" ;;
    iphone) scenario iphone ours ours "$CORPUS/iphone" theirs iphone "$CORPUS/iphone" ;;
    scale) scenario scale n100 ours "$CORPUS/scale100" n1000 ours "$CORPUS/scale1000" ;;
    *) die "unknown scenario '$s' (photos videos mixed iphone scale)" ;;
  esac
done
rmdir "$WORK" 2>/dev/null || true

python3 "$HERE/summarize.py" "$RESULTS" | tee "$RESULTS/summary.md"
say "logs, reports and summary in $RESULTS"
