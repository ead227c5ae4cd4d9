import Foundation
import MediaFormats
import ShareManifest
import SystemCalls

/// An export sidecar carried by the photo or video it describes
/// (``ItemState/carriedSidecars``), found beside it when the batch was planned
/// (``FolderSidecars``), instead of being an item of its own: still an input
/// of the batch, with its own index and report.
///
/// Its media's probe has the decoder read a Takeout JSON together with the
/// media, and gives what it says to the media (``ProbeStage``); the fan-in
/// delivers it (``SidecarDelivery``):
/// its head read (a sidecar by content, or not one), copied under the media's
/// UUID (`<UUID>.<n>.<ext>`, numbered in input order), attached to the media
/// when the media is delivered as a photo or video, else released and
/// delivered as a file of its own, with a warning saying why.
///
/// It is recorded with its media at every step, so it holds only what cannot
/// be derived from the media (its UUID is the media's: its copy is named by it,
/// and collected with it; it is attached to the media until released), and its
/// record is flat. As an item (its report; its entry when delivered as a
/// file) it is ``item(carriedBy:)``.
struct CarriedSidecar: Sendable, Hashable {
    /// Its place among the batch's inputs.
    let index: Int
    /// Its file, the name people know it by, and how reports name it.
    let path: SourcePath
    let name: String
    let label: String
    /// Its kind: what its name claims, then (the fan-in) what its content
    /// shows; nil for a file whose content is no sidecar's.
    var kind: SharedMediaFile.Sidecar.Kind?
    /// True on an edited copy's share of its original's Takeout JSON
    /// (`X-edited.jpg` of `X.jpg.json`): a copy under the edited copy's UUID
    /// and the same facts; the original reports the sidecar, and delivers it
    /// as a file of its own when it cannot be attached.
    var borrowed = false
    /// True once it is released, to be delivered as a file of its own.
    var released = false
    /// Its copy in the container (`<media UUID>.<n>.<ext>`) and its size: as
    /// planned (its kind's extension, its size when the drop was listed), then
    /// as the fan-in made it.
    var copyPath: String
    var size: Int64?
    /// What its head says, for a file whose content is no sidecar's (how it is delivered).
    var sniffed: SniffedContent?
    /// Its copy's SHA-256, when it is delivered as a file.
    var sha256: String?
    /// What location privacy removed from its copy.
    var locationRemoved: [String]?
    var warnings: [String] = []
    /// Why it was not delivered (its own failure: it could not be read or copied).
    var failure: ItemFailure?

    /// A sidecar met by the plan: its kind what its name claims, its copy as planned.
    init(index: Int, path: SourcePath, name: String, label: String, kind: SharedMediaFile.Sidecar.Kind?, copyPath: String, size: Int64?) {
        (self.index, self.path, self.name, self.label, self.kind, self.copyPath, self.size) = (index, path, name, label, kind, copyPath, size)
    }

    /// True while it is attached to its media: not released, not failed.
    var isAttached: Bool { failure == nil && !released }

    /// True when nothing more is done with it here: it failed, or it is an
    /// edited copy's share of a sidecar released (its original's business).
    var isSettled: Bool { failure != nil || (borrowed && released) }

    /// Releases it, to be delivered as a file of its own, saying why when `warning` does.
    mutating func release(warning: String? = nil) {
        released = true
        if let warning, !warnings.contains(warning) { warnings.append(warning) }
    }

    /// The sidecar as an item of the batch, carried by `media`: its own index,
    /// source and label, the media's UUID, attached to the media (its label)
    /// until released. What its report is made of, and its entry when it is
    /// delivered as a file.
    func item(carriedBy media: ItemState) -> ItemState {
        var item = ItemState(index: index, id: media.id, source: .file(SourceFile(path: path, name: name)), label: label, failure: failure)
        item.sidecarKind = kind
        item.attachedTo = released ? nil : media.label
        item.size = size
        item.sniffed = sniffed
        item.mimeType = kind.map(ExportSidecars.mimeType(of:)) ?? sniffed?.mimeType
        item.copyPath = failure == nil ? copyPath : nil
        item.sha256 = sha256
        item.locationRemoved = locationRemoved
        item.warnings = warnings
        return item
    }

    /// The warning of a sidecar released because its media, `media`, is not delivered (as `reason` says).
    static func mediaNotDelivered(_ kind: SharedMediaFile.Sidecar.Kind?, media: String, reason: String) -> String {
        "\(describe(kind)) whose photo or video (\(media.lastPathComponentOfPath)) \(reason): delivered as a file"
    }

    /// A sidecar of `kind` in words.
    static func describe(_ kind: SharedMediaFile.Sidecar.Kind?) -> String {
        switch kind {
        case .takeout: "a Google Takeout JSON sidecar"
        case .xmp: "an XMP sidecar"
        case .aae: "an Apple .AAE adjustment file"
        case nil: "a sidecar"
        }
    }
}

