import Foundation

/// What other programs say about a file, as a user would ask them: exiftool's
/// tags, ffprobe's and vipsheader's sizes, and digests of the decoded pixels
/// (libvips for images, libavcodec for videos). The pipeline itself never
/// runs these; tests use them to look at what it made.
public enum MediaTools {
    /// One tag as `exiftool -a -G1 -s` lists it.
    public struct Tag: Equatable, CustomStringConvertible {
        public let group: String
        public let name: String
        public let value: String
        public var description: String { "[\(group)] \(name): \(value)" }
    }

    /// Every tag exiftool reads in `path` (`-a -G1 -s`, embedded documents with
    /// `-ee`), without its own [System] and [File] facts.
    public static func tags(_ path: String, embedded: Bool = false) throws -> [Tag] {
        let output = try run("/usr/bin/exiftool", ["-a", "-G1", "-s"] + (embedded ? ["-ee"] : []) + [path]).output
        return output.split(separator: "\n").compactMap { line in
            guard line.hasPrefix("["), let close = line.firstIndex(of: "]"), let colon = line.firstRange(of: ": ")
            else { return nil }
            let group = String(line[line.index(after: line.startIndex)..<close])
            let name = line[line.index(after: close)..<colon.lowerBound].trimmingCharacters(in: .whitespaces)
            guard !["System", "File", "ExifTool"].contains(group) else { return nil }
            return Tag(group: group, name: name, value: String(line[colon.upperBound...]))
        }
    }

    /// The tags that say where: any whose name holds "GPS" or "Location"
    /// (EXIF and XMP GPS tags, QuickTime GPSCoordinates, 3GPP LocationInformation).
    public static func locationTags(_ path: String) throws -> [Tag] {
        try tags(path, embedded: true).filter { $0.name.contains("GPS") || $0.name.contains("Location") }
    }

    /// Everything exiftool reads in a file, read once (`-j -a -G1 -ee`).
    public struct Metadata {
        /// `Group:Name` → value as exiftool prints it, and with `-n`.
        let printed: [String: Any]
        let numeric: [String: Any]

        /// The tags that say where (see ``MediaTools/locationTags(_:)``).
        public var locationTags: [String] {
            printed.keys.filter { key in
                let name = key.split(separator: ":").last.map(String.init) ?? key
                return (name.contains("GPS") || name.contains("Location")) && !key.hasPrefix("ExifTool:")
                    && !key.hasPrefix("File:")
            }.sorted()
        }

        /// Every other tag, `Group:Name` → value as printed: what says nothing of
        /// where (exiftool's own, the file system's and its composite tags left out).
        public var otherTags: [String: String] {
            var tags: [String: String] = [:]
            for (key, value) in printed where !locationTags.contains(key) {
                guard
                    !["ExifTool:", "System:", "File:", "Composite:", "SourceFile"].contains(where: { key.hasPrefix($0) }
                    )
                else { continue }
                tags[key] = "\(value)"
            }
            return tags
        }

        /// The value of tag `name` in whichever group has it (the first, by group name), as text.
        public func value(_ name: String, numeric: Bool = false) -> String? {
            let table = numeric ? self.numeric : printed
            guard
                let key = table.keys.filter({ $0.hasSuffix(":" + name) && !$0.hasPrefix("Composite:") }).sorted().first
            else { return nil }
            return table[key].map { "\($0)" }
        }
    }

    /// Everything exiftool reads in `path`, embedded documents included.
    public static func metadata(_ path: String) throws -> Metadata {
        func read(_ extra: [String]) throws -> [String: Any] {
            let output = try run("/usr/bin/exiftool", ["-j", "-a", "-G1", "-ee"] + extra + [path]).output
            let objects = try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [[String: Any]]
            return objects?.first ?? [:]
        }
        return Metadata(printed: try read([]), numeric: try read(["-n"]))
    }

    /// Bytes of a file that say where (see ``locationBytes(_:)``).
    public struct LocationBytes: Sendable, CustomStringConvertible {
        /// What they are: a tag's name, or the text itself.
        public let what: String
        /// Where exiftool found them in the file (nil: text that may be anywhere).
        public let offset: Int?
        public let bytes: [UInt8]
        public var description: String { "\(what) (\(bytes.count) bytes\(offset.map { " at \($0)" } ?? ""))" }
    }

