#!/usr/bin/env bash
# The near-duplicate index's lookup time and memory (issue 62, `HashIndex`, cut
# out of the file of Sources/ that declares it, found by that declaration), built
# with `swiftc -O`: SIZES random 64-bit hashes, then LOOKUPS lookups within 8
# bits, half 5 bits from a stored hash (each must be found), half random; and a
# scan of every hash for the first 2,000 queries, as the anchor. Each size runs
# in a process of its own, which reports its resident memory (VmRSS, and its
# peak VmHWM, while building included) over what it held before the hashes.
# With --before REV, the `HashIndex` of that revision (found the same way in
# its tree) is built too, and each size runs before then after, in turn. A
# side whose `HashIndex` adds a run of hashes at once (`insert(contentsOf:)`,
# as the fan-in adds the earlier shares') is also run so, in a process of its
# own, on the same hashes and queries: its line is named `at-once`.
# Prints one line per size (and side).
#
#   bash bench/similar-index.sh [--before REV] [LOOKUPS]     (default 20000)
#   SIZES="100000 1000000" bash bench/similar-index.sh     (default 100000 300000 1000000)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
before=""
if [ "${1:-}" = "--before" ]; then before=${2:?--before REV}; shift 2; fi
lookups=${1:-20000}
sizes=${SIZES:-100000 300000 1000000}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The struct, from its declaration to its closing brace at the start of a line.
cut_index() { sed -n '/^struct HashIndex {/,/^}/p'; }
file=$(grep -rl '^struct HashIndex {' "$here/Sources" | head -1)
[ -n "$file" ] || { echo "no file of Sources/ declares struct HashIndex" >&2; exit 1; }
{ echo "import Foundation"; cut_index <"$file"; } >"$work/after.swift"
sides="after"
if [ -n "$before" ]; then
  old=$(git -C "$here" grep -l '^struct HashIndex {' "$before" -- Sources | head -1)
  [ -n "$old" ] || { echo "no file of Sources/ at $before declares struct HashIndex" >&2; exit 1; }
  { echo "import Foundation"; git -C "$here" show "$old" | cut_index; } >"$work/before.swift"
  sides="before after"
fi
for side in $sides; do
  [ "$(wc -l <"$work/$side.swift")" -gt 2 ] || { echo "HashIndex not found ($side)" >&2; exit 1; }
  if grep -q 'func insert(contentsOf' "$work/$side.swift"; then
    echo 'func addAtOnce(_ index: inout HashIndex, _ hashes: [UInt64]) -> Bool { index.insert(contentsOf: hashes); return true }'
  else
    echo 'func addAtOnce(_ index: inout HashIndex, _ hashes: [UInt64]) -> Bool { false }'
  fi >>"$work/$side.swift"
done

cat >"$work/main.swift" <<EOF
import Foundation

struct SplitMix { var state: UInt64
    mutating func next() -> UInt64 { state &+= 0x9E37_79B9_7F4A_7C15; var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9; z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB; return z ^ (z >> 31) } }
func seconds(_ d: Duration) -> Double { Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18 }
/// A line of /proc/self/status, in KiB.
func status(_ field: String) -> Int {
    let text = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
    let line = text.split(separator: "\n").first { \$0.hasPrefix(field + ":") } ?? ""
    return Int(line.split(separator: " ").dropFirst().first ?? "0") ?? 0
}
let arguments = CommandLine.arguments
let (side, size, lookups) = (arguments[1], Int(arguments[2])!, Int(arguments[3])!)
let atOnce = side == "at-once"
var random = SplitMix(state: UInt64(size))
let stored = (0..<size).map { _ in random.next() }
var queries: [UInt64] = []
for q in 0..<lookups {
    if q % 2 == 0 {
        var h = stored[Int(random.next() % UInt64(size))]
        var flipped = Set<UInt64>()
        while flipped.count < 5 { flipped.insert(random.next() % 64) }
        for b in flipped { h ^= 1 << b }
        queries.append(h)
    } else { queries.append(random.next()) }
}
let (rssBefore, peakBefore) = (status("VmRSS"), status("VmHWM"))
var index = HashIndex(radius: 8)
let built = ContinuousClock.now
if !atOnce || !addAtOnce(&index, stored) { for h in stored { index.insert(h) } }
let buildTime = seconds(ContinuousClock.now - built)
var found = 0
let started = ContinuousClock.now
for q in queries { found += index.near(q).isEmpty ? 0 : 1 }
let lookup = seconds(ContinuousClock.now - started) / Double(lookups)
let (rss, peak) = (status("VmRSS") - rssBefore, status("VmHWM") - peakBefore)
let scanQueries = min(lookups, 2000)
var scanned = 0
let scanStart = ContinuousClock.now
stored.withUnsafeBufferPointer { all in
    for q in queries.prefix(scanQueries) { for h in all where (h ^ q).nonzeroBitCount <= 8 { scanned += 1 } }
}
let scan = seconds(ContinuousClock.now - scanStart) / Double(scanQueries)
print(side.padding(toLength: 7, withPad: " ", startingAt: 0) + String(format: "%9d hashes: built in %.2f s; %d lookups, %d found (of %d near); %.1f µs a lookup; a scan of every hash %.1f µs (%d matches); memory +%.1f MiB (%.1f bytes a hash), peak +%.1f MiB",
    size, buildTime, lookups, found, lookups / 2, lookup * 1e6, scan * 1e6, scanned,
    Double(rss) / 1024, Double(rss) * 1024 / Double(size), Double(peak) / 1024))
EOF
for side in $sides; do
  swiftc -O -o "$work/$side" "$work/$side.swift" "$work/main.swift"
done
for size in $sizes; do
  for side in $sides; do
    "$work/$side" "$side" "$size" "$lookups"
    if grep -q 'index.insert(contentsOf' "$work/$side.swift"; then "$work/$side" at-once "$size" "$lookups"; fi
  done
done
