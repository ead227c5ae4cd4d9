#!/usr/bin/env bash
# The HTML report in a real browser (headless Chromium, Debian's `chromium`).
# Renders `share report` for testdata/sample-drop (with 1440 px previews, so
# the page links files), then opens the page at a desktop width (1280 px) and
# a phone width (390 px) and checks what a person would see: every image
# decodes (naturalWidth > 0), every link to a preview or a copy loads, every
# fact keeps its label on screen (a bare "640 × 480" says nothing), the browser
# logs no console error (a CSP refusal, a missing file), and nothing scrolls
# sideways at 390 px. Saves screenshots of both widths beside the report.
# Part of the test run (ReportBrowserTests runs it); `make check-report`.
#
# usage: scripts/check-report.sh [OUTPUT_DIR]            (default: .build/check-report)
#        scripts/check-report.sh --items N [OUTPUT_DIR]  also measure how long a page of an
#                                                        N-item batch takes to load (BENCHMARKS.md)
# env:   SHARE=path/to/share   use this binary instead of building one
set -euo pipefail

items=0
if [[ "${1:-}" == "--items" ]]; then items="$2"; shift 2; fi
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${1:-$root/.build/check-report}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"

if ! command -v chromium >/dev/null 2>&1; then
    echo "check-report: chromium is not installed (scripts/setup.sh installs it)" >&2
    exit 1
fi

share="${SHARE:-}"
if [[ -z "$share" ]]; then
    (cd "$root" && swift build --product share >&2)
    share="$root/.build/debug/share"
fi

profile="$out/.chromium-profile"
trap 'rm -rf "$profile"' EXIT
chrome() {  # chrome ARGS...: headless Chromium, its log (console messages included) in $out/chromium.log
    chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --disable-extensions --no-first-run \
        --no-default-browser-check --user-data-dir="$profile" --allow-file-access-from-files \
        --enable-logging=stderr --v=0 "$@" 2>>"$out/chromium.log"
}

# A real batch: the sample drop, with previews (linked from the page) beside the thumbnails.
pipeline="$out/check-report.json"
cat >"$pipeline" <<'JSON'
{"name": "check-report", "stages": [{"stage": "sniff"}, {"stage": "copy"}, {"stage": "probe"},
 {"stage": "thumbnail", "sizes": [360, 1440]}, {"stage": "manifest"}]}
JSON
container="$out/container"
rm -rf "$container" "$out/chromium.log"
status=0
url="$("$share" ingest --quiet --container "$container" --pipeline "$pipeline" "$root/testdata/sample-drop" | tail -n 1)" || status=$?
# 1 means some items failed or were skipped: the report shows them, which is the point.
if [[ $status -gt 1 || -z "$url" ]]; then
    echo "check-report: share ingest failed (exit $status)" >&2
    exit 1
fi
"$share" report "$url" --container "$container" --html "$out/report.html" --contact-sheet "$out/contact-sheet.jpg" >/dev/null

# The checks run in a page of their own that loads the report in two frames
# (1280 and 390 px wide) and reads their documents (file:// pages may, with
# --allow-file-access-from-files); the report itself runs no script.
cat >"$out/harness.html" <<'HTML'
<!doctype html><html><body>
<iframe id="desktop" style="width:1280px;height:900px;border:0"></iframe>
<iframe id="phone" style="width:390px;height:900px;border:0"></iframe>
<pre id="result">pending</pre>
<script>
function loads(href) {
  return new Promise(resolve => {
    if (/\.(jpe?g|png|webp|gif|avif)$/i.test(href)) {
      const image = new Image();
      image.onload = () => resolve(image.naturalWidth > 0);
      image.onerror = () => resolve(false);
      image.src = href;
    } else {
      const request = new XMLHttpRequest();
      request.onload = () => resolve(request.response !== null && request.response.byteLength > 0);
      request.onerror = () => resolve(false);
      request.open("GET", href);
      request.responseType = "arraybuffer";
      request.send();
    }
  });
}
function check(frame, page) {
  return new Promise(resolve => {
    frame.onload = async () => {
      const doc = frame.contentDocument;
      const images = [...doc.images];
      await Promise.all(images.map(i => i.complete ? 0 : new Promise(r => { i.onload = i.onerror = r; })));
      const broken = images.filter(i => !(i.naturalWidth > 0)).map(i => i.alt || i.src.slice(0, 80));
      const links = [...doc.querySelectorAll("a[href]")].map(a => a.href).filter(h => !h.startsWith(doc.URL + "#"));
      const badLinks = [];
      for (const href of links) if (!(await loads(href))) badLinks.push(href);
      const scroller = doc.scrollingElement || doc.documentElement;
      // Each fact's label is drawn: laid out, with some width, not hidden.
      const labels = [...doc.querySelectorAll(".facts dt")];
      const hiddenLabels = labels.filter(dt => {
        const box = dt.getBoundingClientRect(), style = frame.contentWindow.getComputedStyle(dt);
        return !(box.width > 0 && box.height > 0) || style.visibility === "hidden" || style.display === "none";
      }).map(dt => dt.textContent);
      resolve({ width: frame.clientWidth, images: images.length, broken, links: links.length, badLinks, labels: labels.length, hiddenLabels,
                overflow: scroller.scrollWidth - scroller.clientWidth });
    };
    frame.src = page;
  });
}
(async () => {
  const page = new URLSearchParams(location.search).get("page");
  const desktop = await check(document.getElementById("desktop"), page);
  const phone = await check(document.getElementById("phone"), page);
  document.getElementById("result").textContent = "RESULT " + JSON.stringify({ desktop, phone });
})();
</script></body></html>
HTML

