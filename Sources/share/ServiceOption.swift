import DecoderIsolation
import Foundation
import MediaFormats
import ShareIngestCore
import SystemCalls

/// `--metrics HOST:PORT` of `share watch` and `share worker`, and the service
/// manager's `NOTIFY_SOCKET`: the library's ``ShareService``, made only when
/// one of them asks for it.
enum ServiceOption {
    /// The metrics address cannot be listened on (exit 69: a service, the port, is unavailable).
    struct ListenFailure: Error, CustomStringConvertible { let description: String }

    /// `--log-format plain|json`, read before the other arguments are parsed (so
    /// that even a warning about them is in the chosen format); the usage error if bad.
    static func applyLogFormat(_ arguments: ArraySlice<String>) -> String? {
        var value: String?
        var iterator = arguments.makeIterator()
        while let argument = iterator.next(), argument != "--" {
            if argument == "--log-format" { value = iterator.next() ?? "" }
            if argument.hasPrefix("--log-format=") { value = String(argument.dropFirst("--log-format=".count)) }
        }
        guard let value else { return nil }
        guard let format = ServiceLogLine.Format(rawValue: value) else {
            return "--log-format must be plain or json, not \"\(value)\""
        }
        Terminal.shared.logFormat = format
        return nil
    }

    /// A worker's log line: its event's fields where the log has a key for them.
    static func line(_ event: StageWorker.Event) -> ServiceLogLine {
        let level: ServiceLogLine.Level =
            switch event.kind {
            case .failed, .gaveUp, .batchFailed, .disconnected: .error
            case .retry, .blocked: .warning
            default: .info
            }
        return ServiceLogLine(
            level: level, event: event.kind.rawValue, batch: event.fields["batch"], item: event.fields["item"],
            stage: event.fields["stage"],
            reason: event.fields["reason"], message: event.message)
    }

    /// The service of a command, or nil when neither `--metrics` nor `NOTIFY_SOCKET` asks for one.
    static func make(
        _ parsed: Arguments, role: ServiceMetrics.Role, decoder: any MediaDecoder, checks: [ServiceMonitor.Check],
        refresh: @escaping @Sendable (ServiceMetrics) -> Void
    ) throws -> ShareService? {
        var address: ServiceAddress?
        if let text = parsed.value("metrics") {
            switch ServiceAddress.parse(text) {
            case .success(let parsed): address = parsed
            case .failure(let error): throw UsageError(error.description)
            }
        }
        guard address != nil || ServiceNotifier().isActive else { return nil }
        var all = checks
        if let isolated = decoder as? ProcessIsolatedDecoder {
            all.append(
                ShareService.helperCheck {
                    let report = try isolated.checkSandbox()
                    if !report.shortfalls.isEmpty {
                        throw UsageError(ProcessIsolatedDecoder.weakerSandboxMessage(report))
                    }
                })
            all.append(ShareService.stoppedHelpersCheck { isolated.replaceStoppedHelpers() })
        }
        let service: ShareService
        do {
            service = try ShareService(role: role, address: address, checks: all, refresh: refresh)
        } catch {
            throw ListenFailure(
                description: "--metrics \(parsed.value("metrics") ?? ""): cannot listen: \(error.message)")
        }
        if let isolated = decoder as? ProcessIsolatedDecoder {
            service.metrics.readHelpers(
                started: { isolated.startedHelperCount }, killed: { isolated.killedHelperCount })
        }
        if let address = service.address {
            Terminal.shared.err("share: serving /metrics, /healthz and /readyz at http://\(address)/")
        }
        return service
    }
}
