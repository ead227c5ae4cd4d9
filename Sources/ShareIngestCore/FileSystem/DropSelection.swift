import ShareManifest

/// Which files of a batch's inputs are taken: by glob on their path inside
/// the drop (``include``, ``exclude``) and whether hidden entries are walked
/// (``hidden``). Decided when the batch is planned, before anything is copied:
/// a file left out is an item skipped with reason `filtered` (in the counts,
/// the events and the report), never dropped silently.
///
/// A file's path inside the drop is its path beneath the folder given (or,
/// for a file named on its own, its name). With includes, a file must match
/// one of them; a file matching an exclude is left out even if an include
/// matches it (exclude wins).
public struct DropSelection: Sendable, Hashable {
    /// With any: only files matching one of them are taken.
    public var include: [PathPattern]
    /// Files matching any of them are left out (exclude wins over include).
    public var exclude: [PathPattern]
    /// True: hidden files and folders (a leading dot) are walked and taken;
    /// false (the default): skipped silently, as ever.
    public var hidden: Bool

    /// A selection of these patterns; every file, hidden ones excepted, by default.
    public init(include: [PathPattern] = [], exclude: [PathPattern] = [], hidden: Bool = false) {
        (self.include, self.exclude, self.hidden) = (include, exclude, hidden)
    }

    /// Every file but hidden ones: what a batch takes unless asked otherwise.
    public static let all = DropSelection()

    /// Why the file at `relative` (its path inside the drop), shown as
    /// `label`, is left out; nil when it is taken.
    func refusal(of relative: [UInt8], label: String) -> ItemFailure? {
        guard !include.isEmpty || !exclude.isEmpty else { return nil }
        let path = String(decoding: relative, as: UTF8.self)
        if let pattern = exclude.first(where: { $0.matches(path) }) {
            return ItemFailure(
                .copy, .filtered, "\(label): left out by --exclude \(JSONText.string(pattern.text)); not copied")
        }
        if !include.isEmpty, !include.contains(where: { $0.matches(path) }) {
            let patterns = include.map { JSONText.string($0.text) }.joined(separator: ", ")
            return ItemFailure(.copy, .filtered, "\(label): matches no --include (\(patterns)); not copied")
        }
        return nil
    }
}

/// A glob matched against a path inside a drop (`/`-separated, no leading
/// `/`), case-sensitively: `*` is any run of characters within one path
/// component, `?` one character (not `/`), `[abc]`, `[a-z]` and `[!abc]` one
/// of (or none of) a set, `**` as a whole component any number of components
/// (none included), `\` makes the next character plain. A pattern without a
/// `/` matches the file's name at any depth (`*.jpg` takes `a.jpg` and
/// `2024/b.jpg`); one with a `/` matches the whole path (`2024/*.jpg` only
/// the files directly in `2024`, `2024/**` everything beneath it). A leading
/// `*` or `?` matches a leading dot too (hidden files are walked only with
/// ``DropSelection/hidden``).
public struct PathPattern: Sendable, Hashable, CustomStringConvertible {
    /// The pattern as given.
    public let text: String
    private let components: [[Element]]
    private let anyDepth: Bool

    private enum Element: Hashable {
        case character(Character)
        case any
        case anyRun
        case set(negated: Bool, members: [ClosedRange<Character>])
        case anyComponents
    }

