#!/usr/bin/env bash
# The near-duplicate index's lookup time (issue 62, `HashIndex` of
# Sources/ShareIngestCore/Pipeline/SimilarPictures.swift, copied out as it is
# in the tree) at 100,000 and 1,000,000 hashes, built with `swiftc -O`:
# random 64-bit hashes, then LOOKUPS lookups, half 5 bits from a stored hash
# (each must be found), half random; and a scan of every hash for the same
# queries, as the anchor. Prints one line per size.
#
#   bash bench/similar-index.sh [LOOKUPS]     (default 20000)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
lookups=${1:-20000}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The struct, from its declaration to its closing brace at the start of a line.
sed -n '/^struct HashIndex {/,/^}/p' "$here/Sources/ShareIngestCore/Pipeline/SimilarPictures.swift" >"$work/index.swift"
[ -s "$work/index.swift" ] || { echo "HashIndex not found" >&2; exit 1; }
cat >"$work/main.swift" <<EOF
import Foundation

struct SplitMix { var state: UInt64
    mutating func next() -> UInt64 { state &+= 0x9E37_79B9_7F4A_7C15; var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9; z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB; return z ^ (z >> 31) } }
func seconds(_ d: Duration) -> Double { Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18 }
let lookups = $lookups
for size in [100_000, 1_000_000] {
    var random = SplitMix(state: UInt64(size))
    var index = HashIndex(radius: 8)
    let built = ContinuousClock.now
    for _ in 0..<size { index.insert(random.next()) }
    let buildTime = seconds(ContinuousClock.now - built)
    var queries: [UInt64] = []
    for q in 0..<lookups {
        if q % 2 == 0 {
            var h = index.hashes[Int(random.next() % UInt64(size))]
            var flipped = Set<UInt64>()
            while flipped.count < 5 { flipped.insert(random.next() % 64) }
            for b in flipped { h ^= 1 << b }
            queries.append(h)
        } else { queries.append(random.next()) }
    }
    var found = 0
    let started = ContinuousClock.now
    for q in queries { found += index.near(q).isEmpty ? 0 : 1 }
    let lookup = seconds(ContinuousClock.now - started) / Double(lookups)
    let scanQueries = min(lookups, 2000)
    var scanned = 0
    let scanStart = ContinuousClock.now
    index.hashes.withUnsafeBufferPointer { all in
        for q in queries.prefix(scanQueries) { for h in all where (h ^ q).nonzeroBitCount <= 8 { scanned += 1 } }
    }
    let scan = seconds(ContinuousClock.now - scanStart) / Double(scanQueries)
    print(String(format: "%9d hashes: built in %.2f s; %d lookups, %d found (of %d near); %.1f µs a lookup; a scan of every hash %.1f µs (%d matches)",
        size, buildTime, lookups, found, lookups / 2, lookup * 1e6, scan * 1e6, scanned))
}
EOF
swiftc -O -o "$work/bench" "$work/index.swift" "$work/main.swift"
"$work/bench"
