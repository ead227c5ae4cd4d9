import DecoderIsolation
import Foundation
import ShareIngestCore
import ShareManifest
import SystemCalls

/// `share report`: a batch as an HTML page and/or a contact sheet JPEG, from the
/// report the batch left in the container; without either, a text summary on stdout.
enum ReportCommand {
    static func run(_ arguments: ArraySlice<String>) -> ExitStatus {
        let spec = CommandTable.report
        let parsed: Arguments
        switch Command.parse(arguments, spec) {
        case .success(let arguments): parsed = arguments
        case .failure(let exit): return exit.status
        }
        let batch = parsed.positionals[0]
        let htmlPath = parsed.value("html")
        let sheetPath = parsed.value("contact-sheet")
        if let sheetPath, !["jpg", "jpeg"].contains((sheetPath as NSString).pathExtension.lowercased()) {
            return Command.usageFailure(
                "--contact-sheet writes a JPEG; name the file .jpg or .jpeg, not \(sheetPath)", spec)
        }
        let container: ContainerDirectory
        let report: BatchReport
        do {
            container = try Command.existingContainer(parsed)
        } catch {
            return Command.failure(error)
        }
        do {
            report = try BatchReport.stored(batch, in: container)
        } catch {
            if error.isUsageMistake { return Command.usageFailure(error.description, spec) }
            return Command.failure("\(error)", .noInput)
        }
        guard htmlPath != nil || sheetPath != nil else {
            // Each line escaped: sources and messages come from outside.
            report.summarize(Terminal.shared.text)
            return .success
        }

        var status = ExitStatus.success
        // An output whose folder is missing is reported and left; the other is still made.
        let html = htmlPath.flatMap { writable($0) ? $0 : nil }
        let drawsSheet = sheetPath.map(writable) ?? false
        if (htmlPath != nil && html == nil) || (sheetPath != nil && !drawsSheet) { status = .cannotCreate }
        // One pass over the items for both outputs: each item read once; the
        // sheet's thumbnails decoded to pixels, and the sheet drawn, in sandboxed helpers (started
        // only for a sheet: this process decodes and draws nothing).
        let decoder = DecoderOption.helpers()
        defer { decoder.shutdown() }
        let outputs = report.writeOutputs(in: container, html: html, sheet: drawsSheet, decoder: decoder)
        if let htmlPath = html, let page = outputs.page {
            switch page {
            case .success(let page):
                Terminal.shared.err(
                    "share: page: \(report.items.count) items, \(page.embeddedThumbnailCount) thumbnails embedded")
                for name in page.missingThumbnails {
                    Terminal.shared.err("share: warning: \(name): thumbnail missing from the container")
                }
                Terminal.shared.out(htmlPath)
            case .failure(let error):
                Terminal.shared.err("share: cannot write \(htmlPath): \(error)")
                status = .cannotCreate
            }
        }
        if let sheetPath, let drawn = outputs.sheet {
            switch drawn {
            case .success(let sheet):
                if write(Data(sheet.jpeg), to: sheetPath) {
                    var line =
                        "share: contact sheet: \(sheet.tileCount) tiles, \(sheet.columns)×\(sheet.rows) grid, \(sheet.width)×\(sheet.height) px"
                    if sheet.omittedCount > 0 {
                        line += "; \(sheet.omittedCount) more items not shown (at most \(sheet.tileCount) tiles)"
                    }
                    Terminal.shared.err(line)
                    Terminal.shared.out(sheetPath)
                } else {
                    status = .cannotCreate
                }
            case .failure(let error):
                Terminal.shared.err("share: cannot draw the contact sheet: \(error)")
                status = .cannotCreate
            }
        }
        return status
    }

    /// True when `path`'s folder exists; reports it on stderr otherwise.
    private static func writable(_ path: String) -> Bool {
        let folder = (path as NSString).deletingLastPathComponent
        if !folder.isEmpty, (try? FileStatus.of(folder))?.type != .directory {
            Terminal.shared.err("share: cannot write \(path): \(folder) is not a folder")
            return false
        }
        return true
    }

    /// Replaces `path` atomically, with the umask's mode (0666 less it: a
    /// sheet is for people to open); reports a failure on stderr.
    private static func write(_ data: Data, to path: String) -> Bool {
        guard writable(path) else { return false }
        do throws(SystemError) {
            try AtomicFile.replace(path, bytes: data, mode: 0o666)
            return true
        } catch {
            Terminal.shared.err("share: cannot write \(path): \(error)")
            return false
        }
    }
}