    /// The pattern `text`, checked: refused when empty, with a control
    /// character, a leading or doubled `/`, a `.` or `..` component (no path
    /// inside a drop has one), an unclosed `[`, or a trailing `\`.
    public init(_ text: String) throws(PathPatternError) {
        self.text = text
        guard !text.isEmpty else {
            throw PathPatternError(pattern: text, problem: "is empty; give a glob such as *.jpg")
        }
        if text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            throw PathPatternError(pattern: text, problem: "holds a control character")
        }
        if text.hasPrefix("/") {
            throw PathPatternError(
                pattern: text, problem: "starts with /; it is matched against paths inside the drop (2024/*.jpg)")
        }
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        if parts.contains(where: \.isEmpty) {
            if parts.last?.isEmpty == true, parts.dropLast().allSatisfy({ !$0.isEmpty }) {
                throw PathPatternError(
                    pattern: text, problem: "ends with /; files are matched (2024/** for everything in 2024)")
            }
            throw PathPatternError(pattern: text, problem: "has an empty component (//)")
        }
        if parts.contains(where: { $0 == "." || $0 == ".." }) {
            throw PathPatternError(pattern: text, problem: "has a . or .. component; paths inside a drop have none")
        }
        var components: [[Element]] = []
        for part in parts {
            if part == "**" {
                // a/**/**/b is a/**/b.
                if components.last != [.anyComponents] { components.append([.anyComponents]) }
                continue
            }
            components.append(try Self.parse(Array(part), pattern: text))
        }
        self.components = components
        anyDepth = parts.count == 1 && parts[0] != "**"
    }

    private static func parse(_ characters: [Character], pattern: String) throws(PathPatternError) -> [Element] {
        var elements: [Element] = []
        var index = 0
        while index < characters.count {
            let character = characters[index]
            index += 1
            switch character {
            case "*":
                if elements.last != .anyRun { elements.append(.anyRun) }
            case "?":
                elements.append(.any)
            case "\\":
                guard index < characters.count else {
                    throw PathPatternError(pattern: pattern, problem: "ends with a lone \\")
                }
                elements.append(.character(characters[index]))
                index += 1
            case "[":
                var position = index
                var negated = false
                if position < characters.count, characters[position] == "!" || characters[position] == "^" {
                    negated = true
                    position += 1
                }
                var members: [ClosedRange<Character>] = []
                var first = true
                var closed = false
                while position < characters.count {
                    let member = characters[position]
                    if member == "]" && !first {
                        closed = true
                        position += 1
                        break
                    }
                    first = false
                    if position + 2 < characters.count, characters[position + 1] == "-", characters[position + 2] != "]"
                    {
                        let upper = characters[position + 2]
                        guard member <= upper else {
                            throw PathPatternError(
                                pattern: pattern,
                                problem: "has the range [\(member)-\(upper)], whose ends are in the wrong order")
                        }
                        members.append(member...upper)
                        position += 3
                    } else {
                        members.append(member...member)
                        position += 1
                    }
                }
                guard closed else {
                    throw PathPatternError(
                        pattern: pattern, problem: "has a [ that is never closed (a literal [ is \\[)")
                }
                elements.append(.set(negated: negated, members: members))
                index = position
            default:
                elements.append(.character(character))
            }
        }
        return elements
    }

    /// True when `path` (a path inside the drop, `/`-separated) matches.
    public func matches(_ path: String) -> Bool {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false).map(Array.init)
        if anyDepth, let name = parts.last { return Self.match(components[0], name) }
        // Components against path components, `**` taking none or more; each
        // (component, path component) pair that failed is remembered, so that
        // many `**` cost at most components × path components × depth.
        var failed = Set<Int>()
        func match(_ component: Int, _ part: Int) -> Bool {
            if component == components.count { return part == parts.count }
            let key = component * (parts.count + 1) + part
            if failed.contains(key) { return false }
            var matched = false
            if components[component] == [.anyComponents] {
                for next in part...parts.count where match(component + 1, next) {
                    matched = true
                    break
                }
            } else {
                matched =
                    part < parts.count && Self.match(components[component], parts[part])
                    && match(component + 1, part + 1)
            }
            if !matched { failed.insert(key) }
            return matched
        }
        return match(0, 0)
    }

    /// One component against a name (iterative, with one point to go back to for `*`).
    private static func match(_ elements: [Element], _ name: [Character]) -> Bool {
        var (e, n) = (0, 0)
        var star: (element: Int, name: Int)?
        while n < name.count {
            if e < elements.count {
                switch elements[e] {
                case .anyRun:
                    star = (e, n)
                    e += 1
                    continue
                case .any:
                    e += 1
                    n += 1
                    continue
                case .character(let character) where character == name[n]:
                    e += 1
                    n += 1
                    continue
                case .set(let negated, let members) where members.contains(where: { $0.contains(name[n]) }) != negated:
                    e += 1
                    n += 1
                    continue
                default: break
                }
            }
            guard let back = star else { return false }
            star = (back.element, back.name + 1)
            (e, n) = (back.element + 1, back.name + 1)
        }
        while e < elements.count, elements[e] == .anyRun { e += 1 }
        return e == elements.count
    }

    /// The pattern as given.
    public var description: String { text }
}

/// Why a glob was refused: the pattern and what is wrong with it.
public struct PathPatternError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The pattern as given.
    public let pattern: String
    /// What is wrong with it.
    public let problem: String

    /// `the pattern "<pattern>" <problem>`.
    public var description: String { "the pattern \(JSONText.string(pattern)) \(problem)" }
}
