import Foundation
// Fuzz target: the maker-note burst reader (StillMoments: Apple's maker note
// in the EXIF, its BurstUUID, with the content identifier and capture time
// read beside it), on arbitrary bytes taken as the EXIF block (a TIFF
// structure) of a JPEG made around them, so that the mutations land in the
// maker note and its IFDs (scripts/fuzz.sh burst). Identifiers are only ever
// answered in Apple's alphabet, times finite.
import FuzzReplay
import MediaFormats

/// A JPEG whose APP1 EXIF block is `tiff` (at most what one segment holds).
func jpeg(around tiff: [UInt8]) -> [UInt8] {
    let body = Array("Exif".utf8) + [0, 0] + tiff.prefix(65_000)
    let length = body.count + 2
    return [0xFF, 0xD8, 0xFF, 0xE1, UInt8(length >> 8), UInt8(length & 0xFF)] + body + [0xFF, 0xD9]
}

func check(_ data: Data) {
    let bytes = [UInt8](data)
    for input in [jpeg(around: bytes), bytes] {
        guard let facts = MomentReader.read(input, format: .jpeg) else { continue }
        if let burst = facts.burstIdentifier {
            precondition(MomentFacts.isValidIdentifier(burst), "burst identifier \(burst.debugDescription)")
        }
        if let identifier = facts.contentIdentifier { precondition(MomentFacts.isValidIdentifier(identifier)) }
        for value in [facts.captureTime?.local, facts.captureTime?.utc].compactMap({ $0 }) {
            precondition(value.isFinite)
        }
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    check(Data(UnsafeBufferPointer(start: data, count: size)))
    return 0
}

#if !FUZZING
    @main struct Replay { static func main() { FuzzReplay.run(check) } }
#endif
