import Foundation
import ShareManifest
import Synchronization
import SystemCalls

/// The batch report document: the one layout `BatchReport.json()` and the
/// stored report write and `BatchReport.stored` reads: the batch's fields
/// first (keys sorted), then `items` (each one's keys sorted); fields without
/// a value are left out.
struct BatchReportDocument: Codable {
    var batch: String
    var key: String
    var redirectURL: String?
    var manifest: String?
    var schema: ManifestSchema
    var pipeline: String
    var interrupted: Bool?
    var counts: Counts?
    var stageSeconds: [String: Double]?
    var wallSeconds: Double
    var items: [Item]

    struct Counts: Codable {
        var items: Int
        var ingested: Int
        var failed: Int
        var skipped: Int
        /// Sidecars attached to their media (absent when none).
        var attached: Int?
    }

    /// One input: its outcome and, when ingested, its manifest entry's fields.
    struct Item: Codable {
        var source: String
        var status: ItemStatus
        var error: String?
        var stage: StageName?
        var reason: ItemFailure.Reason?
        var path: String?
        var type: SharedMediaType?
        var thumbnail: String?
        var mimeType: String?
        var fileName: String?
        var size: Int64?
        var width: Int?
        var height: Int?
        var duration: Double?
        var sha256: String?
        var duplicateOf: String?
        var similarTo: SharedMediaFile.SimilarTo?
        var motionVideo: SharedMediaFile.MotionVideo?
        var livePhoto: SharedMediaFile.LivePhoto?
        var compatible: Compatible?
        var locationRemoved: [String]?
        var sidecars: [SharedMediaFile.Sidecar]?
        var group: SharedMediaFile.Group?
        var capturedAt: String?
        var capturedAtSource: String?
        var capturedAtOffsetKnown: Bool?
        var capturedAtOffsetSource: String?
        var thumbnailHdr: String?
        var video: SharedMediaFile.Video?
        var camera: SharedMediaFile.Camera?
        var exportLocation: SharedMediaFile.ExportLocation?
        /// A sidecar's (status `attached`): the media item it is attached to.
        var attachedTo: String?
        var warnings: [String]?
        var stageSeconds: [String: Double]?
        /// The thumbnail's ThumbHash (base64).
        var thumbhash: String?
        var previews: [SharedMediaFile.Preview]?
        var projection: SharedMediaFile.Projection?
        var stereo: Bool?
        var hdr: String?
    }

    /// An item's compatible copy, as its entry has it.
    struct Compatible: Codable {
        var path: String
        var mimeType: String
        var size: Int64?
        var width: Int?
        var height: Int?
    }

    /// What comes before and after the items of a report's document.
    struct Header {
        /// `{`, the batch's fields, `"items" : [`.
        let opening: String

        /// `]` and `}` after `count` items.
        func closing(empty: Bool) -> String { empty ? "\n  ]\n}" : "\n  ]\n}" }

        /// The whole document, with these items (each encoded by ``BatchReportDocument/encode(_:)``).
        func joined(items: [String]) -> Data {
            Data((opening + items.joined(separator: ",\n") + closing(empty: items.isEmpty)).utf8)
        }
    }

    /// Where the items start: what a reader of the header alone looks for.
    static let itemsMarker = "\n  \"items\" : ["

    /// The header of `report`'s document.
    static func header(of report: BatchReport) -> Header {
        func seconds(_ timings: [StageName: Double]) -> [String: Double] {
            Dictionary(uniqueKeysWithValues: timings.map { ($0.key.rawValue, ($0.value * 10_000).rounded() / 10_000) })
        }
        let document = BatchReportDocument(
            batch: report.batchID.uuidString, key: report.key.rawValue, redirectURL: report.redirectURL?.description,
            manifest: report.manifestPath,
            schema: report.schema, pipeline: report.pipeline, interrupted: report.interrupted,
            counts: Counts(
                items: report.counts.items, ingested: report.counts.ingested, failed: report.counts.failed,
                skipped: report.counts.skipped,
                attached: report.counts.attached > 0 ? report.counts.attached : nil),
            stageSeconds: seconds(report.stageSeconds), wallSeconds: (report.wallSeconds * 10_000).rounded() / 10_000,
            items: [])
        var encoded = String(decoding: (try? encoder.encode(HeaderFields(document))) ?? Data("{}".utf8), as: UTF8.self)
        // `{ … "wallSeconds" : 1.5\n}` → `{ … "wallSeconds" : 1.5,\n  "items" : [\n`
        if encoded.hasSuffix("\n}") { encoded.removeLast(2) }
        return Header(opening: encoded + "," + itemsMarker + "\n")
    }

