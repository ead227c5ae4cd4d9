/// Why a whole batch could not be run (as opposed to one item failing).
public enum ShareIngestError: Error, Sendable, CustomStringConvertible {
    /// The container cannot be created or written.
    case containerUnusable(path: String, reason: String)
    /// A manifest already exists under this key and has not been consumed.
    case manifestExists(key: ShareKey, path: String)
    /// Nothing to ingest.
    case noInputs
    /// A source named on the command line does not exist or cannot be read.
    case inputMissing(path: String, reason: String)
    /// The pipeline definition is invalid.
    case pipeline(PipelineError)
    case badScheme(String)

    public var description: String {
        switch self {
        case .containerUnusable(let path, let reason): "container \(path) is not usable: \(reason)"
        case .manifestExists(let key, let path):
            "a manifest for key \(key) already exists (\(path)) and has not been consumed; choose another --key or consume it first"
        case .noInputs: "nothing to ingest: give files, folders, --text or --url"
        case .inputMissing(let path, let reason): "\(path): \(reason)"
        case .pipeline(let error): error.description
        case .badScheme(let scheme): "\(JSONText.string(scheme)) is not a valid URL scheme (a letter, then letters, digits, + - .)"
        }
    }
}
