import SystemCalls

/// The environment a decoder helper gets: only the variables listed here, from
/// the parent's environment, plus the ones the pool sets itself
/// (`SWIFT_BACKTRACE=enable=no`) and a library user's explicit
/// ``ProcessIsolatedDecoder/Configuration/environment``. Nothing else of the
/// parent's reaches a helper: no tokens or passwords (`PGPASSWORD`, a
/// `SECRET_TOKEN`), no `HOME`, `PATH` or `TMPDIR` (a helper needs none: it
/// writes nothing, starts nothing and reads only what Landlock allows), no
/// `LANG`/`LC_*` (helpers run in the C locale, so the libraries' messages are
/// the English ones MediaKit reads), no `LD_PRELOAD`, no ImageMagick,
/// fontconfig or GLib settings (the system's own configuration is the only one
/// a helper can read anyway).
package enum HelperEnvironment {
    /// Each variable a helper may inherit, with why it is needed.
    /// (The recording switch and the test hooks only in debug builds.)
    package static let allowed: [(name: String, reason: String)] = {
        var allowed = [
            ("VIPS_NOVECTOR", "libvips: run its vector kernels as plain C (for valgrind, see scripts/memcheck.sh)"),
            ("JSIMD_FORCENONE", "libjpeg-turbo: no SIMD code (for valgrind, see scripts/memcheck.sh)"),
            ("LD_LIBRARY_PATH", "a helper started on its own (exec) must find the same shared libraries as its parent"),
        ]
        #if DEBUG
            allowed += [
                (Sandbox.recordingVariable, "the seccomp policy's recording mode (scripts/record-helper-syscalls.sh)"),
                (TestFault.variable, "test-only faults (TestFault)"),
                (TestFault.attackVariable, "test-only: the targets of the attacker test (TestFault.attack)"),
                (
                    TestFault.skipVariable,
                    "test-only: a sandbox step to leave out, to show the parent refuses the helper"
                ),
                (Sandbox.noLandlockVariable, "test-only: the sandbox shim sees a kernel without Landlock"),
                (Sandbox.noNamespacesVariable, "test-only: no namespace can be made for a helper"),
            ]
        #endif
        return allowed
    }()

    /// The allowed variables' names.
    package static var names: [String] { allowed.map(\.name) }

    /// What a helper of this process gets: the allowed variables this process
    /// has (each read alone with getenv: the whole environment is never copied),
    /// then `extra` on top.
    package static func forHelpers(adding extra: [String: String]) -> [String: String] {
        var environment: [String: String] = [:]
        for name in names {
            if let value = ProcessEnvironment.value(name) { environment[name] = value }
        }
        // A crash in a helper is an item's outcome, not something to symbolicate.
        environment["SWIFT_BACKTRACE"] = "enable=no"
        environment.merge(extra) { $1 }
        return environment
    }
}
