#!/usr/bin/env bash
# The zone lookup alone, optimised (issue 62): builds PlaceTimeZones' TimeZoneMap.swift and the linked
# grid (Sources/CTimeZoneGrid) of a commit (default: the working tree) with `swiftc -O` into a small
# program, then over each TSV of scripts/time-zone-points.py's format (latitude, longitude, zone,
# January and July 2024 offsets) prints the points, how many agree (the zone's offsets at 2024-01-15
# and 2024-07-15 12:00 UTC, from Foundation's TimeZone, which reads the same system tzdata as
# ZoneRules), the linked grid's size and the time per lookup (best of 5 passes over the points,
# one clock read around each pass). SHOW=1 prints each disagreement first.
#
#   bash bench/time-zone-lookup.sh [--rev COMMIT] POINTS.tsv...
#
# The tests' own measure is PlaceTimeZoneTests (ZoneRules' offsets); this is the -O timing and a
# before/after comparison: `--rev 5a4dc76` is the grid alone, before issue 62's border cells.
set -euo pipefail
rev=""
if [ "${1:-}" = "--rev" ]; then rev=$2; shift 2; fi
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/grid/include"
for file in Sources/PlaceTimeZones/TimeZoneMap.swift Sources/CTimeZoneGrid/time_zone_grid.c Sources/CTimeZoneGrid/time_zone_grid.c.bin Sources/CTimeZoneGrid/include/CTimeZoneGrid.h; do
    target="$work/grid/$(basename "$file")"
    case $file in */include/*) target="$work/grid/include/$(basename "$file")" ;; esac
    if [ -n "$rev" ]; then git -C "$root" show "$rev:$file" > "$target"; else cp "$root/$file" "$target"; fi
done
printf 'module CTimeZoneGrid {\n    header "CTimeZoneGrid.h"\n    export *\n}\n' > "$work/grid/include/module.modulemap"
cat > "$work/main.swift" <<'SWIFT'
import CTimeZoneGrid
import Foundation

let map = TimeZoneMap.shared!
var length = 0
_ = share_time_zone_grid(&length)
for path in CommandLine.arguments.dropFirst() {
    let text = try! String(contentsOfFile: path, encoding: .utf8)
    var points: [(Double, Double, Int, Int)] = []
    for line in text.split(separator: "\n") {
        let f = line.split(separator: "\t")
        if f.count >= 5, let la = Double(f[0]), let lo = Double(f[1]), let w = Int(f[3]), let s = Int(f[4]) { points.append((la, lo, w, s)) }
    }
    var agreed = 0
    let winter = Date(timeIntervalSince1970: 1_705_320_000), summer = Date(timeIntervalSince1970: 1_721_044_800)
    for (la, lo, w, s) in points {
        if let name = map.zone(latitude: la, longitude: lo), let zone = TimeZone(identifier: name),
            zone.secondsFromGMT(for: winter) == w, zone.secondsFromGMT(for: summer) == s { agreed += 1 }
        else if ProcessInfo.processInfo.environment["SHOW"] != nil { print("\(la)\t\(lo)\t\(w)\t\(s)\t\(map.zone(latitude: la, longitude: lo) ?? "none")") }
    }
    var best = Double.infinity
    var found = 0
    for _ in 0..<5 {
        let start = DispatchTime.now().uptimeNanoseconds
        for (la, lo, _, _) in points where map.zone(latitude: la, longitude: lo) != nil { found += 1 }
        best = min(best, Double(DispatchTime.now().uptimeNanoseconds - start) / Double(points.count))
    }
    print(String(format: "%@: %d points, %d agree (%.2f %%), grid %d bytes, %.3f µs per lookup (found %d)",
                 path, points.count, agreed, 100 * Double(agreed) / Double(points.count), length, best / 1000, found))
}
SWIFT
points=()
for file in "$@"; do points+=("$(realpath "$file")"); done
cd "$work"
clang -O2 -c grid/time_zone_grid.c -I grid/include -o grid.o
swiftc -O -I grid/include -module-name lookup main.swift grid/TimeZoneMap.swift grid.o -o lookup
./lookup "${points[@]}"
