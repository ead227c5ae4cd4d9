#!/usr/bin/env bash
# Baseline for the iphone scenario (issue 16): what a user would run instead of
# share on a folder of iPhone HEICs. The same as photos.sh: vipsthumbnail -s 360
# batched over the files in two processes in parallel (libvips' heifload:
# libheif + libde265), then cp of every file, then one sync.
# Usage: iphone.sh DROP OUT
exec bash "$(dirname "${BASH_SOURCE[0]}")/photos.sh" "$@"
