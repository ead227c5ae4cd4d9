import Foundation
import MediaFormats
import ShareManifest
import SystemCalls

/// Location: location privacy (the pipeline's `location` stage, off by
/// default). The decoder reads the copy's metadata structures (never here: the
/// bytes are untrusted) and answers with where the copy records a location and
/// how to blank it in place (``LocationMetadata``); this stage checks every
/// overwrite against the copy and makes it (``MetadataBlanker``), in the copy
/// only, never the source. Pixels, sound, the capture date, the orientation and
/// every other tag stay: only the location's bytes change, and every offset in
/// the file stays valid.
///
/// The item's `sha256` then is the stripped copy's: the SHA-256 of the bytes
/// delivered, as everywhere else, so duplicates are found among what the
/// container holds (a photo shared twice with location privacy is a duplicate
/// of its first stripped copy; it is never linked to a copy that still carries
/// the location).
///
/// Idempotent: a resumed stage scans the copy again and blanks what is left (the
/// overwrites are made in steps, each fsynced, so an interrupted run always
/// leaves what it had not removed findable). A file whose location cannot be
/// removed in place (compressed XMP, a structure the parser cannot read)
/// fails with `locationNotRemovable`.
struct LocationStage: PipelineStage {
    let settings: PipelineDefinition.LocationSettings
    var name: StageName { .location }

    /// Whether the decoder reads this item's metadata.
    func applies(_ item: ItemState) -> Bool { item.copyPath != nil && Self.locationFormat(of: item) != nil }

    /// The format an item's copy is read as for its location (nil: nothing to read).
    static func locationFormat(of item: ItemState) -> MediaFormat? {
        guard let format = item.sniffed?.format else { return nil }
        return locationFormat(name: item.source.fileName ?? "", kind: item.sidecarKind, sniffed: format)
    }

    /// How a file called `name` (a sidecar of `kind` by its content, or none;
    /// of the sniffed `format`, when known) is read for its location: as its
    /// format, for media whose metadata the scanner knows; as an XMP document
    /// or a JSON document when it is a sidecar of that kind or named so, and
    /// is text or unrecognised bytes (read to its end, or not delivered: a
    /// UTF-16 XMP, a JSON cut short); any other text as it is (JSON or XML by
    /// its first character). Nil: nothing to read (a PDF, an archive, …).
    static func locationFormat(name: String, kind: SharedMediaFile.Sidecar.Kind?, sniffed format: MediaFormat?)
        -> MediaFormat?
    {
        if let format, LocationScanner.formats.contains(format.id) { return format }
        if let format, format.kind != .text, format.kind != .data { return nil }
        let ext = name.utf8.lastIndex(of: UInt8(ascii: ".")).map { name[name.index(after: $0)...].lowercased() }
        if kind == .xmp || (kind == nil && ext == "xmp") { return LocationScanner.xmpDocument }
        if kind == .takeout || (kind == nil && ext == "json") { return LocationScanner.jsonDocument }
        if kind == .aae { return MediaFormat.xml }
        guard let format, format.kind == .text else { return nil }
        return format
    }

    /// It reads the copy's structures in the decoder (not its pixels): it takes
    /// its share of the budget (a HEIF is read whole) and counts as decoding.
    /// A text file of its own (a Takeout JSON or an XMP sidecar whose photo is
    /// not in the drop, any JSON, any XML) is read there too (``LocationScanner``'s
    /// text documents); a sidecar carried by its photo is the fan-in's (``SidecarDelivery``).
    func decodes(_ item: InFlightItem) -> Bool { applies(item.state) }

