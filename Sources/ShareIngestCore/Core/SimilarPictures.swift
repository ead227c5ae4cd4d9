import Foundation
import MediaFormats
import ShareManifest
import SystemCalls

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
        var hashes: [UInt64] = []
        // A hash recorded before flat pictures went without one is no original either.
        for hash in earlier where hash.hash != PerceptualHash.flatNoise {
            hashes.append(hash.hash)
            owners.append(.earlier(hash))
        }
        // At once, so the index lays its tables out once, not as it grows.
        index.insert(contentsOf: hashes)
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
