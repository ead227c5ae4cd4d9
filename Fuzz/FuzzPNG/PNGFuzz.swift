import Foundation
// Fuzz target: the PNG location scanner (`eXIf` chunks and XMP in `iTXt`,
// compressed or not), on arbitrary bytes read as a PNG (scripts/fuzz.sh png).
// The overwrites are bounded (LocationChecks); a chunk whose CRC is to be
// recomputed starts at a chunk's frame whose length fits the overwrite.
import FuzzChecks
import FuzzReplay
import MediaFormats

func check(_ data: Data) {
    let bytes = [UInt8](data)
    let found = LocationScanner.scan(bytes, format: .png)
    LocationChecks.check(found, fileSize: bytes.count)
    for edit in found.found.flatMap(\.edits) where edit.fill == .pngCRC {
        let length = bytes[edit.offset..<(edit.offset + 4)].reduce(0) { $0 << 8 | Int($1) }
        precondition(length + 12 == edit.length, "a CRC overwrite of \(edit.length) bytes over a chunk of \(length)")
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
