// A host app's ingest, in its own process: the ShareIngest library with its
// default decoder (MediaKit's InProcessDecoder, in this process), for the tests
// of what the pipeline does when the process itself dies while decoding (a
// crash in a decoding library, as SHARE_CRASH_POINT makes one in debug
// builds). `share` decodes in helpers, where such a crash ends a helper only.
//
// usage: InProcessIngest CONTAINER KEY DROP     a new batch of DROP under KEY
//        InProcessIngest CONTAINER KEY          resume the batch KEY
// Prints each failed item's message on stderr; exits 0 when every item was
// delivered, 1 when some failed, 2 when nothing could be done.
import Foundation
import ShareIngest
import ShareManifest

let arguments = CommandLine.arguments
guard arguments.count == 3 || arguments.count == 4 else {
    FileHandle.standardError.write(Data("usage: InProcessIngest CONTAINER KEY [DROP]\n".utf8))
    exit(64)
}
do {
    let ingestor = ShareIngestor(container: try ContainerDirectory(arguments[1]))
    let report =
        arguments.count == 4
        ? try ingestor.ingest([.path(arguments[3])], key: try ShareKey(arguments[2]))
        : try ingestor.resume(arguments[2])
    for item in report.items where item.status == .failed {
        if let failure = item.failure { FileHandle.standardError.write(Data("\(failure.message)\n".utf8)) }
    }
    exit(report.counts.failed > 0 ? 1 : 0)
} catch {
    FileHandle.standardError.write(Data("InProcessIngest: \(error)\n".utf8))
    exit(2)
}
