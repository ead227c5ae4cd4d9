#if canImport(Glibc)
    import Glibc

    extension FileDescriptor {
        /// Moves the entry `relative` (a `/`-separated path beneath this directory,
        /// no `..`) to the same place beneath the directory `target`, making the
        /// folders on the way there (owner-only). Never follows a symbolic link:
        /// both folders holding the entry are opened beneath their directory
        /// (``open(beneath:_:display:)``, so a folder swapped for a link fails with
        /// `ELOOP`) and the entry is renamed between them (`renameat`), moving a
        /// link itself, not what it points at. An entry already at the target is
        /// never replaced (`EEXIST`). `display` names the entry in an error.
        package func move(beneath relative: [UInt8], to target: FileDescriptor, display: String) throws(SystemError) {
            let slash = relative.lastIndex(of: UInt8(ascii: "/"))
            let folder = slash.map { Array(relative[..<$0]) } ?? []
            let name = slash.map { Array(relative[relative.index(after: $0)...]) } ?? relative
            guard !name.isEmpty, name != [UInt8(ascii: ".")], name != [UInt8(ascii: "."), UInt8(ascii: ".")] else {
                throw SystemError("renameat", path: display, code: EINVAL)
            }
            let from = try open(beneath: folder, O_PATH | O_DIRECTORY, display: display)
            let to = try target.makeFolders(beneath: folder, display: display)
            guard to.status(ofEntryOrNil: name) == nil else {
                throw SystemError("renameat", path: display, code: EEXIST)
            }
            let result = withCPath(name) { cName in retryingInterrupts { renameat(from.raw, cName, to.raw, cName) } }
            guard result == 0 else { throw SystemError("renameat", path: display) }
        }

        /// Opens the folder `relative` beneath this directory, making each missing
        /// folder on the way (mode 0700, no link followed).
        package func makeFolders(beneath relative: [UInt8], display: String) throws(SystemError) -> FileDescriptor {
            var current = try open(beneath: [], O_PATH | O_DIRECTORY, display: display)
            for component in relative.split(separator: UInt8(ascii: "/")) where !component.isEmpty {
                let name = Array(component)
                let made = withCPath(name) { cName in mkdirat(current.raw, cName, 0o700) }
                guard made == 0 || errno == EEXIST else { throw SystemError("mkdirat", path: display) }
                current = try current.open(beneath: name, O_PATH | O_DIRECTORY, display: display)
            }
            return current
        }

        /// The status of the entry `name` of this directory (not following a link), nil if there is none.
        private func status(ofEntryOrNil name: [UInt8]) -> FileStatus? {
            try? status(ofEntry: name, display: "")
        }
    }
#endif
