#if os(Linux)
    import CSystem
    import Glibc

    extension Processes {
        /// The parent's process id (`getppid`).
        package static var parent: pid_t { getppid() }

        /// Starts `path` with `arguments` (the first is the program's name) and
        /// exactly `environment`, with `socket` as its descriptor 3, /dev/null as
        /// 0 and 1 (and 2 unless `keepStandardError`), nothing else of this
        /// process's open files, default signal handling and a process group of its
        /// own (`posix_spawn`: see `shim_spawn_helper`). Returns its pid; throws
        /// with the error `posix_spawn` reported.
        package static func spawnHelper(
            _ path: String, arguments: [String], environment: [String: String], socket: UnixSocket,
            keepStandardError: Bool
        ) throws(SystemError) -> pid_t {
            let argv = arguments.map { strdup($0) } + [nil]
            let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
            defer {
                for copy in argv + envp { free(copy) }
            }
            var pid: pid_t = 0
            let status = shim_spawn_helper(path, argv, envp, socket.raw, keepStandardError ? 1 : 0, &pid)
            guard status == 0 else { throw SystemError("posix_spawn", path: path, code: status) }
            return pid
        }

        /// In a single-threaded helper template: forks a helper whose descriptor 3
        /// is `socket` (see `shim_fork_helper`; the fork, the dup2 and the
        /// parent-death signal must happen in C, between fork and the child's first
        /// Swift code). Returns 0 in the child, the child's pid here (`socket` is
        /// then closed here), or -1 (errno).
        package static func forkHelper(socket: FileDescriptor) -> pid_t {
            shim_fork_helper(socket.release())
        }

        /// Forks this single-threaded process into a helper template that keeps
        /// only the environment variables named `keeping` and wipes the original
        /// argument and environment areas (see `shim_fork_template`). In the child,
        /// 0 (its descriptor 3 is `childEnd`, and `parentEnd` is closed there);
        /// here, the child's pid, or -1 (errno). `childEnd` is consumed either way.
        package static func forkTemplate(childEnd: UnixSocket, parentEnd: UnixSocket, keeping names: [String]) -> pid_t
        {
            let copies = names.map { UnsafePointer(strdup($0)) }
            defer { for copy in copies { free(UnsafeMutablePointer(mutating: copy)) } }
            let child = childEnd.release()
            return copies.withUnsafeBufferPointer { buffer in
                shim_fork_template(child, parentEnd.raw, buffer.baseAddress, Int32(names.count))
            }
        }
    }
#endif
