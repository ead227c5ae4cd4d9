// Fuzz target: ManifestCoder.decode on arbitrary bytes (scripts/fuzz.sh).
import Foundation
import FuzzReplay
import ShareManifest

func check(_ bytes: Data) {
    if let decoded = try? ManifestCoder.decode(bytes) {
        // Whatever decodes re-encodes and decodes to the same entries.
        let again = try! ManifestCoder.decode(ManifestCoder.encode(decoded.entries, schema: .v2))
        precondition(again.entries.count == decoded.entries.count)
        for entry in decoded.entries { _ = ManifestCoder.filePath(fromURLString: entry.path) }
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
