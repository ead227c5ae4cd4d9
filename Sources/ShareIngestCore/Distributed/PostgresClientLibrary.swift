import CPostgres
import SystemCalls

/// libpq, loaded by the first command that names a database rather than
/// linked (issue 59: the twenty libraries it needs stay out of every other
/// command; see Sources/CPostgres/include/CPostgres.h). Every entry to libpq
/// (``DatabaseURL``'s check, ``DatabaseSecrets``, a connection) asks
/// ``unavailable`` first.
enum PostgresClientLibrary {
    /// The library loaded: Debian's libpq5. A debug build takes another from
    /// `SHARE_TEST_LIBPQ` (a test names one that does not exist).
    static var name: String {
        #if DEBUG
            if let name = ProcessEnvironment.value("SHARE_TEST_LIBPQ"), !name.isEmpty { return name }
        #endif
        return "libpq.so.5"
    }

    /// Why libpq cannot be used (it is not installed, or lacks a function),
    /// nil when it can. The first call loads it.
    static var unavailable: String? {
        share_libpq_load(name).map {
            "its client library, libpq, cannot be loaded (install the libpq5 package): \(String(cString: $0))"
        }
    }
}