    func process(_ item: inout InFlightItem, in batch: BatchContext) throws(ItemFailure) {
        guard let path = item.copyPath, let format = Self.locationFormat(of: item.state) else { return }
        var moments: MomentFacts?
        let found = try Self.removeLocation(
            from: path, label: item.label, format: format, settings: settings, in: batch, moments: &moments)
        // The place's offset at the capture time, found before the position is removed (issue 54); no zone name is kept (issue 58).
        if let zone = CapturePlace.zone(at: moments?.position),
            let place = CapturePlace(
                offsetIn: zone, time: moments?.captureTime, fileName: item.source.fileName,
                modified: item.sourceVersion, source: .position)
        {
            item.capturePlace = place
        }
        if !found.isEmpty { item.locationRemoved = found.map(\.name) }
        // A Takeout JSON whose photo is not in the drop: what it says is not read.
        if item.sidecarKind == .takeout, !found.isEmpty { item.locationRemoved = [Self.takeoutLocationRemoved] }
        // The copy's content changed: its identity is the stripped bytes'. A copy
        // made from the source in this run was the source's bytes until now; one
        // this run did not copy (a resumed item) may have been stripped by an
        // interrupted attempt whose findings are lost: its hash tells.
        guard !found.isEmpty || !item.carried.copiedFromSource else { return }
        let hash: String
        do { hash = try FileCopier.hash(of: path) } catch {
            throw ItemFailure(.location, .io, "\(item.label): cannot read back its copy: \(error)")
        }
        if found.isEmpty, let recorded = item.sha256, recorded != hash {
            item.locationRemoved = ["location metadata (removed by an earlier attempt that was interrupted)"]
        }
        item.sha256 = hash
    }

    /// Has the decoder find where the copy at `path` (of `format`) records a
    /// location, and blanks it there in place (fsynced when the pipeline's
    /// copies are); returns what was found (nothing: nothing to remove). A
    /// location that cannot be removed in place fails with `locationNotRemovable`.
    static func removeLocation(
        from path: String, label: String, format: MediaFormat, settings: PipelineDefinition.LocationSettings,
        in batch: BatchContext, sync: Bool? = nil
    ) throws(ItemFailure) -> [LocationRecord] {
        var moments: MomentFacts?
        return try removeLocation(
            from: path, label: label, format: format, settings: settings, in: batch, sync: sync, moments: &moments)
    }

    /// The same, also reading (for a v2 manifest's capture time) the position
    /// the copy records and its capture time, checked by the reply check, into `moments`.
    static func removeLocation(
        from path: String, label: String, format: MediaFormat, settings: PipelineDefinition.LocationSettings,
        in batch: BatchContext, sync: Bool? = nil,
        moments: inout MomentFacts?
    ) throws(ItemFailure) -> [LocationRecord] {
        var request = DecodeRequest(
            path: path, label: label, format: format, pixelLimit: (batch.pipeline.probe ?? .init()).pixelLimit,
            timeLimit: settings.timeLimit,
            batch: batch.batchID.uuidString,
            moments: batch.pipeline.manifest.schema == .v2 && MomentReaderFormats.reads(format), task: .locationMetadata
        )
        request.placeNames = settings.remove == .coordinatesAndPlaceNames
        let found: LocationMetadata
        do {
            let decoded = try batch.decoder.decode(request)
            found = decoded.location ?? LocationMetadata()
            moments = decoded.moments
        } catch {
            throw ItemFailure(.location, error)
        }
        guard found.unremovable.isEmpty else {
            throw ItemFailure(
                .location, .locationNotRemovable,
                "\(label): location privacy is on, and its location metadata cannot be removed in place (\(found.unremovable.joined(separator: "; "))); not delivered"
            )
        }
        do {
            try MetadataBlanker.apply(found.found.flatMap(\.edits), to: path, sync: sync ?? batch.pipeline.copy.fsync)
        } catch {
            throw error.failure(label)
        }
        return found.found
    }
}

extension LocationStage {
    /// What a Takeout JSON's `locationRemoved` says (its photo's too).
    static let takeoutLocationRemoved = "Takeout JSON geoData, geoDataExif"
}