extension CarriedSidecar: Codable {
    /// One flat object, what is not set left out: every record of its media
    /// carries it.
    private enum CodingKeys: String, CodingKey {
        case index, path, name, label, kind, borrowed, released, copyPath = "copy", size, sniffed, sha256, locationRemoved, warnings, failure
    }

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        index = try c.decode(Int.self, forKey: .index)
        path = SourcePath(bytes: Array(try c.decode(Data.self, forKey: .path)))
        name = try c.decode(String.self, forKey: .name)
        label = try c.decode(String.self, forKey: .label)
        kind = try c.decodeIfPresent(SharedMediaFile.Sidecar.Kind.self, forKey: .kind)
        borrowed = try c.decodeIfPresent(Bool.self, forKey: .borrowed) ?? false
        released = try c.decodeIfPresent(Bool.self, forKey: .released) ?? false
        copyPath = try c.decode(String.self, forKey: .copyPath)
        size = try c.decodeIfPresent(Int64.self, forKey: .size)
        sniffed = try c.decodeIfPresent(SniffedContent.self, forKey: .sniffed)
        sha256 = try c.decodeIfPresent(String.self, forKey: .sha256)
        locationRemoved = try c.decodeIfPresent([String].self, forKey: .locationRemoved)
        warnings = try c.decodeIfPresent([String].self, forKey: .warnings) ?? []
        failure = try c.decodeIfPresent(ItemFailure.self, forKey: .failure)
    }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(index, forKey: .index)
        try c.encode(Data(path.bytes), forKey: .path)
        try c.encode(name, forKey: .name)
        try c.encode(label, forKey: .label)
        try c.encodeIfPresent(kind, forKey: .kind)
        if borrowed { try c.encode(true, forKey: .borrowed) }
        if released { try c.encode(true, forKey: .released) }
        try c.encode(copyPath, forKey: .copyPath)
        try c.encodeIfPresent(size, forKey: .size)
        try c.encodeIfPresent(sniffed, forKey: .sniffed)
        try c.encodeIfPresent(sha256, forKey: .sha256)
        try c.encodeIfPresent(locationRemoved, forKey: .locationRemoved)
        if !warnings.isEmpty { try c.encode(warnings, forKey: .warnings) }
        try c.encodeIfPresent(failure, forKey: .failure)
    }
}

extension ItemState {
    /// What its entry lists in `sidecars`: the sidecars it carries that are
    /// attached to it, with their copies.
    var attachedSidecars: [SidecarRecord] {
        carriedSidecars.compactMap { sidecar in
            guard sidecar.isAttached, let kind = sidecar.kind else { return nil }
            return SidecarRecord(path: sidecar.copyPath, kind: kind, mimeType: ExportSidecars.mimeType(of: kind), size: sidecar.size)
        }
    }

    /// The sidecars it carries that are inputs of their own to report, as
    /// items: all but those it borrows (an edited copy's share of its
    /// original's JSON).
    var reportedSidecars: [ItemState] { carriedSidecars.filter { !$0.borrowed }.map { $0.item(carriedBy: self) } }
}

/// How the fan-in delivers the sidecars an item carries, once the item is
/// final (``BatchCompletion``, both modes): attached to it when it is
/// delivered as a photo or video, else each released with a warning naming it;
/// each read (its head: a sidecar by content, or a plain file) and copied
/// under the item's UUID.
///
/// The copies are written straight to their names, without an fsync each
/// (``FileCopier/copyUnsynced(_:version:head:of:to:)``): the fan-in makes them
/// durable with one sync of the container's file system before the manifest
/// names them (``BatchCompletion``). A run that dies before the manifest is
/// written leaves copies that may be half there, so a fan-in that has not
/// written its manifest writes every copy again; once the manifest is written,
/// the copies are only looked at.
enum SidecarDelivery {
    /// What settling an item's sidecars did.
    struct Settled {
        /// Some sidecar's recorded state changed (it was released, failed, or is not as planned).
        var changed = false
        /// A copy was written (it is durable once the file system is synced).
        var copied = false
    }

