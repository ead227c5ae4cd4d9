#if os(Linux)
    import Glibc

    /// A pthread read-write lock (`pthread_rwlock_*`): many readers, or one writer.
    package final class ReadWriteLock: @unchecked Sendable {
        private let lock: UnsafeMutablePointer<pthread_rwlock_t>

        package init() {
            lock = .allocate(capacity: 1)
            pthread_rwlock_init(lock, nil)
        }

        deinit {
            pthread_rwlock_destroy(lock)
            lock.deallocate()
        }

        package func lockShared() { pthread_rwlock_rdlock(lock) }
        package func lockExclusive() { pthread_rwlock_wrlock(lock) }
        package func unlock() { pthread_rwlock_unlock(lock) }
    }

    /// An integer each thread has its own copy of (a `pthread_key_t`), 0 until the
    /// thread sets it: how a lock knows what the calling thread already holds.
    package final class ThreadLocalInteger: @unchecked Sendable {
        private var key = pthread_key_t()

        package init() {
            precondition(pthread_key_create(&key, nil) == 0, "pthread_key_create failed")
        }

        /// The calling thread's value.
        package var value: Int {
            get { Int(bitPattern: pthread_getspecific(key)) }
            set { pthread_setspecific(key, UnsafeRawPointer(bitPattern: newValue)) }
        }
    }

    /// Something to do when a thread that asked for it exits (a `pthread_key_t`
    /// whose destructor runs it): how a library's per-thread state is released on
    /// threads the pipeline did not start for it.
    package final class ThreadExitAction: @unchecked Sendable {
        private var key = pthread_key_t()
        private let created: Bool

        /// `action` runs on each registered thread as it exits.
        package init(_ action: @escaping @convention(c) (UnsafeMutableRawPointer?) -> Void) {
            created = pthread_key_create(&key, action) == 0
        }

        /// Registers the calling thread (once; later calls change nothing).
        package func registerCurrentThread() {
            guard created, pthread_getspecific(key) == nil else { return }
            pthread_setspecific(key, UnsafeRawPointer(bitPattern: 1))
        }
    }
#endif
