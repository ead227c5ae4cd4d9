#!/usr/bin/env bash
# Issue 23's speed target: an HDR 4K poster costs at most 1.3x an SDR 4K poster
# of the same codec. Makes (once) a 4K HEVC clip in SDR (Main, 8-bit, BT.709)
# and the same picture in HDR10 (Main 10, PQ, BT.2020, mastering metadata),
# then ingests a folder of COPIES of each, and one of a single copy, with
# `share`, alternating, ROUNDS times, and prints the median per-item probe time
# (facts + poster in one pass, from --report's stageSeconds: wall time, two
# workers sharing two cores), the command's CPU time, and the CPU time one
# more poster costs: (CPU of COPIES - CPU of 1) / (COPIES - 1), which leaves
# out the command's start and the helpers' own.
#
#   SHARE_BIN=.build/release/share [BEFORE_BIN=other/share] ROUNDS=5 bash bench/hdr-poster.sh
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
corpus="${CORPUS:-$here/corpus}/hdr4k"
rounds="${ROUNDS:-5}"
copies="${COPIES:-6}"
share="${SHARE_BIN:-$here/../.build/release/share}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
touch "$work/results.tsv"

if [[ ! -f "$corpus/hdr10-hevc-4k.mp4" ]]; then
  mkdir -p "$corpus"
  # 2 s at 30 fps, a keyframe every second; testsrc2 with moving grain, so the
  # coded pictures cost what camera pictures cost to decode; both at 12 Mbit/s
  # (x265 ABR), so the two differ in bit depth and colour, not in bits to decode.
  src=(-f lavfi -i "testsrc2=size=3840x2160:rate=30,noise=alls=6:allf=t" -t 2)
  x265=(-c:v libx265 -preset fast -b:v 12M -tag:v hvc1)
  ffmpeg -v error -y "${src[@]}" -vf format=yuv420p "${x265[@]}" \
    -x265-params "log-level=error:keyint=30:min-keyint=30:colorprim=bt709:transfer=bt709:colormatrix=bt709" \
    -color_primaries bt709 -color_trc bt709 -colorspace bt709 -fflags +bitexact "$corpus/sdr-hevc-4k.mp4"
  ffmpeg -v error -y "${src[@]}" \
    -vf "zscale=tin=bt709:pin=bt709:min=bt709:t=smpte2084:p=bt2020:m=bt2020nc:r=limited:npl=203,format=yuv420p10le" "${x265[@]}" \
    -x265-params "log-level=error:keyint=30:min-keyint=30:colorprim=bt2020:transfer=smpte2084:colormatrix=bt2020nc:master-display=G(13250,34500)B(7500,3000)R(34000,16000)WP(15635,16450)L(10000000,1):max-cll=1000,400:hdr10=1" \
    -color_primaries bt2020 -color_trc smpte2084 -colorspace bt2020nc -fflags +bitexact "$corpus/hdr10-hevc-4k.mp4"
fi

sides=(sdr hdr sdr1 hdr1)
bins=("$share")
[[ -n "${BEFORE_BIN:-}" ]] && bins+=("$BEFORE_BIN")
for side in "${sides[@]}"; do
  mkdir -p "$work/$side"
  source_file="$corpus/$([[ $side == sdr* ]] && echo sdr-hevc-4k.mp4 || echo hdr10-hevc-4k.mp4)"
  n=$copies; [[ $side == *1 ]] && n=1
  for i in $(seq 1 "$n"); do ln "$source_file" "$work/$side/clip-$i.mp4"; done
done
results="$work/results.tsv"
for round in $(seq 0 "$rounds"); do
  for b in "${!bins[@]}"; do
    for side in "${sides[@]}"; do
      out="$work/out"; rm -rf "$out"
      /usr/bin/time -f '%e %U %S' -o "$work/time" "${bins[$b]}" ingest --container "$out/c" --report "$out/r.json" --quiet "$work/$side" >/dev/null
      ((round == 0)) && continue  # warm-up
      probe=$(python3 -c "import json,sys,statistics; r=json.load(open('$out/r.json')); print(statistics.median(i['stageSeconds']['probe'] for i in r['items']))")
      read -r wall user sys <"$work/time"
      printf '%s\t%s\t%s\t%s\t%s\n' "$b" "$side" "$probe" "$wall" "$(python3 -c "print($user + $sys)")" >>"$results"
    done
  done
done
python3 - "$results" "$copies" "${bins[@]}" <<'EOF'
import statistics, sys
rows = [l.split("\t") for l in open(sys.argv[1]).read().split("\n") if l]
copies = int(sys.argv[2])
bins = sys.argv[3:]
for b, name in enumerate(bins):
    med = {}
    for side in ("sdr", "hdr", "sdr1", "hdr1"):
        sel = [r for r in rows if r[0] == str(b) and r[1] == side]
        med[side] = (statistics.median(float(r[2]) for r in sel), statistics.median(float(r[3]) for r in sel), statistics.median(float(r[4]) for r in sel))
        print(f"{name} {side}: probe+poster per item {med[side][0]*1000:.0f} ms (median of {len(sel)} runs), command wall {med[side][1]:.2f} s, cpu {med[side][2]:.2f} s")
    marginal = {side: (med[side][2] - med[side + "1"][2]) / (copies - 1) for side in ("sdr", "hdr")}
    print(f"{name} one more poster: sdr {marginal['sdr']*1000:.0f} ms cpu, hdr {marginal['hdr']*1000:.0f} ms cpu")
    print(f"{name} hdr/sdr: per item (wall) {med['hdr'][0]/med['sdr'][0]:.2f}, command cpu {med['hdr'][2]/med['sdr'][2]:.2f}, one more poster (cpu) {marginal['hdr']/marginal['sdr']:.2f}")
EOF
