import Foundation
import MediaFormats
import ShareManifest
import SystemCalls

/// Compatible: a full-resolution JPEG beside each photo in a format many apps
/// cannot open (HEIC/HEIF, AVIF, JPEG XL, camera RAW), written as
/// `<UUID>.compatible.jpg` and linked from the item's entry (v2 `compatible`):
/// iOS's "Most Compatible". The decoder makes it (``CompatibleCopySpec``:
/// upright, SDR sRGB or the source's ICC profile, the capture metadata kept, no
/// GPS under location privacy); its reply was checked (a JPEG of the size it
/// claims, the photo's full size, or for a RAW its largest preview's, of the
/// photo's shape), and it is checked here again against the size the probe
/// recorded. The file is the item's: removed if the item fails, collected by
/// `share gc` with it. A photo whose copy cannot be made is still delivered,
/// with a warning.
struct CompatibleStage: PipelineStage {
    let settings: PipelineDefinition.CompatibleSettings
    var name: StageName { .compatible }

    /// Whether `item` gets a compatible copy: a photo in one of the stage's formats.
    func applies(_ item: ItemState) -> Bool {
        guard item.type == .image, item.copyPath != nil, let format = item.sniffed?.format,
            let kind = PipelineDefinition.CompatibleFormat(format)
        else { return false }
        return settings.formats.contains(kind)
    }

    func decodes(_ item: InFlightItem) -> Bool { applies(item.state) }

    func process(_ item: inout InFlightItem, in batch: BatchContext) throws(ItemFailure) {
        guard applies(item.state), let path = item.copyPath, let format = item.sniffed?.format else { return }
        let probe = batch.pipeline.probe ?? .init()
        let spec = CompatibleCopySpec(
            quality: settings.quality, keepsLocation: batch.pipeline.location == nil, timeLimit: settings.timeLimit)
        let request = DecodeRequest(
            path: path, label: item.label, format: format, pixelLimit: probe.pixelLimit, timeLimit: probe.timeLimit,
            batch: batch.batchID.uuidString,
            compatibleCopy: spec)
        let copy: CompatibleCopy
        do throws(MediaError) {
            switch try batch.decoder.decode(request).compatibleCopy {
            case .made(let made): copy = made
            case .failed(let error): throw error
            case nil: throw MediaError(.damaged, "\(item.label): the decoder made no compatible copy")
            }
        } catch {
            item.warnings.append("no compatible copy: \(error.message)")
            return
        }
        // Checked against the size the probe recorded (a second request's claims
        // against the first's).
        if let width = item.width, let height = item.height,
            !copy.fits(width: width, height: height, preview: format.isCameraRAW)
        {
            item.warnings.append(
                "no compatible copy: the decoder made one of \(copy.width)×\(copy.height) for a \(width)×\(height) photo; not kept"
            )
            return
        }
        let destination = batch.container.compatiblePath(id: item.id)
        // A copy left by a run that died before recording it is this item's own: replace it.
        FileSystem.remove(destination)
        do {
            try AtomicFile.create(destination, bytes: copy.jpeg, syncDirectory: false)
        } catch {
            throw ItemFailure(.compatible, writing: error, "\(item.label): cannot write its compatible copy: \(error)")
        }
        item.compatible = CompatibleCopyRecord(
            path: destination, width: copy.width, height: copy.height, size: Int64(copy.jpeg.count))
    }
}

extension CompatibleStage {
    /// The `compatible` stage, declared once: its settings and their document
    /// table (key, allowed values; the default is the settings type's own), its
    /// place in the order, what it records, how it is made.
    static let definition = StageDefinition(
        .compatible, after: .motion, settings: PipelineDefinition.CompatibleSettings.self,
        document: [
            .integer("workers", \.workers, in: 1...64),
            .integer("quality", \.quality, in: 1...100),
            .choices("for", \.formats),
            .number("timeLimit", \.timeLimit, in: 0.001...86_400),
        ],
        workers: \.workers, records: [.compatible],
        make: { settings, _ in CompatibleStage(settings: settings) })
}

extension PipelineDefinition {
    /// Settings of the `compatible` stage: a full-resolution JPEG beside each
    /// photo in a format many apps cannot open (iOS's "Most Compatible"),
    /// upright, in sRGB (or with the source's ICC profile), with its capture
    /// metadata (no GPS under location privacy), linked from its entry.
    public struct CompatibleSettings: StageSettings {
        /// Worker threads (1...64).
        public var workers = 1
        /// JPEG quality (1...100).
        public var quality = 90
        /// Which formats get one.
        public var formats: Set<CompatibleFormat> = Set(CompatibleFormat.allCases)
        /// Seconds making one copy may take.
        public var timeLimit: Double = 120

        /// The defaults: one worker, quality 90, every format, 120 s.
        public init() {}
    }

    /// The formats a `compatible` stage makes JPEG copies of.
    public enum CompatibleFormat: String, Sendable, Hashable, CaseIterable {
        /// HEIC and HEIF stills.
        case heif
        /// AVIF stills.
        case avif
        /// JPEG XL.
        case jxl
        /// Camera RAW (DNG, NEF, CR2, CR3, ARW, RAF, ORF, RW2): from the largest embedded preview.
        case raw

        /// The kind `format` belongs to, if any.
        init?(_ format: MediaFormat) {
            switch format.id {
            case "heic", "heif": self = .heif
            case "avif": self = .avif
            case "jxl": self = .jxl
            default:
                guard format.isCameraRAW else { return nil }
                self = .raw
            }
        }
    }
}
