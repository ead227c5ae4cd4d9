import Foundation

/// What a batch of `share ingest` was asked to take, as one short text: its
/// inputs in order (paths made absolute, texts, links, in-memory data by name
/// and size), hashed. Recorded with the batch (in the column a watched drop
/// keeps its tree's signature in: such a batch has no drop name), so a plain
/// re-run of the same command finds the batch an interruption left unfinished
/// instead of starting a second one beside it.
enum InputsSignature {
    static func of(_ inputs: [ShareInput]) -> String {
        var hasher = FNV1a()
        for input in BatchPlan.absolute(inputs) {
            switch input {
            case .path(let path): hasher.add([0x01] + path.bytes)
            case .text(let text): hasher.add([0x02] + Array(text.utf8))
            case .url(let url): hasher.add([0x03] + Array(url.utf8))
            case .data(let data, let name): hasher.add([0x04] + Array("\(name)\u{0}\(data.count)".utf8))
            }
            hasher.add([0x00])
        }
        return "inputs:" + String(hasher.value, radix: 16)
    }
}
