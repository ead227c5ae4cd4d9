#if os(Linux)
    import CSystem
#endif

/// Memory the process has freed but its allocator still holds.
package enum FreedMemory {
    /// Gives the pages of freed memory back to the kernel (`malloc_trim(0)`: every
    /// arena). glibc keeps what a thread freed in that thread's arena for reuse, so
    /// a long-running service whose threads each once held a large batch keeps the
    /// largest batch's memory in every arena; a service calls this when it goes
    /// idle, and its resident size falls back to what it holds. A no-op elsewhere.
    /// True when some pages were given back.
    @discardableResult
    package static func release() -> Bool {
        #if os(Linux)
            return shim_release_free_memory() == 1
        #else
            return false
        #endif
    }
}
