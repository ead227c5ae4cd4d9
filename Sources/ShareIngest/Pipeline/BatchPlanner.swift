import Foundation
import Glibc

/// Turns what was shared into the batch's items, in order: folders are walked
/// (DropWalker), entries that cannot be items are kept as skipped items so the
/// report lists them. Every item gets its UUID here, before anything is copied.
enum BatchPlanner {
    /// - Parameters:
    ///   - shownRoot: reports name the files under this path instead of the
    ///     actual root (a claimed drop is read from `.processing/<batch>/` but is known
    ///     to people by its place in the inbox).
    ///   - identifiers: one id is drawn per item, in input order.
    static func items(for inputs: [ShareInput], shownRoot: (actual: String, shown: String)? = nil, identifiers: IdentifierSource = .random) -> [ItemWork] {
        var items: [ItemWork] = []
        func add(_ source: ItemSource, failure: ItemFailure? = nil) {
            let item = ItemWork(index: items.count, source: source, id: identifiers.next())
            item.failure = failure
            items.append(item)
            TestThrottle.pause()
        }
        for input in inputs {
            switch input {
            case .text(let text): add(.text(text))
            case .url(let url): add(.url(url))
            case .data(let data, let name): add(.data(data, name: name))
            case .path(let path):
                let source = SourcePath(path)
                var st = stat()
                if stat(path, &st) == 0, st.st_mode & S_IFMT == S_IFDIR {
                    for entry in DropWalker(root: source) {
                        switch entry {
                        case .file(let file, let shownAs, let name): add(.file(SourceFile(file, shownAs: shown(shownAs), name: name)))
                        case .skipped(let file, let failure):
                            let label = shown(file)
                            let message = failure.message.replacingOccurrences(of: file.display, with: label.display)
                            add(.file(SourceFile(file, shownAs: label, name: SourcePath.displayName(file.lastComponent))),
                                failure: ItemFailure(failure.stage, failure.reason, message))
                        }
                    }
                } else {
                    // A file named by the user: a symbolic link is followed.
                    add(.file(SourceFile(source.resolved() ?? source, shownAs: source, name: SourcePath.displayName(source.lastComponent))))
                }
            }
        }
        return items

        func shown(_ path: SourcePath) -> SourcePath {
            guard let shownRoot, path.bytes.starts(with: Array(shownRoot.actual.utf8)) else { return path }
            return SourcePath(bytes: Array(shownRoot.shown.utf8) + path.bytes.dropFirst(shownRoot.actual.utf8.count))
        }
    }
}