    /// One item as it stands in the document (indented for its place in `items`).
    static func encode(_ item: Item) -> String {
        let json = (try? encoder.encode(item)) ?? Data("{}".utf8)
        // Each line indented by four spaces (the pretty-printed JSON has no empty line).
        var indented: [UInt8] = [0x20, 0x20, 0x20, 0x20]
        indented.reserveCapacity(json.count + json.count / 4)
        for byte in json {
            indented.append(byte)
            if byte == UInt8(ascii: "\n") { indented += [0x20, 0x20, 0x20, 0x20] }
        }
        return String(decoding: indented, as: UTF8.self)
    }

    /// One encoder for every document (made once: an encoder per item cost more than its item).
    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    /// The document without its items.
    private struct HeaderFields: Encodable {
        let document: BatchReportDocument
        init(_ document: BatchReportDocument) { self.document = document }

        private enum Key: String, CodingKey {
            case batch, key, redirectURL, manifest, schema, pipeline, interrupted, counts, stageSeconds, wallSeconds
        }

        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: Key.self)
            try c.encode(document.batch, forKey: .batch)
            try c.encode(document.key, forKey: .key)
            try c.encodeIfPresent(document.redirectURL, forKey: .redirectURL)
            try c.encodeIfPresent(document.manifest, forKey: .manifest)
            try c.encode(document.schema, forKey: .schema)
            try c.encode(document.pipeline, forKey: .pipeline)
            try c.encodeIfPresent(document.interrupted, forKey: .interrupted)
            try c.encodeIfPresent(document.counts, forKey: .counts)
            try c.encodeIfPresent(document.stageSeconds, forKey: .stageSeconds)
            try c.encode(document.wallSeconds, forKey: .wallSeconds)
        }
    }

    /// The bytes of the header of the document at `path`, read up to its items
    /// and closed as a document of its own with no items; nil when the items
    /// are not last (an older report, to read whole).
    static func headerBytes(of path: String) throws(SystemError) -> [UInt8]? {
        let fd = try FileDescriptor.open(path, O_RDONLY)
        let marker = Array(itemsMarker.utf8)
        var read: [UInt8] = []
        while read.count < 1 << 20 {
            let chunk = try fd.read(count: 1 << 14, at: Int64(read.count), path: path)
            read += chunk
            if let range = read.firstRange(of: marker) {
                // `…,` before the items: an empty `items` closes it (the field is
                // not optional: without it no header would decode).
                return Array(read[..<range.lowerBound]) + Array("\n  \"items\" : []\n}".utf8)
            }
            if chunk.isEmpty { return nil }
        }
        return nil
    }

    /// The report this document describes; `items`, when given, stand for its
    /// own (read later, when needed).
    func report(items lazy: ItemReports? = nil) throws(StoredReportDecodingError) -> BatchReport {
        guard let batchID = UUID(uuidString: batch) else {
            throw StoredReportDecodingError(detail: "field batch must be a UUID, not \(JSONText.string(batch))")
        }
        let key: ShareKey
        do { key = try ShareKey(self.key) } catch { throw StoredReportDecodingError(detail: "field key: \(error)") }
        func timings(_ seconds: [String: Double]?) -> [StageName: Double] {
            // A stage this version does not know is left out rather than refusing the report.
            Dictionary(uniqueKeysWithValues: (seconds ?? [:]).map { name, value in (StageName(name), value) })
        }
        let reports = lazy == nil ? items.enumerated().map { index, item in item.report(index: index) } : []
        let all = lazy ?? ItemReports(reports)
        let counted =
            counts.map { stored in
                var counts = BatchReport.Counts(
                    items: stored.items, ingested: stored.ingested, failed: stored.failed, skipped: stored.skipped)
                counts.attached = stored.attached ?? 0
                return counts
            } ?? BatchReport.Counts(reports)
        var report = BatchReport(
            batchID: batchID, key: key, redirectURL: redirectURL.flatMap { try? RedirectURL.parse($0).url },
            manifestPath: manifest,
            schema: schema, pipeline: pipeline, items: all, counts: counted, stageSeconds: timings(stageSeconds),
            wallSeconds: wallSeconds)
        report.interrupted = interrupted ?? false
        return report
    }
}