# check PAGE: the checks of one report page; prints what failed, returns 1 then.
check() {
    local page="$1" result
    : >"$out/chromium.log"
    result="$(chrome --virtual-time-budget=120000 --dump-dom "file://$out/harness.html?page=$(basename "$page")" | grep -o 'RESULT {.*}' || true)"
    if [[ -z "$result" ]]; then
        echo "check-report: the checks of $page did not finish" >&2
        return 1
    fi
    echo "check-report: ${result#RESULT }"
    local failed=0
    python3 - "${result#RESULT }" "$page" <<'PY' || failed=1
import json, sys
result, page = json.loads(sys.argv[1]), sys.argv[2]
problems = []
for name, view in result.items():
    if view["images"] == 0: problems.append(f"{name}: no image on the page")
    if view["broken"]: problems.append(f"{name}: images that do not load: {view['broken']}")
    if view["badLinks"]: problems.append(f"{name}: links that do not load: {view['badLinks']}")
    if view["labels"] == 0: problems.append(f"{name}: no fact has a label")
    if view["hiddenLabels"]: problems.append(f"{name}: facts whose labels are not shown: {sorted(set(view['hiddenLabels']))}")
if result["phone"]["overflow"] > 0: problems.append(f"phone (390 px): the page scrolls sideways by {result['phone']['overflow']} px")
for problem in problems: print(f"check-report: {page}: {problem}", file=sys.stderr)
sys.exit(1 if problems else 0)
PY
    if grep -q ':CONSOLE' "$out/chromium.log"; then
        echo "check-report: $page: the browser logged console messages:" >&2
        grep ':CONSOLE' "$out/chromium.log" >&2
        failed=1
    fi
    return $failed
}

failed=0
check "$out/report.html" || failed=1
links="$(grep -c 'href="file://' "$out/report.html" || true)"
if [[ "$links" -eq 0 ]]; then
    echo "check-report: the page links no preview (the pipeline makes 1440 px previews)" >&2
    failed=1
fi

shoot() {  # shoot NAME WIDTH HEIGHT
    chrome --window-size="$2,$3" --screenshot="$out/$1" "file://$out/report.html" >/dev/null
    [[ -s "$out/$1" ]] || { echo "check-report: chromium wrote no $1" >&2; exit 1; }
}
shoot report-desktop.png 1280 1600
shoot report-phone.png 390 2400

if [[ "$items" -gt 0 ]]; then
    # A batch of N distinct small photos (each a copy of the fixture with bytes after its end).
    drop="$out/drop-$items"
    rm -rf "$drop" "$out/container-$items"
    mkdir -p "$drop"
    for ((i = 0; i < items; i++)); do
        { cat "$root/testdata/media/photo.jpg"; printf 'unique %d' "$i"; } >"$drop/photo-$(printf %05d "$i").jpg"
    done
    big="$("$share" ingest --quiet --container "$out/container-$items" "$drop" | tail -n 1)"
    "$share" report "$big" --container "$out/container-$items" --html "$out/report-$items.html" >/dev/null
    check "$out/report-$items.html" || failed=1
    # Load time: headless Chromium's wall time to load and lay out the page
    # (--dump-dom returns after the load event), less its time for an empty
    # page; the median of 5 runs of each.
    : >"$out/empty.html"
    median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
    timed() { for _ in 1 2 3 4 5; do
        local start end; start=$(date +%s%N); chrome --dump-dom "file://$1" >/dev/null; end=$(date +%s%N)
        echo $(((end - start) / 1000000)); done | median; }
    empty_ms="$(timed "$out/empty.html")"
    page_ms="$(timed "$out/report-$items.html")"
    size="$(stat -c %s "$out/report-$items.html")"
    echo "check-report: a page of $items items ($((size / 1024)) KiB): loaded in $((page_ms - empty_ms)) ms (${page_ms} ms, less ${empty_ms} ms for an empty page; median of 5)"
fi

[[ $failed -eq 0 ]] || exit 1
echo "check-report: the page passed in headless Chromium at 1280 and 390 px; look at these:"
for file in report.html report-desktop.png report-phone.png contact-sheet.jpg; do
    echo "  $out/$file"
done
