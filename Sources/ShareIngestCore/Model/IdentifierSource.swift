import Foundation
import ShareManifest
import Synchronization

/// Where a batch's UUIDs come from: the batch id (and with it the default key
/// `ShareKey-<batch UUID>`) and every item's id, which names its copy and thumbnail.
///
/// Production uses ``random``. Tests that compare manifests byte for byte use
/// ``sequential(startingAt:)`` or ``seeded(_:)``: an ingest draws the batch id
/// first, then one id per item in input order (folders walked in name order), so
/// the same inputs always get the same names.
///
/// A source made by ``sequential(startingAt:)`` or ``seeded(_:)`` keeps its
/// position: a second batch through the same ``ShareIngestor`` continues where
/// the first stopped (so two batches in one container never share a name). Make
/// a new source for each run that must reproduce another.
public struct IdentifierSource: Sendable {
    private let generate: @Sendable () -> UUID

    /// A source that calls `generate` for every identifier. It is called from one
    /// thread at a time per batch, but batches may run concurrently.
    public init(_ generate: @escaping @Sendable () -> UUID) {
        self.generate = generate
    }

    /// The next identifier.
    public func next() -> UUID { generate() }

    /// Fresh random (version 4) UUIDs: what production uses.
    public static var random: IdentifierSource { IdentifierSource { UUID() } }

    /// `00000000-0000-0000-0000-000000000001`, `…0002`, …: the counter (from
    /// `first`) in the last 64 bits, in hexadecimal. Easy to read in a golden file.
    public static func sequential(startingAt first: UInt64 = 1) -> IdentifierSource {
        let counter = LockedCounter(first)
        return IdentifierSource { UUID(high: 0, low: counter.next()) }
    }

    /// Random-looking version 4 UUIDs from a fixed seed (SplitMix64): the same seed
    /// gives the same sequence on every machine and every run.
    public static func seeded(_ seed: UInt64) -> IdentifierSource {
        let counter = LockedCounter(seed)
        return IdentifierSource {
            let n = counter.next(advancingBy: 2)
            let a = SplitMix64.mix(n)
            let b = SplitMix64.mix(n &+ 1)
            // Version 4, RFC 4122 variant, like `UUID()`.
            return UUID(high: (a & ~0xF000) | 0x4000, low: (b & 0x3FFF_FFFF_FFFF_FFFF) | 0x8000_0000_0000_0000)
        }
    }
}

/// A counter that hands out consecutive values across threads.
private final class LockedCounter: Sendable {
    private let value: Atomic<UInt64>

    init(_ first: UInt64) { value = Atomic(first) }

    func next(advancingBy step: UInt64 = 1) -> UInt64 {
        value.wrappingAdd(step, ordering: .relaxed).oldValue
    }
}

/// SplitMix64's output function (Steele, Lea, Flood 2014): a counter in, well-mixed bits out.
private enum SplitMix64 {
    static func mix(_ counter: UInt64) -> UInt64 {
        var z = counter &* 0x9E37_79B9_7F4A_7C15 &+ 0x9E37_79B9_7F4A_7C15
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

extension UUID {
    /// A UUID from its 128 bits, most significant first.
    init(high: UInt64, low: UInt64) {
        func byte(_ word: UInt64, _ i: Int) -> UInt8 { UInt8(truncatingIfNeeded: word >> (56 - 8 * i)) }
        self.init(
            uuid: (
                byte(high, 0), byte(high, 1), byte(high, 2), byte(high, 3), byte(high, 4), byte(high, 5), byte(high, 6),
                byte(high, 7),
                byte(low, 0), byte(low, 1), byte(low, 2), byte(low, 3), byte(low, 4), byte(low, 5), byte(low, 6),
                byte(low, 7)
            ))
    }
}