/// Makes a decoder's overwrites (``MetadataEdit``) in a file of the container,
/// after checking each against it: inside the file, a `free` box where the
/// box's own size says it ends, a PNG chunk where its length says. Only bytes
/// made here are written (zeros, spaces, `free`, a CRC computed here over the
/// chunk as it now is). Steps are made in order, each fsynced (with `sync`)
/// before the next; repeating them changes nothing.
enum MetadataBlanker {
    /// Why the overwrites could not be made.
    enum Failure: Error {
        /// An overwrite the checks refuse: the decoder's answer is wrong.
        case refused(String)
        case system(SystemError)

        /// What `body` returns; what it throws, as a Failure.
        static func from<T>(_ body: () throws -> T) throws(Failure) -> T {
            do {
                return try body()
            } catch let error as Failure {
                throw error
            } catch let error as SystemError {
                throw .system(error)
            } catch {
                throw .refused("\(error)")
            }
        }

        func failure(_ label: String) -> ItemFailure {
            switch self {
            case .refused(let why):
                ItemFailure(
                    .location, .decoderMisbehaved,
                    "\(label): the decoder's location metadata was refused (\(why)); nothing was changed")
            case .system(let error):
                ItemFailure(.location, writing: error, "\(label): cannot blank its location metadata: \(error)")
            }
        }
    }

    /// Makes `edits` in the file at `path`.
    static func apply(_ edits: [MetadataEdit], to path: String, sync: Bool) throws(Failure) {
        guard !edits.isEmpty else { return }
        let (file, size) = try Failure.from {
            let file = try FileDescriptor.open(path, O_RDWR | O_NOCTTY | O_CLOEXEC | O_NOFOLLOW)
            let status = try file.status(path: path)
            guard status.type == .regular else { throw Failure.refused("the copy is not a regular file") }
            return (file, Int(status.size))
        }
        let unique = Array(Set(edits)).sorted { ($0.step, $0.offset, $0.length) < ($1.step, $1.offset, $1.length) }
        // Every overwrite is checked before the first is made.
        for edit in unique {
            guard edit.offset >= 0, edit.length >= 1, edit.offset <= size - edit.length, (0...3).contains(edit.step)
            else {
                throw .refused("an overwrite of \(edit.length) bytes at \(edit.offset) of a \(size)-byte file")
            }
            switch edit.fill {
            case .freeBox:
                guard edit.length >= 8, try read(file, edit.offset, 4, path).bigEndian == edit.length else {
                    throw .refused("no box of \(edit.length) bytes at \(edit.offset)")
                }
            case .pngCRC:
                guard edit.length >= 12, try read(file, edit.offset, 4, path).bigEndian == edit.length - 12 else {
                    throw .refused("no PNG chunk of \(edit.length) bytes at \(edit.offset)")
                }
            case .zeros, .spaces:
                break
            }
        }
        for step in 0...3 {
            let now = unique.filter { $0.step == step }
            guard !now.isEmpty else { continue }
            for edit in now {
                switch edit.fill {
                case .zeros: try fill(file, 0, count: edit.length, at: edit.offset, path)
                case .spaces: try fill(file, 0x20, count: edit.length, at: edit.offset, path)
                case .freeBox:
                    try write(
                        file, Array("free".utf8) + [UInt8](repeating: 0, count: edit.length - 8), at: edit.offset + 4,
                        path)
                case .pngCRC:
                    let chunk = try read(file, edit.offset + 4, edit.length - 8, path)
                    let crc = CRC32.checksum(chunk)
                    try write(
                        file, [UInt8(crc >> 24), UInt8(crc >> 16 & 0xFF), UInt8(crc >> 8 & 0xFF), UInt8(crc & 0xFF)],
                        at: edit.offset + edit.length - 4, path)
                }
            }
            if sync {
                do { try file.sync(path: path) } catch { throw .system(error) }
            }
        }
    }

    private static func read(_ file: FileDescriptor, _ offset: Int, _ count: Int, _ path: String) throws(Failure)
        -> [UInt8]
    {
        try Failure.from {
            let bytes = try file.read(count: count, at: Int64(offset), path: path)
            guard bytes.count == count else { throw Failure.refused("the copy ends before \(offset + count)") }
            return bytes
        }
    }

