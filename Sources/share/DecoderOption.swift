import DecoderIsolation
import MediaFormats

/// `--isolation process|none`: where `ingest`, `watch` and `worker` decode the
/// shared media. The CLI only builds the decoder and passes it in.
enum DecoderOption {
    /// The option's usage line.
    static let usage = "--isolation process|none   decode in sandboxed helper processes (default) or in-process"

    /// Whether `arguments` (the command and its arguments) run a command that
    /// decodes in sandboxed helpers: `ingest` (not a `--db` client, which only
    /// enqueues), `watch` or `worker`, without `--isolation none` or `--help`.
    /// Such a command forks its helper template at its start
    /// (`ProcessIsolatedDecoder.forkHelperTemplate`); a guess that turns out wrong costs a fork.
    static func decodesInHelpers(_ arguments: ArraySlice<String>) -> Bool {
        guard let command = arguments.first, ["ingest", "watch", "worker"].contains(command) else { return false }
        let options = Array(arguments.dropFirst())
        func has(_ name: String, value: String? = nil) -> Bool {
            options.indices.contains { index in
                if let value {
                    return options[index] == "--\(name)=\(value)" || (options[index] == "--\(name)" && options.indices.contains(index + 1) && options[index + 1] == value)
                }
                return options[index] == "--\(name)" || options[index].hasPrefix("--\(name)=")
            }
        }
        if has("help") || has("isolation", value: Isolation.none.rawValue) { return false }
        return command != "ingest" || !has("db")
    }

    /// The decoder `--isolation` asks for (default: sandboxed helpers started from this executable).
    static func decoder(_ parsed: Arguments) throws(UsageError) -> any MediaDecoder {
        let value = parsed.value("isolation") ?? Isolation.process.rawValue
        guard let isolation = Isolation(rawValue: value) else {
            throw UsageError("--isolation must be process or none, not \"\(value)\"")
        }
        return isolation.decoder()
    }
}
