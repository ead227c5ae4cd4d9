#!/usr/bin/env bash
# The first thing to run on a fresh machine: installs what is missing, builds
# `share` and its decoder helper `share-helper` (which it finds beside itself), and ingests the bundled sample drop (testdata/sample-drop) into the
# default container with the embedded default pipeline.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh
for product in share share-helper; do
    swift build -c release --product "$product" 2>&1 | grep -vE "warning: (prohibited flag|'main': Source files)" | tail -n 3
done

# The default container, as share itself chooses it (README: `--container`).
container="${SHARE_CONTAINER:-${XDG_DATA_HOME:-$HOME/.local/share}/share-ingest/container}"
echo
echo "\$ share ingest testdata/sample-drop --text 'Shared from the demo'"
set +e
url=$(.build/release/share ingest --container "$container" testdata/sample-drop --text "Shared from the demo")
status=$?
set -e
echo "$url"
echo
echo "The host app would now open that URL. Its side:"
echo "\$ share open '$url' --container $container"
.build/release/share open "$url" --container "$container" | head -n 20
echo
echo "Copies:     $container/<UUID>.<ext>"
echo "Thumbnails: $container/thumbnails/"
echo "Manifests:  $container/manifests/"
echo "The binary: $(pwd)/.build/release/share (try: share help)"
exit $status
