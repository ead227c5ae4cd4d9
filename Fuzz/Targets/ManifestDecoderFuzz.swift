// libFuzzer target: ManifestCoder.decode on arbitrary bytes (scripts/fuzz.sh).
import Foundation

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Data(UnsafeBufferPointer(start: data, count: size))
    if let decoded = try? ManifestCoder.decode(bytes) {
        // Whatever decodes re-encodes and decodes to the same entries.
        let again = try! ManifestCoder.decode(ManifestCoder.encode(decoded.entries, schema: .v2))
        precondition(again.entries.count == decoded.entries.count)
        for entry in decoded.entries { _ = ManifestCoder.filePath(fromURLString: entry.path) }
    }
    return 0
}
