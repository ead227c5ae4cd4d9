// Fuzz target: ContentSniffer.sniff on arbitrary prefixes and names (scripts/fuzz.sh).
// The first byte (mod 4) picks a file name, so the name-dependent paths are reached too.
import Foundation
import FuzzReplay
import MediaFormats

let names: [String?] = [nil, "photo.jpg", "clip.mp4", "notes.txt"]

func check(_ data: Data) {
    let bytes = [UInt8](data)
    guard let first = bytes.first else {
        _ = ContentSniffer.sniff([UInt8](), fileName: "empty.jpg")
        return
    }
    let name = names[Int(first) % names.count]
    let sniffed = ContentSniffer.sniff(bytes.dropFirst(), fileName: name)
    precondition(!sniffed.fileExtension.isEmpty && !sniffed.fileExtension.contains("/"))
    // A second read past a long ID3v2 tag: the continuation is what the data holds there
    // (the prefix is at most `prefixLength` bytes; the rest of the data stands for the file).
    let file = Array(bytes.dropFirst())
    if let offset = ContentSniffer.continuationOffset(file) {
        precondition(offset >= ContentSniffer.prefixLength - 4)
        let continuation = offset < file.count ? Array(file[offset...].prefix(ContentSniffer.prefixLength)) : []
        _ = ContentSniffer.sniff(file.prefix(ContentSniffer.prefixLength), fileName: name, continuation: continuation)
    }
    // The tail of the data used as a file name: extensions are short, plain and lower-case.
    let tail = String(decoding: bytes.suffix(24), as: UTF8.self)
    if let ext = ContentSniffer.fileExtension(of: tail) {
        precondition(ext.count <= 10 && ext == ext.lowercased() && !ext.contains("."))
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
