// Fuzz target: RedirectURL.parse on arbitrary text (scripts/fuzz.sh).
import Foundation
import FuzzReplay
import ShareManifest

func check(_ data: Data) {
    let text = String(decoding: data, as: UTF8.self)
    if let parsed = try? RedirectURL.parse(text) {
        // A parsed key is always one safe path component.
        let key = parsed.key.rawValue
        precondition(!key.isEmpty && !key.contains("/") && !key.hasPrefix(".") && key.utf8.count <= 128)
        // What we print parses back to the same thing.
        if let url = parsed.url {
            let again = try! RedirectURL.parse(url.description)
            precondition(again.url == url)
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
