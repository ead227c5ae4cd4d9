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

    /// At most `count` malloc arenas for the whole process (`mallopt(M_ARENA_MAX)`;
    /// glibc's default is eight a core). A thread that allocates while another
    /// holds its arena is given an arena of its own, and what it frees stays
    /// there: `share`'s stage threads (a dozen on two cores, most of them
    /// waiting on a disk or a helper) each kept some that way. Called before any
    /// thread starts. True when set; a no-op (false) elsewhere.
    @discardableResult
    package static func limitArenas(_ count: Int) -> Bool {
        #if os(Linux)
            return shim_limit_arenas(Int32(count)) == 1
        #else
            return false
        #endif
    }

    /// Keeps freed memory in the allocator for the next allocations instead of
    /// giving it back to the kernel at once (`mallopt`: blocks below
    /// `mappedAbove` bytes come from the arenas, not from a mapping of their own
    /// that is unmapped when freed; an arena gives back the pages at its top only
    /// past `trimmedAbove` bytes). For a process that does the same work again
    /// and again (a decoder helper, one picture after another): each page given
    /// back is a page fault, zeroed by the kernel, the next time it is used.
    /// Allocations of `mappedAbove` bytes or more are still mapped and given back
    /// when freed. True when both were set; a no-op (false) elsewhere.
    @discardableResult
    package static func keepForReuse(mappedAbove: Int, trimmedAbove: Int) -> Bool {
        #if os(Linux)
            return shim_keep_freed_memory(mappedAbove, trimmedAbove) == 1
        #else
            return false
        #endif
    }
}
