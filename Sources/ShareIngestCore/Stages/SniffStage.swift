import Foundation
import Glibc
import MediaFormats
import ShareManifest
import SystemCalls

/// Sniff: reads the first bytes of a source (never the whole file) and decides
/// format, extension and MIME type from the content, so the copy is named once.
/// What it reads: the first ``ContentSniffer/prefixLength`` (4096) bytes; as
/// many again where an ID3v2 tag longer than those ends (cover art); and for an
/// ISO base media video whose size is not in them, the headers of up to 16
/// top-level boxes and the first 4096 bytes of `moov` (``movieHeader(_:path:)``).
/// (The export sidecars a photo or video carries are read when the fan-in
/// copies them: ``SidecarDelivery``.)
struct SniffStage: PipelineStage {
    let settings: PipelineDefinition.SniffSettings
    var name: StageName { .sniff }

    func process(_ item: inout InFlightItem, in batch: BatchContext) throws(ItemFailure) {
        switch item.source {
        case .text(let text):
            item.mimeType = "text/plain"
            if text.isEmpty { throw ItemFailure(.sniff, .empty, "text item is empty") }
        case .url(let text):
            item.mimeType = "text/uri-list"
            guard ManifestCoder.looksLikeURL(text) else {
                throw ItemFailure(
                    .sniff, .notAURL,
                    "\(JSONText.string(String(text.prefix(200)))) is not a URL (expected scheme://host…)")
            }
        case .file(let file):
            // Refused by the walk (a FIFO, a link out of the drop, …): reported, never opened.
            if let refused = file.refused { throw refused }
            let prefix: [UInt8]
            var continuation: [UInt8]?
            let label = item.label
            let source: FileDescriptor
            do throws(CopyError) {
                // Only the file the walk saw (its version, recorded at the plan).
                let (fd, version) = try FileCopier.openSource(file, in: batch.roots, expected: item.sourceVersion)
                source = fd
                item.sourceVersion = version
                item.size = version.size
                do {
                    prefix = try fd.read(count: ContentSniffer.prefixLength, at: 0, path: item.label)
                    // An ID3v2 tag longer than the prefix (cover art): what follows it decides.
                    if let offset = ContentSniffer.continuationOffset(prefix) {
                        continuation = try fd.read(
                            count: ContentSniffer.prefixLength, at: Int64(offset), path: item.label)
                    }
                } catch { throw CopyError.reading(error) }
            } catch {
                throw Self.failure(error, path: label, stage: .sniff)
            }
            try Self.identify(
                &item, prefix: prefix, continuation: continuation, name: file.name, label: label,
                rejectContradictions: settings.rejectContradictions)
            if let kind = item.sidecarKind, batch.pipeline.manifest.schema == .v2 {
                // A sidecar the plan found no photo or video for.
                let media = ExportSidecars.reference(sidecarLabel: label)?.shownName ?? "media"
                item.warnings.append(
                    CarriedSidecar.mediaNotDelivered(kind, media: media, reason: "is not in this drop"))
            }
            if let format = item.sniffed?.format {
                var announced = HeaderDimensions.size(of: prefix, format: format)
                if announced == nil, format.kind == .video, Array(prefix.dropFirst(4).prefix(4)) == Array("ftyp".utf8) {
                    // A phone video's `moov` (with the track sizes) is at its end.
                    announced = Self.movieHeader(source, path: label).flatMap {
                        HeaderDimensions.size(of: $0, format: format)
                    }
                }
                item.headerPixels = announced.map { $0.width * $0.height }
            }
            // Media a stage will decode: a decoder that starts its helpers on
            // demand starts them now, while this item is copied (issue 59).
            if item.sniffed?.format.isDecodable == true, batch.pipeline.decodes { batch.decoder.willDecode() }
        }
    }

    /// The first bytes of an ISO base media file's `moov` box, wherever it is:
    /// the top-level boxes are walked by their headers (a few small reads).
    static func movieHeader(_ fd: FileDescriptor, path: String) -> [UInt8]? {
        var offset: Int64 = 0
        for _ in 0..<16 {
            guard let header = try? fd.read(count: 16, at: offset, path: path), header.count >= 8 else { return nil }
            var size = Int64(header[0]) << 24 | Int64(header[1]) << 16 | Int64(header[2]) << 8 | Int64(header[3])
            let type = String(decoding: header[4..<8], as: UTF8.self)
            if size == 1, header.count == 16 { size = header[8..<16].reduce(Int64(0)) { $0 << 8 | Int64($1) } }
            if type == "moov" { return try? fd.read(count: ContentSniffer.prefixLength, at: offset, path: path) }
            guard size >= 8, size < Int64.max / 2 else { return nil }
            offset += size
        }
        return nil
    }

