import Foundation
import ShareManifest
import SystemCalls

/// Manifest: the fan-in's rules. What an ingested item's entry is, which items
/// a schema cannot carry, what each item's report says. The fan-in itself
/// (``BatchCompletion``) runs once, after every item of the batch has finished.
struct ManifestStage {
    let settings: PipelineDefinition.ManifestSettings

    /// The entry an ingested item contributes.
    func entry(for item: ItemState, message: String?) -> SharedMediaFile {
        switch item.source {
        case .text(let text):
            return SharedMediaFile(path: text, type: .text, mimeType: item.mimeType, message: message)
        case .url(let link):
            return SharedMediaFile(path: link, type: .url, mimeType: item.mimeType, message: message)
        case .file:
            // A Takeout JSON's time (set by the probe) wins; otherwise the decoder's, the name's, the file's;
            // with the offset of the place's time zone where the time has none (``CaptureDate``).
            let captured = captureDate(of: item)
            return withFacts(fileEntry(for: item, message: message, captured: captured), of: item, captured: captured)
        }
    }

    /// `path` as a `file://` URL, spelled as the settings say.
    private func url(_ path: String) -> String { ManifestCoder.fileURLString(path, spelling: settings.pathSpelling) }

    /// A file's entry: its copy and what was made or found beside it (motion
    /// video, Live Photo, compatible copy, sidecars, group, similar picture).
    private func fileEntry(for item: ItemState, message: String?, captured: CaptureDate?) -> SharedMediaFile {
        SharedMediaFile(
            path: url(item.copyPath ?? ""), thumbnail: item.thumbnailPath.map(url),
            duration: item.durationMilliseconds, type: item.type, mimeType: item.mimeType,
            message: message ?? item.exportDescription,
            fileName: item.source.fileName, size: item.size, width: item.width, height: item.height
        ).with(
            sha256: item.sha256, duplicateOf: item.duplicateOf.map(url),
            motionVideo: item.motionVideo.map { video in
                SharedMediaFile.MotionVideo(
                    path: url(video.path), thumbnail: video.thumbnailPath.map(url),
                    duration: video.durationMilliseconds, mimeType: video.mimeType,
                    size: video.size, width: video.width, height: video.height)
            },
            livePhoto: item.livePhoto.map {
                SharedMediaFile.LivePhoto(
                    photo: url($0.photo), video: url($0.video), contentIdentifier: $0.contentIdentifier,
                    pairedBy: $0.pairedBy)
            }
        ).with(
            compatible: item.compatible.map {
                SharedMediaFile.Compatible(path: url($0.path), size: $0.size, width: $0.width, height: $0.height)
            }, locationRemoved: item.locationRemoved
        ).with(
            sidecars: item.attachedSidecars.isEmpty
                ? nil
                : item.attachedSidecars.map {
                    SharedMediaFile.Sidecar(path: url($0.path), kind: $0.kind, mimeType: $0.mimeType, size: $0.size)
                }
        ).with(
            capturedAt: captured?.text ?? item.capturedAt,
            capturedAtSource: captured?.source ?? item.capturedAtSource,
            exportLocation: item.exportLocation.map {
                SharedMediaFile.ExportLocation(
                    latitude: $0.latitude, longitude: $0.longitude, altitude: $0.altitude)
            }
        ).with(group: item.group).with(thumbhash: item.thumbnailPath == nil ? nil : item.thumbHash)
            .with(
                similarTo: item.similarTo.map {
                    SharedMediaFile.SimilarTo(path: url($0.path), distance: $0.distance)
                }
            )
    }

    /// `entry` with the facts a manifest states about a file's picture or
    /// video (previews, HDR, the capture time's offset, video, projection, camera).
    private func withFacts(_ entry: SharedMediaFile, of item: ItemState, captured: CaptureDate?) -> SharedMediaFile {
        entry.with(
            previews: settings.schema != .v2 || item.thumbnailPath == nil
                ? nil
                : item.previews.map {
                    var preview = SharedMediaFile.Preview(
                        path: url($0.path), width: $0.width, height: $0.height, mimeType: $0.format.mimeType,
                        size: $0.size)
                    preview.hdr = $0.gainMap == true ? "gainMap" : nil
                    return preview
                }
        ).with(
            thumbnailHdr: settings.schema == .v2 && item.thumbnailPath != nil && item.thumbnailGainMap == true
                ? "gainMap" : nil
        ).with(capturedAtOffsetKnown: captured?.offsetKnown, capturedAtOffsetSource: captured?.offsetSource)
            .with(
                video: settings.schema != .v2 || item.type != .video
                    ? nil
                    : item.video.map {
                        SharedMediaFile.Video(
                            codec: $0.codec, frameRate: $0.frameRate, variableFrameRate: $0.variableFrameRate,
                            captureFrameRate: $0.captureFrameRate,
                            slowMotion: $0.slowMotion, hdr: $0.hdr, dolbyVisionProfile: $0.dolbyVisionProfile,
                            rotation: $0.rotation, audio: $0.audio)
                    }
            ).with(
                projection: settings.schema != .v2 || item.type != .image
                    ? nil
                    : item.projection.map {
                        SharedMediaFile.Projection(
                            type: $0.type.rawValue, fullWidth: $0.fullWidth, fullHeight: $0.fullHeight,
                            cropLeft: $0.cropLeft, cropTop: $0.cropTop,
                            croppedWidth: $0.croppedWidth, croppedHeight: $0.croppedHeight)
                    },
                stereo: settings.schema == .v2 && item.stereo == true && item.type.isMedia ? true : nil,
                hdr: settings.schema == .v2 && item.gainMap == true && item.type == .image ? "gainMap" : nil
            ).with(
                camera: settings.schema != .v2 || !item.type.isMedia
                    ? nil
                    : item.moments?.camera.map {
                        SharedMediaFile.Camera(make: $0.make, model: $0.model, lens: $0.lens)
                    })
    }