    /// The bytes in `path` that say where, as exiftool finds them: the raw
    /// value of each GPS or location tag and its offset in the file (`-v3`'s
    /// dumps: EXIF GPS wherever the EXIF is, QuickTime keys, `loci`; HEIF's
    /// `ItemLocation` is no place), and, anywhere in the file, XMP GPS
    /// properties (`exif:GPS…`) and ISO 6709 text (`+48.8584+002.2945`).
    public static func locationBytes(_ path: String) throws -> [LocationBytes] {
        var found: [LocationBytes] = []
        let verbose = try run("/usr/bin/exiftool", ["-v3", path]).output
        var tag: String?
        var offset: Int?
        var value: [UInt8] = []
        func finish() {
            if let tag, let offset, !value.isEmpty {
                found.append(LocationBytes(what: tag, offset: offset, bytes: value))
            }
            (tag, offset, value) = (nil, nil, [])
        }
        for line in verbose.split(separator: "\n") {
            if let match = line.firstMatch(of: #/^[\s|]+(?:\d+\)\s+)?(\w+) = /#) {
                finish()
                if match.1.contains("GPS") || match.1.hasPrefix("Location") { tag = String(match.1) }
            } else if tag != nil, let match = line.firstMatch(of: #/^[\s|]+([0-9a-f]{4,8}): ((?:[0-9a-f]{2} ?)+)/#) {
                if offset == nil { offset = Int(match.1, radix: 16) }
                value += match.2.split(separator: " ").compactMap { UInt8($0, radix: 16) }
            } else if tag != nil, !line.contains("- Tag ") {
                finish()
            }
        }
        finish()
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        let text = String(decoding: bytes.map { $0 < 0x80 ? $0 : 0x3F }, as: UTF8.self)
        for match in Set(text.matches(of: #/exif:GPS\w+|[+-]\d{2}\.\d{3,}[+-]\d{3}\.\d{3,}/#).map { String($0.0) }) {
            found.append(LocationBytes(what: match, offset: nil, bytes: Array(match.utf8)))
        }
        return found
    }

    /// One tag's value as exiftool prints it (`-s3`), nil when absent.
    public static func tag(_ name: String, of path: String, numeric: Bool = false) throws -> String? {
        let value = try run("/usr/bin/exiftool", ["-s3"] + (numeric ? ["-n"] : []) + ["-" + name, path]).output
            .trimmingCharacters(in: .whitespacesAndNewlines)
        return value.isEmpty ? nil : value
    }

    /// The first video stream's width and height as ffprobe reads them (for a
    /// JPEG, the picture's).
    public static func ffprobeSize(_ path: String) throws -> (width: Int, height: Int)? {
        let output = try run(
            "/usr/bin/ffprobe",
            ["-v", "error", "-select_streams", "v:0", "-show_entries", "stream=width,height", "-of", "csv=p=0", path])
        let numbers = output.output.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: ",").compactMap {
            Int($0)
        }
        guard output.status == 0, numbers.count == 2 else { return nil }
        return (numbers[0], numbers[1])
    }

    /// A digest of the decoded pixels (or, for video and audio, of every
    /// decoded frame): the same for two files whose pictures and sound are
    /// the same whatever their metadata.
    public static func decodedDigest(_ path: String, video: Bool) throws -> String {
        if video {
            let result = try run(
                "/usr/bin/ffmpeg", ["-v", "error", "-i", path, "-map", "0:v", "-map", "0:a?", "-f", "framemd5", "-"])
            guard result.status == 0 else { throw ToolError(command: "ffmpeg framemd5 \(path)") }
            return result.output.split(separator: "\n").filter { !$0.hasPrefix("#") }.joined(separator: "\n")
        }
        let directory = TemporaryDirectory("pixels")
        let raw = directory.file("pixels.raw")
        let result = try run("/usr/bin/vips", ["rawsave", path, raw])
        guard result.status == 0 else { throw ToolError(command: "vips rawsave \(path)") }
        return try SHA256Digest.hex(of: raw)
    }

    /// A tool that failed.
    public struct ToolError: Error, CustomStringConvertible {
        public let command: String
        public var description: String { "failed: \(command)" }
    }

    /// Runs `executable` with `arguments`: its exit status and standard output.
    @discardableResult
    public static func run(_ executable: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }
}

/// SHA-256 of a file, by `sha256sum` (tests compare sources and copies).
public enum SHA256Digest {
    public static func hex(of path: String) throws -> String {
        let result = try MediaTools.run("/usr/bin/sha256sum", [path])
        guard result.status == 0, let digest = result.output.split(separator: " ").first else {
            throw MediaTools.ToolError(command: "sha256sum \(path)")
        }
        return String(digest)
    }
}
