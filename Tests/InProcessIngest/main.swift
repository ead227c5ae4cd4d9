// A host app's use of the library, in a process of its own: the ShareIngest
// library with its default decoder (MediaKit's InProcessDecoder, in this
// process), for the tests of what the pipeline does when the process itself
// dies while decoding (a crash in a decoding library, as SHARE_CRASH_POINT
// makes one in debug builds). `share` decodes in helpers, where such a crash
// ends a helper only.
//
// usage: InProcessIngest CONTAINER KEY DROP     a new batch of DROP under KEY
//        InProcessIngest CONTAINER KEY          resume the batch KEY
//        InProcessIngest worker --db URL --name NAME [--concurrency N] [--lease S] [--json]
//                                               a StageWorker until SIGTERM or SIGINT
// An ingest prints each failed item's message on stderr and exits 0 when every
// item was delivered, 1 when some failed, 2 when nothing could be done. A
// worker prints each event as `share: worker: MESSAGE` on stderr (with --json,
// one JSON object per event on stdout), as `share worker` does.
import Dispatch
import Foundation
import Glibc
import ShareIngest
import ShareManifest
import SystemCalls

let arguments = Array(CommandLine.arguments.dropFirst())

func fail(_ message: String, status: Int32) -> Never {
    FileHandle.standardError.write(Data("InProcessIngest: \(message)\n".utf8))
    exit(status)
}

func worker(_ arguments: [String]) -> Never {
    // First, while this process has one thread (see below).
    let termination = SignalSet([SIGTERM, SIGINT])
    termination.block()
    func value(_ name: String) -> String? {
        arguments.firstIndex(of: name).flatMap { $0 + 1 < arguments.count ? arguments[$0 + 1] : nil }
    }
    guard let url = value("--db") else { fail("worker: --db URL is required", status: 64) }
    var settings = StageWorker.Settings()
    if let name = value("--name") { settings.name = name }
    if let concurrency = value("--concurrency").flatMap(Int.init) { settings.concurrency = concurrency }
    if let lease = value("--lease").flatMap(Double.init) { settings.lease = lease }
    let json = arguments.contains("--json")
    let cancellation = CancellationFlag()
    // As `share` does (Sources/share/Signals.swift): SIGTERM and SIGINT blocked
    // while this process has one thread (threads inherit the mask), and taken by
    // one thread with sigwait. A Dispatch signal source here (SIG_IGN, then the
    // source) lost a SIGTERM that came in between, or on a thread started
    // before it: a worker went on serving, and a test waited 60 s for it.
    Thread {
        _ = termination.wait()
        cancellation.cancel()
    }.start()
    let log: @Sendable (StageWorker.Event) -> Void = { event in
        if json {
            var fields: [String: String] = event.fields
            fields["event"] = event.kind.rawValue
            fields["message"] = event.message
            if let line = try? JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys]) {
                FileHandle.standardOutput.write(line + Data("\n".utf8))
            }
        } else {
            FileHandle.standardError.write(Data("share: worker: \(event.message)\n".utf8))
        }
    }
    do {
        try StageWorker(url: url, settings: settings, log: log).run(cancellation: cancellation)
    } catch {
        fail("worker: \(error)", status: 69)
    }
    exit(0)
}

if arguments.first == "worker" { worker(Array(arguments.dropFirst())) }
guard arguments.count == 2 || arguments.count == 3 else {
    fail("usage: InProcessIngest CONTAINER KEY [DROP]", status: 64)
}
do {
    let ingestor = ShareIngestor(container: try ContainerDirectory(arguments[0]))
    let report =
        arguments.count == 3
        ? try ingestor.ingest([.path(arguments[2])], key: try ShareKey(arguments[1]))
        : try ingestor.resume(arguments[1])
    for item in report.items where item.status == .failed {
        if let failure = item.failure { FileHandle.standardError.write(Data("\(failure.message)\n".utf8)) }
    }
    exit(report.counts.failed > 0 ? 1 : 0)
} catch {
    fail("\(error)", status: 2)
}