    /// The capture date an entry states for `item` (v2, photos and videos),
    /// decided from its metadata, name and file time (``CaptureDate``).
    func captureDate(of item: ItemState) -> CaptureDate? {
        guard case .file = item.source, settings.schema == .v2, item.type == .image || item.type == .video else {
            return nil
        }
        return CaptureDate.decide(
            item.moments?.captureTime, fileName: item.source.fileName, modified: item.sourceVersion,
            takeout: item.capturedAtSource == TakeoutMetadata.capturedAtSource ? item.capturedAt : nil,
            place: CaptureDate.place(of: item))
    }

    /// Why `item` is left out by the pipeline's capture-date range
    /// (``PipelineDefinition/ManifestSettings/takenAfter``), if it is: the
    /// `capturedAt` its entry would state, compared with the bounds.
    func outsideDateRange(_ item: ItemState) -> ItemFailure? {
        guard let range = CaptureRange(settings) else { return nil }
        let captured = captureDate(of: item)
        let stated =
            captured.map { (text: $0.text, source: $0.source) }
            ?? item.capturedAt.map { (text: $0, source: item.capturedAtSource ?? "") }
        return range.refusal(of: stated, label: item.label)
    }

    /// A legacy manifest is either an array of entries or an array of strings: in a
    /// batch with both, the text items cannot be carried and are reported.
    func unsupportedBySchema(_ item: ItemState, batchHasFiles: Bool) -> ItemFailure? {
        guard settings.schema == .legacy, batchHasFiles, !item.isFileLike else { return nil }
        return ItemFailure(
            .manifest, .unsupportedBySchema,
            "\(item.label): the legacy manifest cannot hold text next to files; use the v2 schema (pipeline \"default\")"
        )
    }

    /// True when the schema's choice between entries and strings depends on the
    /// whole batch (legacy), so the fan-in must look at every item first.
    var needsWholeBatch: Bool { settings.schema == .legacy }

    /// The reports of an item and of the sidecars it carries (the inputs of
    /// their own it reports: ``ItemState/reportedSidecars``), in that order;
    /// `finished` is false for an item an interruption parked.
    func reports(for item: ItemState, finished: Bool, message: String?) -> [ItemReport] {
        [report(for: item, finished: finished, message: message)]
            + item.reportedSidecars.map { report(for: $0, finished: finished, message: message) }
    }

    /// What an item's report says of it (``report(for:finished:message:)``),
    /// without the report; `finished` is false for an item an interruption parked.
    static func status(of item: ItemState, finished: Bool) -> ItemStatus {
        switch item.failure?.reason {
        case nil where item.attachedTo != nil && finished: .attached
        case nil: finished ? .ingested : .failed
        case let reason? where ItemFailure.skipping.contains(reason): .skipped
        default: .failed
        }
    }

    /// An item's report; `finished` is false for an item an interruption parked.
    func report(for item: ItemState, finished: Bool, message: String?) -> ItemReport {
        let status = Self.status(of: item, finished: finished)
        return ItemReport(
            index: item.index, source: item.label, status: status,
            failure: item.failure ?? (finished ? nil : item.waitingForSpace), warnings: item.warnings,
            entry: status == .ingested ? entry(for: item, message: message) : nil,
            id: item.copyPath != nil ? item.id : nil, stageSeconds: item.stageSeconds,
            attachedTo: status == .attached ? item.attachedTo : nil)
    }

    /// The redirect URL for a batch whose entries are of these types.
    func redirect(for types: some Sequence<SharedMediaType>, key: ShareKey) -> RedirectURL {
        RedirectURL(scheme: settings.scheme, key: key, kind: RedirectKind(types: types))
    }

    /// Makes the batch's copies, compatible copies (beside them) and thumbnails
    /// durable: their folders are fsynced before a manifest names them.
    func syncCopies(in container: ContainerDirectory) throws(SystemError) {
        try FileSystem.syncDirectory(container.root)
        try FileSystem.syncDirectory(container.thumbnailsDirectory)
    }
}

