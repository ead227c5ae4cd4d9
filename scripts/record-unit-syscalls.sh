#!/usr/bin/env bash
# Measures the system calls `share` and everything it starts (its helper
# template, the helpers and their threads) make beyond systemd's
# @system-service group, which the units in deploy/systemd allow: the rest
# must be in their SystemCallFilter= (or the process is killed there). Runs,
# under `strace -f`: `share doctor`, `share ingest` over testdata/media, heif,
# modern and fidelity, and `share watch --once --report-dir --metrics` on a
# drop of photos; with WORKER_DB=URL also a `share worker` serving one batch.
# Prints the calls outside @system-service, and fails if one is not in the
# units' SystemCallFilter= lines.
#
# usage: scripts/record-unit-syscalls.sh        env: SHARE=path/to/share (default: swift build, .build/debug/share)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
for tool in strace systemd-analyze python3; do
    command -v "$tool" >/dev/null || { echo "record-unit: $tool is missing (scripts/setup.sh installs it)" >&2; exit 2; }
done
share="${SHARE:-}"
if [[ -z "$share" ]]; then
    swift build --product share 2>&1 | tail -n 1
    share="$root/.build/debug/share"
fi
work="$(mktemp -d "${TMPDIR:-/tmp}/share-unit-syscalls-XXXXXX")"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/inbox/drop"
cp testdata/media/photo.jpg testdata/media/cmyk.jpg testdata/media/document.pdf testdata/media/clip-h264.mp4 "$work/inbox/drop/"

strace -f -qq -o "$work/doctor" "$share" doctor >/dev/null 2>&1 || true
strace -f -qq -o "$work/ingest" "$share" ingest --quiet --container "$work/c1" testdata/media testdata/heif testdata/modern testdata/fidelity >/dev/null 2>&1 || true
strace -f -qq -o "$work/watch" "$share" watch "$work/inbox" --once --settle 0 --container "$work/c2" --report-dir "$work/pictures" --metrics 127.0.0.1:0 >/dev/null 2>&1 || true
if [[ -n "${WORKER_DB:-}" ]]; then
    strace -f -qq -o "$work/worker" "$share" worker --db "$WORKER_DB" --name record >/dev/null 2>&1 &
    worker=$!
    "$share" ingest --db "$WORKER_DB" --quiet --container "$work/c3" "$work/inbox" >/dev/null 2>&1 || true
    kill -TERM "$worker"; wait "$worker" || true
fi

python3 - "$work" deploy/systemd/share-watch@.service deploy/systemd/share-worker@.service <<'PY'
import glob, re, subprocess, sys
work, units = sys.argv[1], sys.argv[2:]
calls = set()
for trace in glob.glob(work + "/*"):
    if not re.search(r"/(doctor|ingest|watch|worker)$", trace):
        continue
    for line in open(trace, errors="replace"):
        text = re.sub(r"^\d+\s+", "", line)
        resumed = re.match(r"<\.\.\. (\w+) resumed>", text)
        name = resumed.group(1) if resumed else (re.match(r"(\w+)\(", text) or [None, None])[1]
        if name:
            calls.add(name)
def expand(name, seen):
    out = subprocess.run(["systemd-analyze", "syscall-filter", name], capture_output=True, text=True).stdout
    found = set()
    for line in out.splitlines()[1:]:
        entry = line.strip()
        if not entry or entry.startswith("#"):
            continue
        if entry.startswith("@"):
            if entry not in seen:
                seen.add(entry)
                found |= expand(entry, seen)
        else:
            found.add(entry)
    return found
service = expand("@system-service", set())
beyond = sorted(calls - service)
print(f"system calls made: {len(calls)}; beyond @system-service: {' '.join(beyond) or 'none'}")
status = 0
for unit in units:
    listed = set()
    for line in open(unit):
        if line.startswith("SystemCallFilter=") and not line.startswith("SystemCallFilter=~"):
            for word in line.split("=", 1)[1].split():
                listed |= expand(word, set()) if word.startswith("@") else {word}
    missing = [call for call in beyond if call not in listed]
    print(f"{unit}: {'every call allowed' if not missing else 'NOT ALLOWED: ' + ' '.join(missing)}")
    status |= bool(missing)
sys.exit(status)
PY
