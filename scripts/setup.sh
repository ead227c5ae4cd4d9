#!/usr/bin/env bash
# Installs the Debian packages share-ingest needs to build, test and run its
# demo, if any is missing. Idempotent; needs root (or sudo) only to install.
set -euo pipefail

packages=(
  # build: C libraries and pkg-config
  pkg-config libvips-dev libavformat-dev libavcodec-dev libswscale-dev libavutil-dev libheif-dev libtiff-dev libsqlite3-dev libpq-dev nettle-dev liblcms2-dev
  # tests: inspect images (vipsheader, vips avg) and make media on the fly
  libvips-tools ffmpeg
  # fixtures (testdata/make-*.sh, bench/make-heic.py): HEIF inspection and EXIF
  libheif-examples libimage-exiftool-perl
  # tests of the distributed mode: a throwaway PostgreSQL server
  postgresql
  # durability tests: the order of fsyncs and renames of the built share (strace -f -y)
  strace
  # benchmarks: peak memory; the photos floor (djpeg)
  time libjpeg-turbo-progs
  # the memory check (scripts/memcheck.sh): valgrind, and jq to read reports;
  # its media are made with ffmpeg (libx264, libvpx, libtheora built in) and vips;
  # gdb reads a stalled run's stacks through valgrind's gdbserver
  valgrind jq gdb
  # recording the decoder helpers' system calls (scripts/record-helper-syscalls.sh)
  strace
  # ServiceTests: promtool check metrics on a scrape of /metrics (Debian's prometheus
  # package ships promtool), and systemd-analyze verify on deploy/systemd's units
  prometheus systemd
  # ThumbHashTests: the oracle (scripts/thumbhash-oracle.py) runs the Python thumbhash
  # package in a virtual environment (Debian's own Python refuses pip installs)
  python3-venv
  # ConventionTests: each completion script (share completion bash|zsh|fish) is
  # loaded in its own shell and asked to complete; the man page is checked by groff
  bash-completion zsh fish groff-base
  # ReportBrowserTests and scripts/check-report.sh: the HTML report in a real
  # browser (headless Chromium: images load, no console error, no sideways scroll)
  chromium
)

missing=()
for package in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done

if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}" >&2
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# ThumbHashTests' oracle: the thumbhash package (the version the oracle's patch is
# written for) in .build/thumbhash-venv; the test makes it itself when missing.
venv="$(dirname "$0")/../.build/thumbhash-venv"
if [ ! -e "$venv/.thumbhash-0.1.2" ]; then
  python3 -m venv "$venv" && "$venv/bin/pip" install --quiet thumbhash==0.1.2 && touch "$venv/.thumbhash-0.1.2" ||
    echo "setup: could not install the thumbhash package into $venv (ThumbHashTests need it)" >&2
fi

if ! command -v swift >/dev/null; then
  echo "setup: swift is not on PATH; install the Swift 6 toolchain first" >&2
  exit 1
fi
