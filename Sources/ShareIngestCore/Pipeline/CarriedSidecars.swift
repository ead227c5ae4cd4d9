import Dispatch
import Foundation
import MediaFormats
import ShareManifest
import Synchronization
import SystemCalls

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

    /// Settles the sidecars of the `items` that carry any, two items at a time
    /// (copying is most of their cost, and the fan-in is one thread); returns
    /// what it did for each, by position.
    static func settle(_ items: inout [ItemState], in context: BatchContext, writing: Bool) -> [(
        position: Int, settled: Settled
    )] {
        let carriers = items.indices.filter { !items[$0].carriedSidecars.isEmpty }
        guard !carriers.isEmpty else { return [] }
        let input = items
        let done = Mutex<[(position: Int, item: ItemState, settled: Settled)]>([])
        let workers = min(2, carriers.count)
        DispatchQueue.concurrentPerform(iterations: workers) { worker in
            for position in stride(from: worker, to: carriers.count, by: workers).map({ carriers[$0] }) {
                var item = input[position]
                let settled = settle(&item, in: context, writing: writing)
                done.withLock { $0.append((position, item, settled)) }
            }
        }
        return done.withLock { done in
            done.map { finished in
                items[finished.position] = finished.item
                return (finished.position, finished.settled)
            }
        }
    }

    /// Settles the sidecars `item` carries: `writing` copies them (a fan-in
    /// whose manifest is not written yet); otherwise their copies, made by a
    /// fan-in whose manifest was written, are only looked at.
    static func settle(_ item: inout ItemState, in context: BatchContext, writing: Bool) -> Settled {
        let before = item.carriedSidecars.map(\.recorded)
        var settled = Settled()
        if item.failure?.reason == .outsideDateRange {
            // Left out with its photo or video: the capture-date range asked for leaves out what describes it too.
            BatchLifecycle.failCarriedSidecars(of: &item, .mediaOutsideDateRange)
        }
        if item.failure != nil || !(item.type == .image || item.type == .video) {
            let reason = item.failure == nil ? "is not a photo or video" : "was not delivered"
            for position in item.carriedSidecars.indices where item.carriedSidecars[position].isAttached {
                let kind = item.carriedSidecars[position].kind
                item.carriedSidecars[position].release(
                    warning: CarriedSidecar.mediaNotDelivered(kind, media: item.label, reason: reason))
            }
        }
        let privacy = context.pipeline.location
        for position in item.carriedSidecars.indices where !item.carriedSidecars[position].isSettled {
            var sidecar = item.carriedSidecars[position]
            let label = sidecar.label(carriedBy: item)
            do throws(ItemFailure) {
                let copy = try deliver(
                    &sidecar, n: position + 1, carriedBy: item, label: label, in: context, writing: writing)
                if writing { settled.copied = true }
                // Location privacy: every position goes from its copy (synced
                // with it), attached or delivered as a file: a JSON's (Takeout's
                // or any), an XMP sidecar's; one that cannot be read is not delivered.
                if let copy, let privacy, writing,
                    let format = LocationStage.locationFormat(
                        name: sidecar.name, kind: sidecar.kind, sniffed: sidecar.sniffed?.format)
                {
                    let found = try LocationStage.removeLocation(
                        from: copy, label: label, format: format, settings: privacy, in: context, sync: false)
                    if !found.isEmpty {
                        sidecar.locationRemoved =
                            sidecar.kind == .takeout ? [LocationStage.takeoutLocationRemoved] : found.map(\.name)
                        if sidecar.sha256 != nil { sidecar.sha256 = try? FileCopier.hash(of: copy) }
                    }
                }
            } catch {
                if writing, let copy = sidecar.copyPath(carriedBy: item, n: position + 1, root: context.container.root)
                {
                    FileSystem.remove(copy)
                }
                BatchLifecycle.fail(&sidecar, error)
            }
            item.carriedSidecars[position] = sidecar
        }
        // A borrowed share that is not attached goes (its original delivers the sidecar).
        for (position, sidecar) in item.carriedSidecars.enumerated()
        where sidecar.borrowed && sidecar.released && writing {
            if let copy = sidecar.copyPath(carriedBy: item, n: position + 1, root: context.container.root) {
                FileSystem.remove(copy)
            }
        }
        // What went from its attached sidecars is said on it too.
        for sidecar in item.carriedSidecars where sidecar.isAttached {
            for removed in sidecar.locationRemoved ?? [] where !(item.locationRemoved ?? []).contains(removed) {
                item.locationRemoved = (item.locationRemoved ?? []) + [removed]
            }
        }
        settled.changed = item.carriedSidecars.map(\.recorded) != before
        return settled
    }

    /// Reads the head of `sidecar`'s source and decides what it is (a sidecar
    /// by content stays as it is; a file that is none, or one larger than
    /// ``ExportSidecars/maximumSize``, is released, and named by its content),
    /// then copies it to its place (`writing`) or looks at the copy there.
    /// Returns its copy (none for an edited copy's share released).
    private static func deliver(
        _ sidecar: inout CarriedSidecar, n: Int, carriedBy media: ItemState, label: String, in context: BatchContext,
        writing: Bool
    ) throws(ItemFailure) -> String? {
        let source = sidecar.source(carriedBy: media)
        let path = source.path
        let (input, version): (FileDescriptor, FileVersion)
        let head: [UInt8]
        CrashPoint.hit("before-sidecar-copy:" + sidecar.name)
        do throws(CopyError) {
            (input, version) = try FileCopier.openSource(source, in: context.roots)
            // One read: no more than the file holds (a sidecar is often all in its head).
            let count = Int(min(Int64(ContentSniffer.prefixLength), version.size))
            do { head = try input.read(count: count, at: 0, path: label) } catch { throw CopyError.reading(error) }
        } catch {
            throw SniffStage.failure(error, path: label, stage: .copy)
        }
        if !sidecar.isFile,
            ExportSidecars.kind(name: sidecar.name, head: head) == nil || version.size > ExportSidecars.maximumSize
        {
            // No sidecar by its content: a file, identified as any other is.
            var read = InFlightItem(ItemState(index: sidecar.index, id: media.id, source: .file(source), label: label))
            read.size = version.size
            try SniffStage.identify(
                &read, prefix: head, continuation: nil, name: sidecar.name, label: label,
                rejectContradictions: context.pipeline.sniff.rejectContradictions)
            sidecar.isFile = true
            sidecar.sniffed = read.sniffed
            sidecar.warnings += read.warnings.filter { !sidecar.warnings.contains($0) }
            sidecar.release()
        }
        if sidecar.borrowed && sidecar.released { return nil }
        sidecar.copyPath = nil
        guard let copy = sidecar.copyPath(carriedBy: media, n: n, root: context.container.root) else { return nil }
        sidecar.copyPath = copy
        let delivered = sidecar.released
        if writing {
            let copied: Copied
            do throws(CopyError) {
                copied = try FileCopier.copyUnsynced(input, version: version, head: head, of: path, to: copy)
            } catch {
                throw SniffStage.failure(error, path: label, stage: .copy)
            }
            sidecar.size = copied.size
            sidecar.sha256 = delivered ? copied.sha256 : nil
        } else {
            guard let status = try? FileStatus.ofLink(copy), status.type == .regular else {
                throw ItemFailure(.copy, .io, "\(label): its copy \(copy) is not in the container")
            }
            sidecar.size = status.size
            if delivered, sidecar.sha256 == nil {
                do { sidecar.sha256 = try FileCopier.hash(of: copy) } catch {
                    throw ItemFailure(.copy, .io, "\(label): cannot read back its copy: \(error)")
                }
            }
        }
        return copy
    }
}
