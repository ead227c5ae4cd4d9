#!/usr/bin/env bash
# A scratch file system for benchmarks that create and remove many small files:
# ext4 with its journal (Debian's default), in a sparse image file, loop-mounted.
#
#   bash bench/journaled-ext4.sh [MOUNTPOINT [SIZE]]     # default /mnt/bench, 30G; needs root
#   TMPDIR=/mnt/bench/tmp TAKEOUT_DIR=/mnt/bench/takeout N=2000 bash bench/takeout.sh
#
# Why: this machine's root is an ext4 without a journal
# (/sys/fs/ext4/vda/journal_task says <none>). There, every new inode is
# checked against those freed in the last minute or more (ext4's
# `recently_deleted`, one buffer-cache lookup each), so a run that follows the
# removal of a large container pays for it in every file it creates: in perf,
# `find_get_block_common` and `recently_deleted` were 12-16 % of `share`'s own
# CPU. A journaled ext4 does not make that check. Idempotent: an existing
# mount is kept.
set -euo pipefail
mountpoint=${1:-/mnt/bench}
size=${2:-30G}
image=${IMAGE:-/var/tmp/share-ingest-bench-ext4.img}
if mountpoint -q "$mountpoint"; then
  echo "$mountpoint is mounted already"
  exit 0
fi
[ -e "$image" ] || { truncate -s "$size" "$image" && mkfs.ext4 -q -F "$image"; }
mkdir -p "$mountpoint"
mount -o loop "$image" "$mountpoint"
mkdir -p "$mountpoint/tmp"
echo "$mountpoint: ext4 with a journal, on $image ($(df -h --output=size "$mountpoint" | tail -1 | tr -d ' '))"
