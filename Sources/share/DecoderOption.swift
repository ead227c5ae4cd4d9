import DecoderIsolation
import MediaFormats

/// `--isolation process|none`: where `ingest`, `watch` and `worker` decode the
/// shared media. The CLI only builds the decoder and passes it in.
enum DecoderOption {
    /// The option's usage line.
    static let usage = "--isolation process|none   decode in sandboxed helper processes (default) or in-process"

    /// The decoder `--isolation` asks for (default: sandboxed helpers started from this executable).
    static func decoder(_ parsed: Arguments) throws(UsageError) -> any MediaDecoder {
        let value = parsed.value("isolation") ?? Isolation.process.rawValue
        guard let isolation = Isolation(rawValue: value) else {
            throw UsageError("--isolation must be process or none, not \"\(value)\"")
        }
        return isolation.decoder()
    }
}
