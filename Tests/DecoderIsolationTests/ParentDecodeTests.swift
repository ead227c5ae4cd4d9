import Foundation
import Glibc
import TestSupport
import Testing

/// Finding 4 of issue 51: `share report --contact-sheet` and `share watch
/// --report-dir` decoded the thumbnails in the `share` process (libvips'
/// `vips_thumbnail`), whose bytes a taken-over helper chose. Now each tile is
/// decoded to pixels in a sandboxed helper and the parent only composes.
/// Shown for real: `share` runs under gdb with a breakpoint on libjpeg's
/// `jpeg_read_header`, which every JPEG decode calls, in the parent process
/// and its threads only (forked children, the template and its helpers, are
/// detached); each hit prints a line. The same harness on `--isolation none`
/// (which decodes in-process) counts hits, so it does see decodes.
@Suite(.serialized) struct ParentDecodeTests {
    static let marker = "share-parent-decode"

    /// `share ARGUMENTS` under gdb: its exit status, its output and gdb's, and
    /// how many times the parent called `jpeg_read_header`.
    static func underGDB(_ arguments: [String], in work: TemporaryDirectory, executable: String = Fixtures.shareBinary)
        throws -> (
            status: Int32, output: String, decodes: Int
        )
    {
        let script = work.file("gdb.commands")
        try """
        set breakpoint pending on
        set detach-on-fork on
        set follow-fork-mode parent
        set pagination off
        break jpeg_read_header
        commands
        silent
        printf "\(marker)\\n"
        continue
        end
        run
        quit $_exitcode
        """.write(toFile: script, atomically: true, encoding: .utf8)
        let process = Process()
        // gdb waits for its inferior with SIGCHLD unblocked only as far as the
        // mask it was started with allows: a test runner's thread may block
        // it, so gdb is started with an empty mask.
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments =
            [
                "-c",
                "import os, signal, sys; signal.pthread_sigmask(signal.SIG_SETMASK, []); os.execv(sys.argv[1], sys.argv[1:])",
                "/usr/bin/gdb", "-q", "-batch", "-nx", "-x", script, "--args", executable,
            ] + arguments
        let output = work.file("gdb.out")
        FileManager.default.createFile(atPath: output, contents: nil)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: output))
        process.standardOutput = handle
        process.standardError = handle
        process.standardInput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        try handle.close()
        let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        return (process.terminationStatus, text, text.components(separatedBy: marker + "\n").count - 1)
    }

    static func drop(in work: TemporaryDirectory, at path: String) throws {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        for name in ["photo.jpg", "cmyk.jpg", "portrait-exif6.jpg"] {
            try FileManager.default.copyItem(atPath: Fixtures.media(name), toPath: path + "/" + name)
        }
    }

    @Test(
        .enabled(
            if: FileManager.default.isExecutableFile(atPath: "/usr/bin/gdb")
                && FileManager.default.isExecutableFile(atPath: "/usr/bin/djpeg"),
            "needs gdb and djpeg (scripts/setup.sh installs them)"))
    func theParentDecodesNoThumbnailForAContactSheet() throws {
        let work = TemporaryDirectory("parent-decode")
        let container = work.file("container")
        try Self.drop(in: work, at: work.file("drop"))
        let ingest = try ShareProcess.run([
            "ingest", "--quiet", "--container", container, "--report", work.file("report.json"), work.file("drop"),
        ])
        #expect(ingest.status == 0, "\(ingest.stderr)")
        let report = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: work.file("report.json"))))
                as? [String: Any])
        let key = try #require(report["key"] as? String)

        // share report --contact-sheet: three tiles, none decoded here.
        let sheet = work.file("sheet.jpg")
        let drawn = try Self.underGDB(["report", key, "--container", container, "--contact-sheet", sheet], in: work)
        #expect(drawn.status == 0 && drawn.output.contains("contact sheet: 3 tiles"), "\(drawn.output)")
        #expect(drawn.decodes == 0, "the parent decoded \(drawn.decodes) JPEG(s): \(drawn.output)")
        // The tiles are the thumbnails (the helper's pixels), not placeholders:
        // photo.jpg's red corner mark in the second tile.
        let mark = try ImageInspector.pixel(sheet, x: 226, y: 74)
        #expect(ImageInspector.isRed(mark), "\(mark)")

        // share watch --report-dir: the page and the sheet, none decoded here.
        let inbox = work.file("inbox")
        try Self.drop(in: work, at: inbox + "/first")
        let watched = try Self.underGDB(
            [
                "watch", inbox, "--once", "--settle", "0", "--container", work.file("watched"), "--report-dir",
                work.file("pictures"),
            ], in: work)
        #expect(watched.status == 0, "\(watched.output)")
        #expect(watched.decodes == 0, "the watcher decoded \(watched.decodes) JPEG(s) itself: \(watched.output)")
        let pictures = (try? FileManager.default.contentsOfDirectory(atPath: work.file("pictures"))) ?? []
        #expect(
            pictures.filter { $0.hasSuffix(".jpg") }.count == 1 && pictures.filter { $0.hasSuffix(".html") }.count == 1,
            "\(pictures)")

        // The harness sees decodes where there are some. (`share --isolation none`
        // decoded in-process until issue 59; `share` decodes nowhere now, so
        // the control is libjpeg-turbo's own djpeg on the same photos.)
        for name in ["photo.jpg", "cmyk.jpg", "portrait-exif6.jpg"] {
            let control = try Self.underGDB(
                ["-outfile", "/dev/null", Fixtures.media(name)], in: work, executable: "/usr/bin/djpeg")
            #expect(
                control.status == 0 && control.decodes >= 1,
                "\(name): \(control.decodes) decodes seen: \(control.output)")
        }
    }
}
