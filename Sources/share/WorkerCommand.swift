import Foundation
import MediaFormats
import ShareIngestCore
import ShareManifest

/// `share worker` and `share db migrate`: the distributed mode's workers.
enum WorkerCommand {
    static func run(_ arguments: ArraySlice<String>) -> ExitStatus {
        let spec = CommandTable.worker
        if let error = ServiceOption.applyLogFormat(arguments) { return Command.usageFailure(error, spec) }
        let parsed: Arguments
        switch Command.parse(arguments, spec) {
        case .success(let arguments): parsed = arguments
        case .failure(let exit): return exit.status
        }
        guard let url = parsed.value("db") else {
            return Command.usageFailure("--db URL (or --db-file FILE) is required", spec)
        }
        var settings = StageWorker.Settings()
        let decoder: any MediaDecoder
        do {
            decoder = try DecoderOption.decoder(parsed)
        } catch {
            return Command.usageFailure(error.description, spec)
        }
        if let list = parsed.value("stages") {
            settings.stages = list.split(separator: ",").compactMap { StageName(rawValue: String($0)) }
        }
        settings.concurrency = parsed.integer("concurrency") ?? 2
        settings.lease = parsed.seconds("lease") ?? 30
        if let name = parsed.value("name") { settings.name = name }
        let service: ShareService?
        do {
            let database = ServiceMonitor.Database(url: url)
            service = try ServiceOption.make(
                parsed, role: .worker, decoder: decoder, checks: [database.check], refresh: database.refreshWorkerGauges
            )
        } catch let error as UsageError {
            return Command.usageFailure(error.description, spec)
        } catch {
            return Command.failure(error)
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
            try StageWorker(url: url, settings: settings, events: service?.events, log: log, decoder: decoder).run(
                cancellation: cancellation)
        } catch {
            if cancellation.isCancelled {
                return Command.failure("worker interrupted before it started: \(error)", Signals.serviceExit)
            }
            return Command.failure("cannot start the worker: \(error)", ExitStatus.of(error, database: true))
        }
        return Signals.serviceExit
    }

    static func database(_ arguments: ArraySlice<String>) -> ExitStatus {
        guard let word = arguments.first, !word.hasPrefix("-") else {
            if Arguments.asksForHelp(arguments) {
                Terminal.shared.out(Help.text(of: CommandTable.migrate))
                return .success
            }
            Terminal.shared.err("share db: expected a command: migrate (see share help db migrate)")
            return .usage
        }
        guard let spec = CommandTable.command("db \(word)") else {
            Terminal.shared.err(
                "share db: unknown command \(JSONText.quoted(word)); did you mean migrate? (see share help db migrate)")
            return .usage
        }
        let parsed: Arguments
        switch Command.parse(arguments.dropFirst(), spec) {
        case .success(let arguments): parsed = arguments
        case .failure(let exit): return exit.status
        }
        guard let url = parsed.value("db") else {
            return Command.usageFailure("--db URL (or --db-file FILE) is required", spec)
        }
        let cancellation = CancellationFlag()
        Signals.cancel(cancellation)
        let applied: [String]
        do {
            applied = try StageWorker.migrate(url: url, cancellation: cancellation)
        } catch {
            if let signal = Signals.received {
                return Command.failure("interrupted: \(error)", ExitStatus.after(signal: signal))
            }
            return Command.failure(error, database: true)
        }
        // Said as it happened: a fresh database is created, an old one brought up to date, a current one left alone.
        Terminal.shared.err(
            applied.isEmpty
                ? "share: the schema was already up to date; nothing changed"
                : "share: applied \(applied.count) migration\(applied.count == 1 ? "" : "s") (\(applied.joined(separator: ", "))); the schema is up to date"
        )
        return .success
    }
}
