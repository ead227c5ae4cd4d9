#!/usr/bin/env bash
# Installs the Debian packages share-ingest needs to build, test and run its
# demo, if any is missing. Idempotent; needs root (or sudo) only to install.
set -euo pipefail

packages=(
  # build: C libraries and pkg-config
  pkg-config libvips-dev libavformat-dev libavcodec-dev libswscale-dev libavutil-dev libheif-dev libtiff-dev libsqlite3-dev libpq-dev libssl-dev
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
  # its media are made with ffmpeg (libx264, libvpx, libtheora built in) and vips
  valgrind jq
  # recording the decoder helpers' system calls (scripts/record-helper-syscalls.sh)
  strace
  # ServiceTests: promtool check metrics on a scrape of /metrics (Debian's prometheus
  # package ships promtool), and systemd-analyze verify on deploy/systemd's units
  prometheus systemd
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

if ! command -v swift >/dev/null; then
  echo "setup: swift is not on PATH; install the Swift 6 toolchain first" >&2
  exit 1
fi
