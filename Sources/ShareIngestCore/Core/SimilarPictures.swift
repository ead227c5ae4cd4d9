import Foundation
import MediaFormats
import ShareManifest
import SystemCalls

/// 64-bit hashes found by Hamming distance: multi-index hashing (Norouzi et
/// al.) over the hash's four 16-bit chunks, each with a table from a chunk's
/// value to the hashes that have it. Two hashes within `radius` bits agree
/// within `radius / 4` bits on at least one chunk (pigeonhole), so a lookup
/// reads, per chunk, the buckets of the values that near (137 for a radius
/// of 8) and checks only the hashes in them: about 548 · n / 65,536
/// candidates, never the whole set.
struct HashIndex {
    /// The largest distance looked up.
    let radius: Int
    private(set) var hashes: [UInt64] = []
    /// Empty until the first hash is added: 2 MiB of bucket arrays, not made
    /// for a batch without pictures, nor copied along with an empty index.
    private var tables: [[UInt32]] = []
    /// The 16-bit masks of at most `radius / 4` bits.
    private let masks: [UInt16]

    init(radius: Int) {
        self.radius = radius
        let chunkRadius = radius / 4
        masks = (0...UInt16.max).filter { $0.nonzeroBitCount <= chunkRadius }
    }

    var count: Int { hashes.count }

    /// Adds `hash`; its id is the number of hashes added before it.
    @discardableResult
    mutating func insert(_ hash: UInt64) -> Int {
        let id = hashes.count
        if tables.isEmpty { tables = Array(repeating: [], count: 4 << 16) }
        hashes.append(hash)
        for chunk in 0..<4 { tables[chunk << 16 | Self.chunk(hash, chunk)].append(UInt32(id)) }
        return id
    }

    /// The ids of the hashes within ``radius`` bits of `hash`, nearest first
    /// (then the earliest added), each with its distance.
    func near(_ hash: UInt64) -> [(id: Int, distance: Int)] {
        var found: [(id: Int, distance: Int)] = []
        guard !tables.isEmpty else { return found }
        let radius = radius
        hashes.withUnsafeBufferPointer { hashes in
            for chunk in 0..<4 {
                let value = UInt16(Self.chunk(hash, chunk))
                for mask in masks {
                    tables[chunk << 16 | Int(value ^ mask)].withUnsafeBufferPointer { bucket in
                        for id in bucket {
                            let distance = (hashes[Int(id)] ^ hash).nonzeroBitCount
                            // A hash near on several chunks is found once per chunk.
                            if distance <= radius, !found.contains(where: { $0.id == Int(id) }) {
                                found.append((Int(id), distance))
                            }
                        }
                    }
                }
            }
        }
        return found.sorted { ($0.distance, $0.id) < ($1.distance, $1.id) }
    }

    private static func chunk(_ hash: UInt64, _ chunk: Int) -> Int {
        Int(truncatingIfNeeded: hash >> UInt64(16 * chunk)) & 0xFFFF
    }
}

/// A perceptual hash of an item of an earlier finished batch (``ItemStore/earlierPerceptualHashes(for:)``).
struct EarlierHash: Sendable, Hashable {
    let hash: UInt64
    /// Its colour cells (nil in a record written before they were carried).
    var colours: [UInt8]? = nil
    let batch: UUID
    let index: Int
    let shareKey: ShareKey
}

/// Near-duplicates (v2 `similarTo`): a picture whose perceptual hash
/// (``PerceptualHash``) is within ``threshold`` bits of one delivered before it,
/// in its batch (an item the fan-in settled before it) or in a share not yet
/// consumed whose copy is still there (as ``DuplicateContent`` counts them),
/// and that is not its duplicate, looks like it: the nearest one (the
/// earliest of those as near) is named, unless a second check tells them
/// apart: both carry colour cells and they are not alike
/// (``PerceptualHash/coloursAlike(_:_:)``: some of the 4×4 cells differs by more
/// than ``PerceptualHash/cellTolerance`` plus a third of the steps around it;
/// against a record of quarters only, some quarter by more than
/// ``PerceptualHash/colourTolerance``). A smooth wall's or gradient's hash
/// matches many unlike it. Every hash is held in one
/// ``HashIndex``: the earlier batches' read once from their column, the
/// batch's own added as the fan-in settles its items.
struct SimilarPictures {
    /// The largest distance, in bits of 64, that counts as similar: measured on
    /// the tests' pictures, recompressed, resized, re-encoded and cropped copies
    /// were at most 6 bits from their originals, distinct photos at least 20.
    static let threshold = 8

    private var index = HashIndex(radius: threshold)
    /// What each id of ``index`` stands for: an earlier batch's item, or a copy of this batch.
    private var owners: [Owner] = []
    let container: ContainerDirectory
    /// The copy of an earlier batch's item (nil: no longer there).
    let copyOf: (UUID, Int) -> String?

    private enum Owner {
        case earlier(EarlierHash)
        case inBatch(String, colours: [UInt8]?)

        var colours: [UInt8]? {
            switch self {
            case .earlier(let hash): hash.colours
            case .inBatch(_, let colours): colours
            }
        }
    }

    init(earlier: [EarlierHash], container: ContainerDirectory, copyOf: @escaping (UUID, Int) -> String?) {
        (self.container, self.copyOf) = (container, copyOf)
        owners.reserveCapacity(earlier.count)
        // A hash recorded before flat pictures went without one is no original either.
        for hash in earlier where hash.hash != PerceptualHash.flatNoise {
            index.insert(hash.hash)
            owners.append(.earlier(hash))
        }
    }

    /// Sets `item`'s ``ItemState/similarTo`` (delivered, not a duplicate, with a
    /// hash), then adds it to the index; true when it changed. A picture
    /// without detail has no hash (``PerceptualHash/minimumDetail``; an older
    /// record's ``PerceptualHash/flatNoise`` counts as none): it is neither
    /// similar nor anyone's original.
    mutating func resolve(_ item: inout ItemState) -> Bool {
        var similar: SimilarRecord?
        let record =
            item.failure == nil && item.thumbnailPath != nil
            ? item.perceptualHash.flatMap(PerceptualHash.parseRecord).flatMap {
                $0.hash == PerceptualHash.flatNoise ? nil : $0
            }
            : nil
        let hash = record?.hash
        if let hash, item.duplicateOf == nil {
            let manifests = ManifestStore(container: container)
            for candidate in index.near(hash) {
                if let mine = record?.colours, let theirs = owners[candidate.id].colours,
                    !PerceptualHash.coloursAlike(mine, theirs)
                {
                    continue
                }
                switch owners[candidate.id] {
                case .inBatch(let path, _):
                    similar = SimilarRecord(path: path, distance: candidate.distance)
                case .earlier(let earlier):
                    guard manifests.exists(earlier.shareKey), let path = copyOf(earlier.batch, earlier.index),
                        FileSystem.exists(path)
                    else { continue }
                    similar = SimilarRecord(path: path, distance: candidate.distance)
                }
                break
            }
        }
        if let hash, item.duplicateOf == nil, let path = item.copyPath {
            index.insert(hash)
            owners.append(.inBatch(path, colours: record?.colours))
        }
        guard item.similarTo != similar else { return false }
        item.similarTo = similar
        return true
    }
}
