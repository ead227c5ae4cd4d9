// libFuzzer target: RedirectURL.parse on arbitrary text (scripts/fuzz.sh).
import Foundation

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
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
    return 0
}
