#!/usr/bin/env bash
# Previews through the pipeline (issue 33, item 2): the photos corpus (60 JPEGs
# of 12 MP) through `share ingest` with the thumbnail stage's `sizes` [360]
# (today's single size), [360, 1440] WebP and [360, 1440] JPEG, side by side
# with vipsthumbnail run once per size (two processes in parallel, as the
# photos baseline does), ROUNDS times in turn. Prints each run's wall time and
# peak RSS: GNU time's maximum resident set of the largest process of the run,
# and, sampled from /proc by bench/peaks.py, the `share` process's own peak and
# its largest decoder helper's (a helper holds one item's decode at a time).
# The issue's bound: peak memory per item at most 1.2 times the single size's;
# [1440] alone is run too, the single decode the previews share.
#
#   bash bench/previews.sh                               # release build, 3 rounds
#   ROUNDS=5 SHARE_BIN=/tmp/share bash bench/previews.sh
set -euo pipefail
cd "$(dirname "$0")/.."
share=$(realpath "${SHARE_BIN:-.build/release/share}")
photos=${PHOTOS:-bench/corpus/photos}
rounds=${ROUNDS:-3}
[ -d "$photos" ] || { echo "previews: no $photos (bash bench/make-corpus.sh makes it)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mapfile -d '' files < <(find "$photos" -maxdepth 1 -type f -print0 | sort -z)
half=$(((${#files[@]} + 1) / 2))

for variant in single large webp jpeg; do
  case $variant in
    single) edit='.' ;;
    large) edit='del(.size) | .sizes = [1440]' ;;
    webp) edit='del(.size) | .sizes = [360, 1440] | .format = "webp"' ;;
    jpeg) edit='del(.size) | .sizes = [360, 1440] | .format = "jpeg"' ;;
  esac
  jq --arg v "$variant" ".name = \"previews-\" + \$v | .stages |= map(if .stage == \"thumbnail\" then $edit else . end)" \
    pipelines/default.json >"$work/$variant.json"
done

# timed LABEL COMMAND...: runs it under GNU time; prints "LABEL WALL PEAK_MIB".
timed() {
  local label=$1
  shift
  sync
  /usr/bin/time -f '%e %M' -o "$work/time" "$@" >/dev/null &
  local timed_pid=$!
  python3 bench/peaks.py "$timed_pid" "$work/peaks" &
  local sampler=$!
  wait "$timed_pid"
  wait "$sampler"
  read -r wall peak <"$work/time"
  read -r parent helper <"$work/peaks"
  printf '%-28s %8.2f s %8.1f MiB' "$label" "$wall" "$(echo "$peak / 1024" | bc -l)"
  if ((parent > 0)); then
    printf '   share %6.1f MiB, largest helper %6.1f MiB' "$(echo "$parent / 1024" | bc -l)" "$(echo "$helper / 1024" | bc -l)"
  fi
  printf '\n'
}

ours() {
  rm -rf "$work/c"
  "$share" ingest --quiet --pipeline "$work/$1.json" --container "$work/c" "${files[@]}"
  sync
}

# vipsthumbnail at SIZE into FORMAT, two processes, then the copies and one sync (photos baseline).
theirs() {
  rm -rf "$work/t" && mkdir -p "$work/t"
  for spec in "$@"; do
    printf '%s\0' "${files[@]}" | xargs -0 -P2 -n"$half" vipsthumbnail -s "${spec%:*}" -o "$work/t/%s_${spec%:*}.${spec#*:}"
  done
  cp -- "${files[@]}" "$work/t/"
  sync
}

export -f ours theirs
export share work half
echo "previews: ${#files[@]} photos from $photos, $rounds rounds, $(nproc) cores"
for round in $(seq 1 "$rounds"); do
  echo "round $round"
  timed "share [360]" bash -c "$(declare -p files); ours single"
  timed "share [360,1440] webp" bash -c "$(declare -p files); ours webp"
  timed "share [1440]" bash -c "$(declare -p files); ours large"
  timed "share [360,1440] jpeg" bash -c "$(declare -p files); ours jpeg"
  timed "vipsthumbnail 360" bash -c "$(declare -p files); theirs 360:jpg"
  timed "vipsthumbnail 360+1440 webp" bash -c "$(declare -p files); theirs 360:jpg 1440:webp"
  timed "vipsthumbnail 360+1440 jpg" bash -c "$(declare -p files); theirs 360:jpg 1440:jpg"
done
