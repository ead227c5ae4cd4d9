import Foundation
import Glibc
import MediaKit

/// Runs one batch through the pipeline's stages.
///
/// Each item stage has its own worker threads (the pipeline's `workers`), fed
/// by a bounded queue from the stage before it; a feeder thread walks the
/// inputs into the first queue and the calling thread collects finished items.
/// The manifest is written once, after the last item, and only then.
final class BatchRunner: @unchecked Sendable {
    let pipeline: PipelineDefinition
    let container: ContainerDirectory
    let events: IngestEventSink?
    let cancellation: CancellationFlag
    let stages: [any ItemStage]
    let manifestStage: ManifestStage

    init(pipeline: PipelineDefinition, container: ContainerDirectory, events: IngestEventSink?, cancellation: CancellationFlag) {
        self.pipeline = pipeline
        self.container = container
        self.events = events
        self.cancellation = cancellation
        var stages: [any ItemStage] = [SniffStage(settings: pipeline.sniff), CopyStage(settings: pipeline.copy)]
        if let probe = pipeline.probe {
            let videoThumbnails = pipeline.thumbnail?.kinds.contains(.video) ?? false
            let imageThumbnails = pipeline.thumbnail?.kinds.contains(.image) ?? false
            stages.append(ProbeStage(settings: probe, keepVideoOpen: videoThumbnails || imageThumbnails))
        }
        if let thumbnail = pipeline.thumbnail { stages.append(ThumbnailStage(settings: thumbnail)) }
        self.stages = stages
        self.manifestStage = ManifestStage(settings: pipeline.manifest)
    }

    func run(_ inputs: [ShareInput], key: ShareKey, message: String?, batchID: UUID) throws(ShareIngestError) -> BatchReport {
        let started = MonotonicClock.now()
        let store = ManifestStore(container: container)
        if store.exists(key) { throw .manifestExists(key: key, path: container.manifestPath(key: key)) }
        try Self.checkInputs(inputs)
        if pipeline.probe != nil || pipeline.thumbnail != nil {
            do { try Vips.start() } catch { throw .containerUnusable(path: container.root, reason: "libvips failed to start: \(error)") }
        }
        let context = BatchContext(batchID: batchID, container: container, pipeline: pipeline, message: message, cancellation: cancellation)
        events?(.batchStarted(batchID: batchID, key: key))

        // Queues: one in front of each stage, and one for finished items.
        let queues = stages.map { BlockingQueue<ItemWork>(capacity: 2 * pipeline.workers(for: $0.name)) }
        let finished = BlockingQueue<ItemWork>(capacity: 64)
        var joins: [@Sendable () -> Void] = []
        joins.append(WorkerThreads.start(name: "feed", count: 1) { [self] _ in
            feed(inputs, into: queues[0], finished: finished)
        })
        for (position, stage) in stages.enumerated() {
            let next = position + 1 < queues.count ? queues[position + 1] : finished
            let workers = pipeline.workers(for: stage.name)
            let remaining = RemainingWorkers(workers)
            joins.append(WorkerThreads.start(name: stage.name.rawValue, count: workers) { [self] _ in
                work(stage, from: queues[position], to: next, failed: finished, context: context)
                if stage.name == .probe || stage.name == .thumbnail { Vips.threadShutdown() }
                if remaining.leave() { next.close() }
            })
        }

        var items: [ItemWork] = []
        while let item = finished.pop() {
            if item.failure != nil { removeFiles(of: item) }
            events?(.itemFinished(report(for: item, message: message)))
            // Keep only what the manifest needs; the open media was closed by its stage.
            item.media = nil
            items.append(item)
        }
        for join in joins { join() }
        items.sort { $0.index < $1.index }
        return finish(items, key: key, message: message, batchID: batchID, started: started)
    }

    /// Bad command-line paths are refused before anything starts.
    static func checkInputs(_ inputs: [ShareInput]) throws(ShareIngestError) {
        guard !inputs.isEmpty else { throw .noInputs }
        for case .path(let path) in inputs {
            var st = stat()
            guard stat(path, &st) == 0 else {
                throw .inputMissing(path: path, reason: String(cString: strerror(errno)))
            }
        }
    }

    // MARK: - Threads

    private func feed(_ inputs: [ShareInput], into first: BlockingQueue<ItemWork>, finished: BlockingQueue<ItemWork>) {
        var index = 0
        func emit(_ source: ItemSource, failure: ItemFailure? = nil) {
            let item = ItemWork(index: index, source: source)
            index += 1
            if let failure {
                item.failure = failure
                finished.push(item)
            } else {
                first.push(item)
            }
        }
        outer: for input in inputs {
            switch input {
            case .text(let text): emit(.text(text))
            case .url(let url): emit(.url(url))
            case .data(let data, let name): emit(.data(data, name: name))
            case .path(let path):
                let source = SourcePath(path)
                var st = stat()
                if stat(path, &st) == 0, st.st_mode & S_IFMT == S_IFDIR {
                    for entry in DropWalker(root: source) {
                        if cancellation.isCancelled { break outer }
                        switch entry {
                        case .file(let file, let shownAs, let name): emit(.file(SourceFile(file, shownAs: shownAs, name: name)))
                        case .skipped(let file, let failure): emit(.file(SourceFile(file, name: SourcePath.displayName(file.lastComponent))), failure: failure)
                        }
                    }
                } else {
                    // A file named on the command line: the user chose it, so a symbolic link is followed.
                    emit(.file(SourceFile(source.resolved() ?? source, shownAs: source, name: SourcePath.displayName(source.lastComponent))))
                }
            }
            if cancellation.isCancelled { break }
        }
        first.close()
    }