extension ManifestStage {
    /// The `manifest` stage, declared once: its settings and their document
    /// table (key, allowed values; the default is the settings type's own), its
    /// place in the order, what it records, how it is made.
    static let definition = StageDefinition(
        .manifest, after: nil, required: true, settings: PipelineDefinition.ManifestSettings.self,
        document: [
            .choice("schema", \.schema),
            .custom(
                "scheme",
                read: { value, settings throws(SettingProblem) in
                    guard let scheme = value as? String else {
                        throw SettingProblem("\(PipelineDocument.show(value)) is not a string")
                    }
                    settings.scheme = scheme
                },
                write: { $0.scheme },
                check: { settings throws(SettingProblem) in
                    do throws(RedirectURLError) { try RedirectURL.validate(scheme: settings.scheme) } catch {
                        throw SettingProblem(
                            "\"\(settings.scheme)\" is not a URL scheme (a letter, then letters, digits, + - .)")
                    }
                }),
            .custom(
                "key",
                read: { value, settings throws(SettingProblem) in
                    if value is NSNull { return }
                    guard let key = value as? String else {
                        throw SettingProblem("\(PipelineDocument.show(value)) is not a string")
                    }
                    do throws(ShareKeyError) { settings.key = try ShareKey(key) } catch {
                        throw SettingProblem(error.description)
                    }
                },
                write: { $0.key?.rawValue }, check: { _ in }),
            .choice("pathSpelling", \.pathSpelling),
            .choice("duplicates", \.duplicates),
            captureBound("takenAfter", \.takenAfter),
            captureBound("takenBefore", \.takenBefore),
        ],
        workers: nil, records: [.duplicateOf, .similarTo, .livePhoto, .carriedSidecars, .attachedTo, .group],
        make: nil)

    /// `takenAfter` or `takenBefore`: a date or an ISO 8601 date and time, or
    /// null; checked with the other (the range must not be empty).
    private static func captureBound(
        _ key: String, _ path: WritableKeyPath<PipelineDefinition.ManifestSettings, CaptureBound?> & Sendable
    ) -> Setting<PipelineDefinition.ManifestSettings> {
        .custom(
            key,
            read: { value, settings throws(SettingProblem) in
                if value is NSNull { return }
                guard let text = value as? String else {
                    throw SettingProblem("\(PipelineDocument.show(value)) is not a string")
                }
                do throws(CaptureBoundError) { settings[keyPath: path] = try CaptureBound(text) } catch {
                    throw SettingProblem(error.description)
                }
            },
            write: { $0[keyPath: path]?.text },
            check: { settings throws(SettingProblem) in
                if let bound = settings[keyPath: path], CaptureBound.parse(bound.text) == nil {
                    throw SettingProblem("\"\(bound.text)\" is not a date")
                }
                if key == "takenBefore", let after = settings.takenAfter, let before = settings.takenBefore,
                    before.compare(after) <= 0
                {
                    throw SettingProblem(
                        "\(before.text) is not later than takenAfter \(after.text): no capture time lies between them")
                }
            })
    }
}

extension PipelineDefinition {
    /// Settings of the `manifest` stage: what the host app will read.
    public struct ManifestSettings: StageSettings {
        /// The JSON layout written.
        public var schema: ManifestSchema = .v2
        /// The redirect URL's scheme.
        public var scheme = RedirectURL.defaultScheme
        /// A fixed key; nil gives every batch its own (`ShareKey-<UUID>`).
        public var key: ShareKey?
        /// How `file://` paths are spelled.
        public var pathSpelling: PathSpelling = .percentEncoded
        /// What becomes of an item whose content (SHA-256) was delivered before:
        /// earlier in the batch, or in a share not yet consumed.
        public var duplicates: DuplicatePolicy = .keep
        /// Photos and videos taken before this (their `capturedAt`, as the
        /// manifest states it) are left out (status `skipped`, reason
        /// `outsideDateRange`, their copies removed); with either bound, an
        /// item with no capture date (text, links, other files, every entry of
        /// a legacy manifest) is left out too. Nil: no lower bound.
        public var takenAfter: CaptureBound?
        /// Photos and videos taken at or after this are left out (the bound
        /// itself is excluded: `takenAfter` 2024-01-01 and `takenBefore`
        /// 2025-01-01 keep 2024). Nil: no upper bound.
        public var takenBefore: CaptureBound?

        /// The defaults: v2, `ShareMedia`, a key per batch, percent-encoded paths,
        /// duplicates kept (and marked).
        public init() {}
    }

    /// What the fan-in does with an item whose content was already delivered.
    public enum DuplicatePolicy: String, Sendable, Hashable, CaseIterable {
        /// Delivered with its own copy, marked (`duplicateOf`, a warning).
        case keep
        /// Delivered as a pointer to the earlier copy: its own copy is removed.
        case link
        /// Left out (status `skipped`, reason `duplicate`), its copy removed.
        case skip
    }
}
