#if os(Linux)
    import Glibc

    /// A set of signals, and what a process does with them: block them in every
    /// thread, wait for one on a thread of its own, or give one its default action.
    package struct SignalSet: Sendable {
        private let numbers: [Int32]

        /// The set of `numbers` (`SIGINT`, `SIGTERM`, ...).
        package init(_ numbers: [Int32]) { self.numbers = numbers }

        private var set: sigset_t {
            var set = sigset_t()
            sigemptyset(&set)
            for number in numbers { sigaddset(&set, number) }
            return set
        }

        /// Blocks them in the calling thread and in every thread it starts later
        /// (`pthread_sigmask(SIG_BLOCK)`); call while the process has one thread.
        package func block() {
            var set = set
            pthread_sigmask(SIG_BLOCK, &set, nil)
        }

        /// Waits for one of them (which must be blocked) and returns its number (`sigwait`).
        package func wait() -> Int32 {
            var set = set
            while true {
                var number: Int32 = 0
                if sigwait(&set, &number) == 0 { return number }
            }
        }

        /// Gives `number` its default action and raises it in this process, unblocked
        /// (for SIGINT and SIGTERM: the process ends as the signal says).
        package func raiseWithDefaultAction(_ number: Int32) {
            signal(number, SIG_DFL)
            var set = set
            pthread_sigmask(SIG_UNBLOCK, &set, nil)
            raise(number)
        }

        /// Ignores `number` from now on (`SIG_IGN`; e.g. SIGXFSZ, so that a write over
        /// the file-size limit fails with EFBIG instead of killing the process).
        package static func ignore(_ number: Int32) { signal(number, SIG_IGN) }
    }

    extension SignalSet {
        /// `strsignal`'s words for `signal`, lower-cased: "segmentation fault", "aborted", …
        package static func meaning(of signal: Int32) -> String {
            guard let text = strsignal(signal) else { return "signal \(signal)" }
            return String(cString: text).lowercased()
        }
    }

    /// Writing to descriptors this process does not own (standard output and error).
    package enum StandardStream {
        /// True when `fd` is a terminal (`isatty`).
        package static func isTerminal(_ fd: Int32) -> Bool { isatty(fd) == 1 }

        /// Writes all of `bytes` to `fd` (retried on EINTR and after short writes);
        /// false when the stream is gone.
        @discardableResult
        package static func write(_ bytes: [UInt8], to fd: Int32) -> Bool {
            var rest = bytes[...]
            while !rest.isEmpty {
                let n = rest.withUnsafeBytes { raw in retryingInterrupts { Glibc.write(fd, raw.baseAddress, raw.count) }
                }
                if n <= 0 { return false }
                rest = rest.dropFirst(n)
            }
            return true
        }
    }

    extension Processes {
        /// Ends this process with `status` (`exit`: atexit handlers run, stdio is flushed).
        package static func exit(_ status: Int32) -> Never { Glibc.exit(status) }

        /// Ends this process with `status` at once (`_exit`: no atexit handler runs,
        /// so none can race the threads still running; write what must be seen first).
        package static func exitImmediately(_ status: Int32) -> Never { Glibc._exit(status) }
    }
#endif
