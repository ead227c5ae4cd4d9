import Foundation
// Fuzz target: the sidecars' content sniff (ExportSidecars.kind(name:head:):
// Takeout's JSON, an XMP packet, an .AAE property list, recognised by the
// first 4 KiB of a file the name says may be one), on arbitrary bytes under
// each sidecar name (scripts/fuzz.sh sidecar). It never answers a kind other
// than the one the name allows, and never for a name that allows none.
import FuzzReplay
import ShareIngestCore

func check(_ data: Data) {
    let head = [UInt8](data.prefix(8192))
    for name in [
        "IMG_0001.JPG.json", "IMG_0001.jpg.supplemental-metadata.json", "IMG_0001.xmp", "IMG_0001.JPG.XMP",
        "IMG_0001.AAE", "IMG_0001.txt", "json",
    ] {
        let kind = ExportSidecars.kind(name: name, head: head)
        precondition(
            kind == nil || kind == ExportSidecars.kind(byName: name), "\(name) sniffed as \(String(describing: kind))")
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
