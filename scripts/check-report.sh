#!/usr/bin/env bash
# Renders `share report` for testdata/sample-drop and screenshots the HTML page
# with headless Chromium (Debian's `chromium` package), so a person can look at
# it: desktop and phone widths, saved next to the report together with the
# contact sheet. Not part of the default test run (`make check-report`).
#
# usage: scripts/check-report.sh [OUTPUT_DIR]    (default: .build/check-report)
# env:   SHARE=path/to/share   use this binary instead of building one
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${1:-$root/.build/check-report}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"

if ! command -v chromium >/dev/null 2>&1; then
    echo "check-report: installing chromium (Debian package)" >&2
    apt-get install -y chromium >/dev/null || { apt-get update >/dev/null && apt-get install -y chromium >/dev/null; }
fi

share="${SHARE:-}"
if [[ -z "$share" ]]; then
    (cd "$root" && swift build --product share >&2)
    share="$root/.build/debug/share"
fi

container="$out/container"
rm -rf "$container"
status=0
url="$("$share" ingest --quiet --container "$container" "$root/testdata/sample-drop" | tail -n 1)" || status=$?
# 1 means some items failed or were skipped: the report shows them, which is the point.
if [[ $status -gt 1 || -z "$url" ]]; then
    echo "check-report: share ingest failed (exit $status)" >&2
    exit 1
fi

"$share" report "$url" --container "$container" --html "$out/report.html" --contact-sheet "$out/contact-sheet.jpg" >/dev/null

shoot() {  # shoot NAME WIDTH HEIGHT
    chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --disable-extensions \
        --no-first-run --no-default-browser-check --user-data-dir="$out/.chromium-profile" \
        --window-size="$2,$3" --screenshot="$out/$1" "file://$out/report.html" >/dev/null 2>&1
    [[ -s "$out/$1" ]] || { echo "check-report: chromium wrote no $1" >&2; exit 1; }
}
shoot report-desktop.png 1280 1600
shoot report-phone.png 390 2400
rm -rf "$out/.chromium-profile"

echo "check-report: look at these:"
for file in report.html report-desktop.png report-phone.png contact-sheet.jpg; do
    echo "  $out/$file"
done