    /// Decides `item`'s format, type, extension and MIME type from its first
    /// bytes (`prefix`) and its name, with a warning where the name says
    /// otherwise; a sidecar's kind (by name and content) when it is text.
    /// Throws for content that contradicts a media name, with `rejectContradictions`.
    static func identify(
        _ item: inout InFlightItem, prefix: [UInt8], continuation: [UInt8]?, name: String, label: String,
        rejectContradictions: Bool
    ) throws(ItemFailure) {
        let sniffed = ContentSniffer.sniff(prefix, fileName: name, continuation: continuation)
        if rejectContradictions, let claimed = sniffed.contradictedFormat {
            let head = prefix.prefix(8).map { String(format: "%02X", $0) }.joined(separator: " ")
            throw ItemFailure(
                .sniff, .contentMismatch,
                "\(label): named .\(sniffed.declaredExtension ?? "") but the content is not \(claimed.name) (nor any known format; first bytes \(head))"
            )
        }
        item.sniffed = sniffed
        item.mimeType = sniffed.mimeType
        // An export's sidecar (Takeout JSON, XMP, .AAE): by its name and these first bytes.
        item.sidecarKind = sniffed.kind == .text ? ExportSidecars.kind(name: name, head: prefix) : nil
        switch sniffed.kind {
        case .image: item.type = .image
        case .video: item.type = .video
        default: item.type = .file
        }
        if prefix.isEmpty {
            // Someone may share an empty file on purpose: it is delivered, as a file.
            item.warnings.append("is empty (0 bytes): delivered as a file")
        } else if let declared = sniffed.declaredExtension, sniffed.recognised || sniffed.kind == .text,
            declared != sniffed.fileExtension
        {
            item.warnings.append(
                "named .\(declared) but the content is \(sniffed.format.name): stored as .\(sniffed.fileExtension)")
        }
    }

    /// Maps a copy-layer error to the item failure a user reads.
    static func failure(_ error: CopyError, path: String, stage: StageName) -> ItemFailure {
        switch error {
        case .notRegularFile(let type):
            ItemFailure(
                stage, type == .symbolicLink ? .symbolicLink : .notRegularFile, "\(path) \(type.phrase); not read")
        case .changed(let what): ItemFailure(stage, .changedWhileCopying, "\(path): \(what); not delivered")
        case .reading(let e) where e.isMissing:
            ItemFailure(stage, .unreadable, "\(path): vanished before it could be read")
        // Said as a user would say it, not by the system call's name.
        case .reading(let e): ItemFailure(stage, .unreadable, "\(path): cannot read it: \(e.message.lowercasedFirst)")
        case .writing(let e) where e.isDiskFull:
            ItemFailure(
                stage, .diskFull,
                "\(path): container disk full (\(e.message)) while writing \(e.path)\(freeSpace(at: e.path.parentPath))"
            )
        case .writing(let e) where e.kind == .tooLarge:
            ItemFailure(
                stage, .tooLarge,
                "\(path): too large for the container (\(e.message)) while writing \(e.path); not delivered")
        case .writing(let e):
            ItemFailure(stage, .io, "\(path): cannot write its copy \(e.path): \(e.message.lowercasedFirst)")
        case .wouldNotFit(let size, let reserve, let available, let folder):
            ItemFailure(
                stage, .diskFull,
                "\(path): container disk full: it would not fit in \(folder)/ (\(ReadableUnits.bytes(size)) to copy"
                    + (reserve > 0 ? " and \(ReadableUnits.bytes(reserve)) kept free, the copy stage's reserve" : "")
                    + "; \(ReadableUnits.bytes(available)) free); not copied")
        case .stopped:
            ItemFailure(
                stage, .cancelled,
                "\(path): stopped while it was copied (the partial copy removed); copied again when the batch resumes")
        }
    }

    /// `" (N free)"` for the file system of `folder`, or nothing when it cannot be read.
    static func freeSpace(at folder: String) -> String {
        guard let space = try? FileSystem.space(of: folder) else { return "" }
        return " (\(ReadableUnits.bytes(space.available)) free)"
    }
}

extension SniffStage {
    /// The `sniff` stage, declared once: its settings and their document
    /// table (key, allowed values; the default is the settings type's own), its
    /// place in the order, what it records, how it is made.
    static let definition = StageDefinition(
        .sniff, after: nil, required: true, settings: PipelineDefinition.SniffSettings.self,
        document: [
            .integer("workers", \.workers, in: 1...64),
            .boolean("rejectContradictions", \.rejectContradictions),
        ],
        workers: \.workers, records: [.sniffed, .sourceVersion, .headerPixels, .size, .type, .mimeType, .sidecarKind],
        make: { settings, _ in SniffStage(settings: settings) })
}

extension PipelineDefinition {
    /// Settings of the `sniff` stage (content type and extension from the file's
    /// first 4 KB, past a long ID3v2 tag, and an MP4's `moov`: ``SniffStage``).
    public struct SniffSettings: StageSettings {
        /// Worker threads (1...64).
        public var workers = 1
        /// Fail a file whose name claims a media format its unrecognisable content is not.
        public var rejectContradictions = true

        /// The defaults: one worker, contradictions rejected.
        public init() {}
    }
}

extension String {
    /// The sentence with its first letter in lower case (`Permission denied` → `permission denied`), to follow a colon.
    fileprivate var lowercasedFirst: String { prefix(1).lowercased() + dropFirst() }
}
