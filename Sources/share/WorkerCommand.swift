import Foundation
import MediaFormats
import ShareIngest

/// `share worker` and `share db migrate`: the distributed mode's workers.
enum WorkerCommand {
    static let usage = """
        usage: share worker --db URL [--stages sniff,copy,probe,thumbnail,manifest] [--concurrency N] [--lease SECONDS]
                            [--name NAME] [--isolation process|none] [--metrics HOST:PORT] [--log-format plain|json]
                            [--json | --quiet]
               share db migrate --db URL
        """

    static func run(_ arguments: ArraySlice<String>) -> ExitStatus {
        if let error = ServiceOption.applyLogFormat(arguments) { return Command.usageFailure(error, usage: usage) }
        let parsed: Arguments
        switch Command.parse(arguments, options: Set(["db", "stages", "concurrency", "lease", "name", "isolation"]).union(ServiceOption.options), flags: ["quiet", "json"], usage: usage) {
        case .success(let arguments): parsed = arguments
        case .failure(let exit): return exit.status
        }
        guard let url = parsed.value("db") else { return Command.usageFailure("--db URL is required", usage: usage) }
        var settings = StageWorker.Settings()
        let decoder: any MediaDecoder
        do {
            decoder = try DecoderOption.decoder(parsed)
            if let list = parsed.value("stages") {
                settings.stages = try list.split(separator: ",").map { name in
                    guard let stage = StageName(rawValue: String(name)) else {
                        throw UsageError("unknown stage \"\(name)\" in --stages; allowed: \(StageName.allCases.map(\.rawValue).joined(separator: ", "))")
                    }
                    return stage
                }
            }
            settings.concurrency = Int(try parsed.number("concurrency", in: 1...64) ?? 2)
            settings.lease = try parsed.number("lease", in: 1...3600) ?? 30
            if let name = parsed.value("name") { settings.name = name }
        } catch {
            return Command.usageFailure("\(error)", usage: usage)
        }
        let service: ShareService?
        do {
            let database = ServiceMonitor.Database(url: url)
            service = try ServiceOption.make(parsed, role: .worker, decoder: decoder, checks: [database.check], refresh: database.refreshWorkerGauges)
        } catch {
            return Command.usageFailure("\(error)", usage: usage)
        }
        defer { service?.shutdown() }
        let cancellation = CancellationFlag()
        Signals.cancel(cancellation) { _ in
            service?.stopping()
            Terminal.shared.err("share: worker stopping: jobs in flight finish their stage")
        }
        let json = parsed.flag("json")
        let quiet = parsed.flag("quiet")
        let log: @Sendable (StageWorker.Event) -> Void = { event in
            // Registered, schema checked: the worker takes jobs.
            if event.kind == .started { service?.started() }
            if json {
                var fields: [String: Any?] = event.fields
                fields["event"] = event.kind.rawValue
                fields["message"] = event.message
                fields["time"] = ISO8601DateFormatter().string(from: Date())
                Terminal.shared.out(DatabaseSecrets.scrub(JSONLine.object(fields)))
            } else if !quiet || ![.started, .stopped, .batchDone, .unblocked].contains(event.kind) {
                Terminal.shared.log(ServiceOption.line(event), plain: "share: worker: \(event.message)")
            }
        }
        do {
            try StageWorker(url: url, settings: settings, events: service?.events, log: log, decoder: decoder).run(cancellation: cancellation)
        } catch {
            return Command.failure(cancellation.isCancelled ? "worker interrupted before it started: \(error)" : "cannot start the worker: \(error)")
        }
        return .success
    }

    static func database(_ arguments: ArraySlice<String>) -> ExitStatus {
        guard arguments.first == "migrate" else { return Command.usageFailure("expected: share db migrate --db URL", usage: usage) }
        do {
            let parsed = try Arguments(arguments.dropFirst(), options: ["db"], flags: [])
            guard let url = parsed.value("db") else { return Command.usageFailure("--db URL is required", usage: usage) }
            let cancellation = CancellationFlag()
            Signals.cancel(cancellation)
            try StageWorker.migrate(url: url, cancellation: cancellation)
            Terminal.shared.err("share: schema is up to date")
            return .success
        } catch let error as UsageError {
            return Command.usageFailure(error.description, usage: usage)
        } catch {
            return Command.failure("\(error)")
        }
    }
}
