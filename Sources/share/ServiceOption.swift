import DecoderIsolation
import Foundation
import MediaFormats
import ShareIngest
import SystemCalls

/// `--metrics HOST:PORT` of `share watch` and `share worker`, and the service
/// manager's `NOTIFY_SOCKET`: the library's ``ShareService``, made only when
/// one of them asks for it.
enum ServiceOption {
    static let options: Set<String> = ["metrics"]

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
            all.append(ShareService.helperCheck {
                let report = try isolated.checkSandbox()
                if !report.shortfalls.isEmpty { throw UsageError(ProcessIsolatedDecoder.weakerSandboxMessage(report)) }
            })
        }
        let service: ShareService
        do {
            service = try ShareService(role: role, address: address, checks: all, refresh: refresh)
        } catch {
            throw UsageError("--metrics \(parsed.value("metrics") ?? ""): cannot listen: \(error.message)")
        }
        if let isolated = decoder as? ProcessIsolatedDecoder {
            service.metrics.readHelpers(started: { isolated.startedHelperCount }, killed: { isolated.killedHelperCount })
        }
        if let address = service.address {
            Terminal.shared.err("share: serving /metrics, /healthz and /readyz at http://\(address)/")
        }
        return service
    }
}
