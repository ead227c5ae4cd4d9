#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// This process's environment variables, read one at a time (`getenv`, which
/// copies nothing else into the heap) or replaced as a whole.
package enum ProcessEnvironment {
    /// The value of `name`, nil when it is not set (`getenv`; portable POSIX).
    package static func value(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }
}

#if os(Linux)
    extension ProcessEnvironment {
        /// Sets `name` to `value` (`setenv`, replacing it).
        package static func set(_ name: String, to value: String) {
            setenv(name, value, 1)
        }

        /// Replaces every variable with `variables` (`clearenv`, then `setenv` each).
        /// The original environment block is not wiped by this (see `shim_fork_template`).
        package static func replace(with variables: [String: String]) {
            clearenv()
            for (name, value) in variables { setenv(name, value, 1) }
        }
    }
#endif
