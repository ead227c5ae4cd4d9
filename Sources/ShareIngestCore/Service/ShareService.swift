import Foundation
import Synchronization
import SystemCalls

/// What makes `share watch` and `share worker` services: the metrics (fed from
/// the batch's events), the listener for `/metrics`, `/healthz` and `/readyz`
/// (with `--metrics`), the readiness checks, and the service manager's
/// notifications (`NOTIFY_SOCKET`). A command makes one, passes ``events`` to
/// its batches, and calls ``started()`` once it can work and ``stopping()`` on SIGTERM.
package final class ShareService: Sendable {
    package let metrics: ServiceMetrics
    package let monitor: ServiceMonitor
    package let notifier = ServiceNotifier()
    private let listener: ServiceListener?

    /// Binds `address` (when given) and starts the monitor's checks; nothing is served before this returns.
    package init(
        role: ServiceMetrics.Role, address: ServiceAddress?, checks: [ServiceMonitor.Check],
        stages: [StageName] = StageName.allCases,
        refresh: @escaping @Sendable (ServiceMetrics) -> Void = { _ in }, interval: Double = 5
    ) throws(SystemError) {
        let metrics = ServiceMetrics(role: role, stages: stages)
        let monitor = ServiceMonitor(metrics: metrics, interval: interval, checks: checks, refresh: refresh)
        self.metrics = metrics
        self.monitor = monitor
        listener = try address.map { address throws(SystemError) in try ServiceListener(address) { monitor.route($0) } }
        monitor.start()
        listener?.start()
    }

    /// Where `/metrics` is served (the port the system chose for port 0), if anywhere.
    package var address: ServiceAddress? { listener?.address }

    /// The sink to give the batches: every event counted.
    package var events: IngestEventSink {
        let metrics = metrics
        return { metrics.observe($0) }
    }

    /// The process can work: `/readyz` may pass, `READY=1` and the watchdog start.
    package func started() {
        monitor.markStarted()
        let monitor = monitor
        notifier.ready(monitor.statusLine) { monitor.statusLine }
    }

    /// SIGTERM: `/readyz` fails, `STOPPING=1`.
    package func stopping() {
        monitor.markStopping()
        notifier.stopping("stopping: work in flight finishes; " + monitor.statusLine)
    }

    /// Stops the listener and the monitor (at exit).
    package func shutdown() {
        listener?.stop()
        monitor.stop()
    }

    /// A check that a decoder helper can be started: `start` is tried at the
    /// first check and then at most every `every` seconds (it may start a
    /// helper; the result is kept in between).
    package static func helperCheck(every seconds: Double = 60, _ start: @escaping @Sendable () throws -> Void)
        -> ServiceMonitor.Check
    {
        let last = Mutex<(at: Double, failure: String?)?>(nil)
        return ServiceMonitor.Check("helper") {
            let now = MonotonicClock.now()
            let failure: String? = last.withLock { last in
                if let last, now - last.at < seconds { return last.failure }
                var failure: String?
                do { try start() } catch { failure = "\(error)" }
                last = (now, failure)
                return failure
            }
            if let failure { throw CheckFailure(description: failure) }
        }
    }

    /// The `helpers` check: fails, naming each, while decoder helpers were found
    /// stopped by a signal (SIGSTOP from outside) since the last check; `replace`
    /// finds them and has them killed and replaced (so the check passes again
    /// once none is found).
    package static func stoppedHelpersCheck(_ replace: @escaping @Sendable () -> [Int32]) -> ServiceMonitor.Check {
        ServiceMonitor.Check("helpers") {
            let stopped = replace()
            guard !stopped.isEmpty else { return }
            throw CheckFailure(
                description: stopped.map { "the decoder helper (pid \($0)) was stopped by a signal" }.joined(
                    separator: "; ")
                    + "; killed and replaced")
        }
    }

    struct CheckFailure: Error, CustomStringConvertible { let description: String }
}

// MARK: - share doctor

extension ShareService {
    /// What the systemd units of deploy/systemd need on this machine for their
    /// helpers to get its strongest confinement, for `share doctor`: the units
    /// run `share` unprivileged, with no capability and no namespace, which is
    /// enough where the kernel has Landlock. Without it, the drop-in
    /// `no-landlock.conf` allows the user and mount namespaces an unprivileged
    /// helper confines itself in (where unprivileged users may make them), and
    /// otherwise `mount-namespace.conf` gives the unprivileged `share` the two
    /// capabilities (ambient: CAP_SYS_ADMIN, CAP_SYS_CHROOT) its helpers' mount
    /// namespace takes without a user namespace, and only the mount calls that takes. (Run `share doctor`
    /// outside the units: inside one, its own filter hides the namespaces.)
    package static func systemdUnits(landlockABI: Int, unprivilegedNamespaces: Bool) -> (
        dropIn: String?, advice: String
    ) {
        if landlockABI > 0 {
            return (
                nil,
                "the defaults of deploy/systemd (an unprivileged user, no capability, no namespace): Landlock confines the helpers"
            )
        }
        if unprivilegedNamespaces {
            return (
                "no-landlock.conf",
                "no Landlock here: add deploy/systemd/no-landlock.conf (user and mount namespaces and the mount calls for the helpers; no capability)"
            )
        }
        return (
            "mount-namespace.conf",
            "no Landlock here, and an unprivileged user cannot make a user namespace: add deploy/systemd/mount-namespace.conf "
                + "(share stays unprivileged, with CAP_SYS_ADMIN and CAP_SYS_CHROOT as ambient capabilities and the calls mount and chroot "
                + "for its helpers' mount namespace, which drop them before any input)"
        )
    }
}