extension BatchReportDocument.Item {
    /// The item's report, `index`-th of its batch.
    func report(index: Int) -> ItemReport {
        func timings(_ seconds: [String: Double]?) -> [StageName: Double] {
            // A stage this version does not know is left out rather than refusing the report.
            Dictionary(uniqueKeysWithValues: (seconds ?? [:]).map { name, value in (StageName(name), value) })
        }
        // Reports always name the stage and reason of a failure; an edited one
        // without them still shows its message.
        let failure =
            status == .ingested || status == .attached
            ? nil : ItemFailure(stage ?? .sniff, reason ?? .io, error ?? "(no message recorded)")
        let entry = path.map {
            SharedMediaFile(
                path: $0, thumbnail: thumbnail, duration: duration, type: type ?? .file, mimeType: mimeType,
                fileName: fileName, size: size, width: width, height: height
            ).with(sha256: sha256, duplicateOf: duplicateOf, motionVideo: motionVideo, livePhoto: livePhoto).with(
                compatible: compatible.map {
                    SharedMediaFile.Compatible(
                        path: $0.path, mimeType: $0.mimeType, size: $0.size, width: $0.width, height: $0.height)
                },
                locationRemoved: locationRemoved
            ).with(sidecars: sidecars).with(group: group).with(
                capturedAt: capturedAt, capturedAtSource: capturedAtSource, exportLocation: exportLocation
            )
            .with(thumbhash: thumbhash).with(previews: previews)
            .with(capturedAtOffsetKnown: capturedAtOffsetKnown, capturedAtOffsetSource: capturedAtOffsetSource).with(
                thumbnailHdr: thumbnailHdr
            ).with(video: video).with(projection: projection, stereo: stereo, hdr: hdr)
            .with(camera: camera).with(similarTo: similarTo)
        }
        // Copies are named <UUID>.<ext> in the container.
        let id = entry?.fileURL.flatMap { UUID(uuidString: $0.deletingPathExtension().lastPathComponent) }
        return ItemReport(
            index: index, source: source, status: status, failure: failure, warnings: warnings ?? [], entry: entry,
            id: id,
            stageSeconds: timings(stageSeconds), attachedTo: attachedTo)
    }

    /// The item's fields in the document.
    init(_ item: ItemReport) {
        func seconds(_ timings: [StageName: Double]) -> [String: Double] {
            Dictionary(uniqueKeysWithValues: timings.map { ($0.key.rawValue, ($0.value * 10_000).rounded() / 10_000) })
        }
        let entry = item.entry
        self.init(
            source: item.source, status: item.status, error: item.failure?.message, stage: item.failure?.stage,
            reason: item.failure?.reason,
            path: entry?.path, type: entry?.type, thumbnail: entry?.thumbnail, mimeType: entry?.mimeType,
            fileName: entry?.fileName,
            size: entry?.size, width: entry?.width, height: entry?.height, duration: entry?.duration,
            sha256: entry?.sha256,
            duplicateOf: entry?.duplicateOf, motionVideo: entry?.motionVideo, livePhoto: entry?.livePhoto,
            compatible: entry?.compatible.map {
                BatchReportDocument.Compatible(
                    path: $0.path, mimeType: $0.mimeType, size: $0.size, width: $0.width, height: $0.height)
            },
            locationRemoved: entry?.locationRemoved, sidecars: entry?.sidecars, group: entry?.group,
            capturedAt: entry?.capturedAt,
            capturedAtSource: entry?.capturedAtSource, capturedAtOffsetKnown: entry?.capturedAtOffsetKnown,
            video: entry?.video, exportLocation: entry?.exportLocation, attachedTo: item.attachedTo,
            warnings: item.warnings,
            stageSeconds: seconds(item.stageSeconds))
        thumbhash = entry?.thumbhash
        previews = entry?.previews
        capturedAtOffsetSource = entry?.capturedAtOffsetSource
        thumbnailHdr = entry?.thumbnailHdr
        (projection, stereo, hdr) = (entry?.projection, entry?.stereo, entry?.hdr)
        camera = entry?.camera
        similarTo = entry?.similarTo
    }
}
