#if os(Linux)
    import Glibc

    /// Wakes on changes to a folder's entries (inotify), or after a timeout.
    package final class DirectoryWatcher {
        private let fd: Int32

        package init(_ path: String) {
            fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
            if fd >= 0 {
                let mask = UInt32(
                    IN_CREATE | IN_MOVED_TO | IN_CLOSE_WRITE | IN_DELETE | IN_MOVED_FROM | IN_ATTRIB | IN_MODIFY)
                inotify_add_watch(fd, path, mask)
            }
        }

        deinit { if fd >= 0 { close(fd) } }

        /// Waits until something changes in the folder or `seconds` pass; drains the events.
        package func wait(seconds: Double) {
            guard fd >= 0 else {
                MonotonicClock.sleep(seconds)
                return
            }
            var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            _ = poll(&descriptor, 1, Int32(seconds * 1000))
            var buffer = [UInt8](repeating: 0, count: 4096)
            while retryingInterrupts({ read(fd, &buffer, buffer.count) }) > 0 {}
        }
    }
#endif