    /// Settles the sidecars `item` carries: `writing` copies them (a fan-in
    /// whose manifest is not written yet); otherwise their copies, made by a
    /// fan-in whose manifest was written, are only looked at.
    static func settle(_ item: inout ItemState, in context: BatchContext, writing: Bool) -> Settled {
        let before = item.carriedSidecars
        var settled = Settled()
        if item.failure != nil || !(item.type == .image || item.type == .video) {
            let reason = item.failure == nil ? "is not a photo or video" : "was not delivered"
            for position in item.carriedSidecars.indices where item.carriedSidecars[position].isAttached {
                let kind = item.carriedSidecars[position].kind
                item.carriedSidecars[position].release(warning: CarriedSidecar.mediaNotDelivered(kind, media: item.label, reason: reason))
            }
        }
        let privacy = context.pipeline.location
        for position in item.carriedSidecars.indices where !item.carriedSidecars[position].isSettled {
            var sidecar = item.carriedSidecars[position]
            do throws(ItemFailure) {
                try deliver(&sidecar, n: position + 1, carrier: item.id, in: context, writing: writing)
                if writing { settled.copied = true }
                // Location privacy: a Takeout JSON's place goes from its copy
                // (synced with it), attached or delivered as a file.
                if let privacy, writing, sidecar.kind == .takeout, !(sidecar.borrowed && sidecar.released) {
                    let found = try LocationStage.removeLocation(
                        from: sidecar.copyPath, label: sidecar.label, format: .text, settings: privacy, in: context, sync: false)
                    if !found.isEmpty {
                        sidecar.locationRemoved = [LocationStage.takeoutLocationRemoved]
                        if sidecar.sha256 != nil { sidecar.sha256 = try? FileCopier.hash(of: sidecar.copyPath) }
                    }
                }
            } catch {
                if writing { FileSystem.remove(sidecar.copyPath) }
                sidecar.failure = error
            }
            item.carriedSidecars[position] = sidecar
        }
        // A borrowed share that is not attached goes (its original delivers the sidecar).
        for sidecar in item.carriedSidecars where sidecar.borrowed && sidecar.released && writing { FileSystem.remove(sidecar.copyPath) }
        if item.carriedSidecars.contains(where: { $0.isAttached && $0.locationRemoved != nil }),
            !(item.locationRemoved ?? []).contains(LocationStage.takeoutLocationRemoved)
        {
            item.locationRemoved = (item.locationRemoved ?? []) + [LocationStage.takeoutLocationRemoved]
        }
        settled.changed = item.carriedSidecars != before
        return settled
    }

    /// Reads the head of `sidecar`'s source and decides what it is (a sidecar
    /// by content stays as it is; a file that is none, or one larger than
    /// ``ExportSidecars/maximumSize``, is released, and named by its content),
    /// then copies it to its place (`writing`) or looks at the copy there.
    private static func deliver(_ sidecar: inout CarriedSidecar, n: Int, carrier: UUID, in context: BatchContext, writing: Bool) throws(ItemFailure) {
        let (input, version): (FileDescriptor, FileVersion)
        let head: [UInt8]
        do throws(CopyError) {
            (input, version) = try FileCopier.openSource(sidecar.path)
            do { head = try input.read(count: ContentSniffer.prefixLength, at: 0, path: sidecar.label) } catch { throw CopyError.reading(error) }
        } catch {
            throw SniffStage.failure(error, path: sidecar.label, stage: .copy)
        }
        let claimed = sidecar.kind
        if sidecar.sniffed == nil, claimed == nil || ExportSidecars.kind(name: sidecar.name, head: head) != claimed || version.size > ExportSidecars.maximumSize {
            // No sidecar by its content: a file, identified as any other is.
            var read = InFlightItem(ItemState(index: sidecar.index, id: carrier, source: .file(SourceFile(path: sidecar.path, name: sidecar.name)), label: sidecar.label))
            read.size = version.size
            try SniffStage.identify(
                &read, prefix: head, continuation: nil, name: sidecar.name, label: sidecar.label, rejectContradictions: context.pipeline.sniff.rejectContradictions)
            sidecar.kind = nil
            sidecar.sniffed = read.sniffed
            sidecar.warnings += read.warnings.filter { !sidecar.warnings.contains($0) }
            sidecar.release()
        }
        let ext = sidecar.kind.map(ExportSidecars.fileExtension(of:)) ?? sidecar.sniffed?.fileExtension ?? "bin"
        sidecar.copyPath = ExportSidecars.copyPath(in: context.container, id: carrier, n: n, fileExtension: ext)
        if sidecar.borrowed && sidecar.released { return }
        let delivered = sidecar.released
        if writing {
            let copied: Copied
            do throws(CopyError) {
                copied = try FileCopier.copyUnsynced(input, version: version, head: head, of: sidecar.path, to: sidecar.copyPath)
            } catch {
                throw SniffStage.failure(error, path: sidecar.label, stage: .copy)
            }
            sidecar.size = copied.size
            sidecar.sha256 = delivered ? copied.sha256 : nil
        } else {
            guard let status = try? FileStatus.ofLink(sidecar.copyPath), status.type == .regular else {
                throw ItemFailure(.copy, .io, "\(sidecar.label): its copy \(sidecar.copyPath) is not in the container")
            }
            sidecar.size = status.size
            if delivered, sidecar.sha256 == nil {
                do { sidecar.sha256 = try FileCopier.hash(of: sidecar.copyPath) } catch {
                    throw ItemFailure(.copy, .io, "\(sidecar.label): cannot read back its copy: \(error)")
                }
            }
        }
    }
}