    private func work(_ stage: any ItemStage, from input: BlockingQueue<ItemWork>, to output: BlockingQueue<ItemWork>, failed: BlockingQueue<ItemWork>, context: BatchContext) {
        while let item = input.pop() {
            if cancellation.isCancelled {
                item.failure = ItemFailure(stage.name, .cancelled, "\(item.source.label): cancelled before \(stage.name.rawValue)")
                failed.push(item)
                continue
            }
            let start = MonotonicClock.now()
            do throws(ItemFailure) {
                try stage.process(item, in: context)
            } catch {
                item.failure = error
            }
            item.stageSeconds[stage.name] = MonotonicClock.now() - start
            events?(.stageFinished(stage.name, index: item.index, bytes: stage.name == .copy ? item.size ?? 0 : 0))
            if item.failure != nil {
                item.media = nil
                failed.push(item)
            } else {
                output.push(item)
            }
        }
    }

    // MARK: - Fan-in

    private func finish(_ items: [ItemWork], key: ShareKey, message: String?, batchID: UUID, started: Double) -> BatchReport {
        let hasFiles = items.contains { $0.failure == nil && $0.isFileLike }
        for item in items where item.failure == nil {
            item.failure = manifestStage.unsupportedBySchema(item, batchHasFiles: hasFiles)
        }
        var manifestPath: String?
        var redirect: RedirectURL?
        let delivered = items.filter { $0.failure == nil }
        let manifestStart = MonotonicClock.now()
        if cancellation.isCancelled {
            // An interrupted batch is never half-delivered: no manifest, no files left behind.
            for item in items where item.failure == nil {
                item.failure = ItemFailure(.manifest, .cancelled, "\(item.source.label): batch interrupted before its manifest was written")
            }
            for item in items { removeFiles(of: item) }
        } else if !delivered.isEmpty {
            do {
                let written = try manifestStage.write(delivered.map { manifestStage.entry(for: $0, message: message) }, key: key, container: container)
                manifestPath = written.path
                redirect = written.redirect
            } catch {
                let reason: ItemFailure.Reason = error.isDiskFull ? .diskFull : .io
                for item in delivered {
                    item.failure = ItemFailure(.manifest, reason, "\(item.source.label): the manifest could not be written: \(error)")
                    removeFiles(of: item)
                }
            }
        }
        let manifestSeconds = MonotonicClock.now() - manifestStart
        let reports = items.map { report(for: $0, message: message) }
        var totals: [StageName: Double] = [:]
        for item in items { totals.merge(item.stageSeconds, uniquingKeysWith: +) }
        totals[.manifest] = manifestSeconds
        let batch = BatchReport(
            batchID: batchID, key: key, redirectURL: redirect, manifestPath: manifestPath, schema: pipeline.manifest.schema,
            pipeline: pipeline.name, items: reports, stageSeconds: totals, wallSeconds: MonotonicClock.now() - started)
        // The report is kept beside the manifest for `share report` and `share status`;
        // losing it costs no item, so a failure to write it is not the batch's failure.
        try? AtomicFile.create(container.reportPath(key: key), bytes: batch.json(), syncDirectory: false)
        events?(.batchFinished(batch))
        return batch
    }

    private func report(for item: ItemWork, message: String?) -> ItemReport {
        let status: ItemStatus
        switch item.failure?.reason {
        case nil: status = .ingested
        case .notRegularFile, .symbolicLink, .tooDeep, .unsupportedBySchema: status = .skipped
        default: status = .failed
        }
        return ItemReport(
            index: item.index, source: item.source.label, status: status, failure: item.failure, warnings: item.warnings,
            entry: item.failure == nil ? manifestStage.entry(for: item, message: message) : nil,
            id: item.copyPath != nil ? item.id : nil, stageSeconds: item.stageSeconds)
    }

    private func removeFiles(of item: ItemWork) {
        for path in item.ownedFiles { FileSystem.remove(path) }
        item.copyPath = nil
        item.thumbnailPath = nil
    }
}

/// Counts down stage workers; the last one to leave closes the next queue.
final class RemainingWorkers: @unchecked Sendable {
    private let lock = NSLock()
    private var count: Int

    init(_ count: Int) { self.count = count }

    /// True for the last worker.
    func leave() -> Bool {
        lock.lock()
        defer { lock.unlock() }
        count -= 1
        return count == 0
    }
}