    /// `count` bytes of `byte` at `offset`, written in chunks of at most 64 KiB
    /// (however long the range a decoder named, never a buffer of its size).
    private static func fill(_ file: FileDescriptor, _ byte: UInt8, count: Int, at offset: Int, _ path: String)
        throws(Failure)
    {
        let chunk = [UInt8](repeating: byte, count: min(count, 64 << 10))
        var done = 0
        while done < count {
            let now = min(chunk.count, count - done)
            try write(file, now == chunk.count ? chunk : Array(chunk.prefix(now)), at: offset + done, path)
            done += now
        }
    }

    private static func write(_ file: FileDescriptor, _ bytes: [UInt8], at offset: Int, _ path: String) throws(Failure)
    {
        do { try file.write(bytes, at: Int64(offset), path: path) } catch { throw .system(error) }
    }
}

extension [UInt8] {
    /// The first four bytes as a big-endian unsigned integer.
    fileprivate var bigEndian: Int {
        count >= 4 ? Int(self[0]) << 24 | Int(self[1]) << 16 | Int(self[2]) << 8 | Int(self[3]) : -1
    }
}

/// CRC-32 (ISO 3309, as PNG and zlib compute it).
enum CRC32 {
    private static let table: [UInt32] = (0..<256).map { n in
        var c = UInt32(n)
        for _ in 0..<8 { c = c & 1 != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        return c
    }

    static func checksum(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes { crc = table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
        return crc ^ 0xFFFF_FFFF
    }
}

extension LocationStage {
    /// The `location` stage, declared once: its settings and their document
    /// table (key, allowed values; the default is the settings type's own), its
    /// place in the order, what it records, how it is made.
    static let definition = StageDefinition(
        .location, after: .copy, settings: PipelineDefinition.LocationSettings.self,
        document: [
            .integer("workers", \.workers, in: 1...64),
            .number("timeLimit", \.timeLimit, in: 0.001...86_400),
            .choice("remove", \.remove),
        ],
        workers: \.workers, records: [.locationRemoved, .sha256, .capturePlace],
        make: { settings, _ in LocationStage(settings: settings) })
}

extension PipelineDefinition {
    /// Settings of the `location` stage (location privacy): the location
    /// metadata of each copy (EXIF GPS, XMP `exif:GPS*` and IPTC Extension's
    /// `Iptc4xmpExt:GPS*`, Photoshop's copies of both (a JPEG's APP13, a
    /// TIFF's tag 34377, a PSD), QuickTime `©xyz` and
    /// `com.apple.quicktime.location.*`, MP4 `loci`, a JSON's coordinates
    /// (numbers, or texts that read as numbers); with `remove` `coordinatesAndPlaceNames` the names of the
    /// place too) is blanked in place, in
    /// the copy only; the capture date, the orientation, the pixels and
    /// everything else stay. A file whose location cannot be removed in place
    /// fails (reason `locationNotRemovable`).
    public struct LocationSettings: StageSettings {
        /// Worker threads (1...64).
        public var workers = 2
        /// Seconds reading one file's metadata may take.
        public var timeLimit: Double = 30
        /// What goes: the coordinates alone (the default), or the names of the place with them.
        public var remove: Removal = .coordinates

        /// What location privacy removes.
        public enum Removal: String, Sendable, Codable, Hashable, CaseIterable {
            /// Every coordinate (EXIF GPS, XMP `exif:GPS*`, QuickTime's location, a JSON's positions, …).
            case coordinates
            /// Those, and what names the place: IPTC IIM's city, sub-location,
            /// province or state and country (a JPEG's APP13, a TIFF's IPTC and
            /// Photoshop tags, a PSD), XMP's `photoshop:City`, `State`,
            /// `Country`, `Iptc4xmpCore:Location`, `CountryCode`, IPTC
            /// Extension's `LocationCreated` and `LocationShown` whole.
            case coordinatesAndPlaceNames
        }

        /// The defaults: two workers, 30 s.
        public init() {}
    }
}
