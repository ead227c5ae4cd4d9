import Foundation
import Glibc
import MediaFormats
import Synchronization
import TestSupport
import Testing

@testable import DecoderIsolation

/// The pool's promises, through the library API: helpers are reused, replaced
/// when they die, and a timed-out decode is never run again.
@Suite struct HelperPoolTests {
    static func decoder(prestarted: Int = 1, fault: String? = nil) -> ProcessIsolatedDecoder {
        var configuration = ProcessIsolatedDecoder.Configuration(helperExecutable: Fixtures.helperBinary)
        configuration.prestartedHelpers = prestarted
        if let fault { configuration.environment["SHARE_TEST_HELPER_FAULT"] = fault }
        return ProcessIsolatedDecoder(configuration)
    }

    static func photo(_ label: String = "photo.jpg", timeLimit: Double = 30) -> DecodeRequest {
        DecodeRequest(
            path: Fixtures.media("photo.jpg"), label: label, format: .jpeg, timeLimit: timeLimit,
            thumbnail: ThumbnailSpec(timeLimit: timeLimit))
    }

    /// True while `pid` exists (a helper is reaped by the pool once it is gone).
    static func exists(_ pid: Int32) -> Bool { kill(pid, 0) == 0 }

    @Test func oneHelperServesManyItems() throws {
        let decoder = Self.decoder()
        defer { decoder.shutdown() }
        decoder.prepare()
        for index in 0..<5 {
            let decoded = try decoder.decode(Self.photo("photo-\(index).jpg"))
            #expect(decoded.facts.kind == .image && decoded.facts.width == 640)
            #expect(decoded.facts.warnings.isEmpty)
        }
        #expect(decoder.startedHelperCount == 1)
        #expect(decoder.helperProcessIDs.count == 1)
    }

    /// A location scan gets a helper that has decoded nothing else, and that
    /// helper serves nothing after it: the helper that decoded the batch's
    /// photo is never given the scans (it is still alive, and idle), and no
    /// helper that scanned is kept.
    @Test func privacyRequestsEachGetAHelperThatDecodedNothingElse() throws {
        let decoder = Self.decoder()
        defer { decoder.shutdown() }
        decoder.prepare()
        var photo = Self.photo()
        photo.batch = "batch-a"
        _ = try decoder.decode(photo)
        let served = decoder.helperProcessIDs
        try #require(served.count == 1)
        var scan = DecodeRequest(
            path: Fixtures.media("photo.jpg"), label: "photo.jpg", format: .jpeg, task: .locationMetadata)
        scan.batch = "batch-a"
        for _ in 0..<3 { #expect(try decoder.decode(scan).location != nil) }
        #expect(
            decoder.helperProcessIDs.contains(served[0]), "the photo's helper was given a scan (and discarded after it)"
        )
        #expect(
            decoder.helperBatches == [served[0]: "batch-a"], "a helper that scanned was kept: \(decoder.helperBatches)")
        #expect(decoder.startedHelperCount >= 4, "\(decoder.startedHelperCount) helpers for a photo and three scans")
        // And the photo's helper still serves its batch's next photo.
        _ = try decoder.decode(photo)
        #expect(decoder.helperProcessIDs.contains(served[0]))
    }

    /// Every helper has a hard CPU limit (its /proc/PID/limits shows soft and
    /// hard), and a helper that would not have a request's CPU budget left
    /// under it is retired before that request: with a 3 s limit and requests
    /// of a 2 s budget, each photo gets a fresh helper.
    @Test func helpersHaveAHardCPULimitAndAreRetiredBeforeTheyReachIt() throws {
        var configuration = ProcessIsolatedDecoder.Configuration(helperExecutable: Fixtures.helperBinary)
        configuration.prestartedHelpers = 1
        let decoder = ProcessIsolatedDecoder(configuration)
        defer { decoder.shutdown() }
        _ = try decoder.decode(Self.photo())
        let helper = try #require(decoder.helperProcessIDs.first)
        let limits = (try? String(contentsOfFile: "/proc/\(helper)/limits", encoding: .utf8)) ?? ""
        let line = limits.split(separator: "\n").first { $0.hasPrefix("Max cpu time") }.map(String.init) ?? ""
        // "Max cpu time   SOFT   HARD   seconds": the soft limit is the request's budget, the hard one the helper's.
        let fields = line.split(separator: " ", omittingEmptySubsequences: true)
        #expect(fields.count == 6 && fields[4] == "1800", "\(line)")

        var tight = ProcessIsolatedDecoder.Configuration(helperExecutable: Fixtures.helperBinary)
        tight.prestartedHelpers = 1
        tight.cpuLimit = 3
        let retiring = ProcessIsolatedDecoder(tight)
        defer { retiring.shutdown() }
        for index in 0..<3 { _ = try retiring.decode(Self.photo("photo-\(index).jpg", timeLimit: 0.5)) }
        #expect(
            retiring.startedHelperCount >= 3,
            "\(retiring.startedHelperCount) helpers for three photos under a 3 s CPU limit")
    }

    /// The parent process of `pid` (from /proc), or nil once it is gone.
    static func parent(of pid: Int32) -> Int32? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let fields = stat.split(separator: ")").last?.split(separator: " "), fields.count > 2
        else { return nil }
        return Int32(fields[1])
    }

    /// True once `pid` has exited (gone, or a zombie its new parent has not reaped yet).
    static func hasExited(_ pid: Int32) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let state = stat.split(separator: ")").last?.split(separator: " ").first
        else { return true }
        return state == "Z" || state == "X"
    }

    /// Waits (up to a minute) until `condition` holds.
    static func eventually(_ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(60)
        while !condition() {
            if Date() > deadline { return false }
            usleep(1_000)
        }
        return true
    }

    /// Helpers are forked from one template process that set the libraries up
    /// once (a child of this process, `decode-helper --template`), not started
    /// one by one; each still sandboxes itself.
    @Test func helpersAreForkedFromOneTemplate() throws {
        let decoder = Self.decoder(prestarted: 2)
        defer { decoder.shutdown() }
        decoder.prepare()
        let results = Mutex<[Int]>([])
        DispatchQueue.concurrentPerform(iterations: 4) { index in
            let width = (try? decoder.decode(Self.photo("photo-\(index).jpg")))?.facts.width ?? 0
            results.withLock { $0.append(width) }
        }
        #expect(results.withLock { $0 } == [640, 640, 640, 640])
        let helpers = decoder.helperProcessIDs
        #expect(!helpers.isEmpty)
        let templates = Set(helpers.compactMap { Self.parent(of: $0) })
        #expect(templates.count == 1, "helpers \(helpers) have parents \(templates)")
        let template = try #require(templates.first)
        let command = (try? String(contentsOfFile: "/proc/\(template)/cmdline", encoding: .utf8)) ?? ""
        #expect(command.split(separator: "\0").contains("--template"), "\(command)")
        #expect(Self.parent(of: template) == getpid())
        for helper in helpers {
            let status = (try? String(contentsOfFile: "/proc/\(helper)/status", encoding: .utf8)) ?? ""
            #expect(status.contains("NoNewPrivs:\t1"), "helper \(helper)")
            #expect(status.contains("Seccomp:\t2"), "helper \(helper)")
        }
    }

    /// The template starts libvips without its modules and loads them when a
    /// helper first needs one (no helper can load code once sandboxed): after a
    /// JPEG, a PDF's first page (poppler) and a JPEG XL (libjxl) get thumbnails
    /// from one helper forked with the modules, which also serves the JPEGs after them.
    @Test func helpersWithLibvipsModulesAreForkedWhenAFormatNeedsThem() throws {
        let decoder = Self.decoder()
        defer { decoder.shutdown() }
        decoder.prepare()
        _ = try decoder.decode(Self.photo())
        let first = try #require(decoder.helperProcessIDs.first)
        for (name, format) in [("document.pdf", MediaFormat.pdf), ("image.jxl", .jxl)] {
            let request = DecodeRequest(
                path: Fixtures.media(name), label: name, format: format, timeLimit: 30,
                thumbnail: ThumbnailSpec(timeLimit: 30))
            let decoded = try decoder.decode(request)
            guard case .made(let thumbnail) = decoded.thumbnail else {
                Issue.record("\(name): no thumbnail: \(String(describing: decoded.thumbnail))")
                continue
            }
            #expect(max(thumbnail.width, thumbnail.height) == 360, "\(name): \(thumbnail.width)×\(thumbnail.height)")
        }
        let withModules = try #require(decoder.helperProcessIDs.first)
        #expect(
            decoder.helperProcessIDs == [withModules] && withModules != first,
            "helpers: \(decoder.helperProcessIDs), first \(first)")
        #expect(Self.parent(of: withModules) != getpid(), "the helper was not forked from the template")
        _ = try decoder.decode(Self.photo("after.jpg"))
        #expect(decoder.helperProcessIDs == [withModules], "the helper with the modules did not serve the JPEG")
        #expect(decoder.startedHelperCount == 2)
    }

    /// When the template is killed, its helpers die with it (nothing is left
    /// behind), and the next item costs nothing: its helper is started on its own.
    @Test func killingTheTemplateCostsNoItem() throws {
        let decoder = Self.decoder()
        defer { decoder.shutdown() }
        decoder.prepare()
        _ = try decoder.decode(Self.photo())
        let helper = try #require(decoder.helperProcessIDs.first)
        let template = try #require(Self.parent(of: helper))
        #expect(template != getpid())
        #expect(kill(template, SIGKILL) == 0)
        #expect(Self.eventually { Self.hasExited(helper) }, "the helper outlived its template")
        let decoded = try decoder.decode(Self.photo("after-the-template.jpg"))
        guard case .made = decoded.thumbnail else {
            Issue.record("no thumbnail after the template was killed: \(String(describing: decoded.thumbnail))")
            return
        }
        #expect(decoded.facts.warnings.isEmpty)
        let replacement = try #require(decoder.helperProcessIDs.first)
        #expect(Self.parent(of: replacement) == getpid())
        #expect(decoder.startedHelperCount == 2)
    }

    /// Helpers started on demand (what `share ingest` uses, issue 59):
    /// `prepare()` starts nothing, so a batch that decodes nothing costs no
    /// helper; the first `willDecode()` of the batch starts the helpers prepared
    /// for (later ones start no more), and the decode uses one of them.
    @Test func onDemandHelpersStartOnlyWhenADecodeIsComing() throws {
        var configuration = ProcessIsolatedDecoder.Configuration(helperExecutable: Fixtures.helperBinary)
        configuration.prestartedHelpers = 2
        configuration.startsHelpersOnDemand = true
        let decoder = ProcessIsolatedDecoder(configuration)
        defer { decoder.shutdown() }
        decoder.prepare()
        #expect(decoder.startedHelperCount == 0 && decoder.helperProcessIDs.isEmpty)
        decoder.willDecode()
        decoder.willDecode()
        #expect(decoder.startedHelperCount == 2)
        let decoded = try decoder.decode(Self.photo())
        #expect(decoded.facts.kind == .image)
        #expect(decoder.startedHelperCount == 2)
        // A new batch: prepared for again, still nothing started until a decode is coming.
        decoder.prepare()
        #expect(decoder.startedHelperCount == 2)
    }

    /// Without `willDecode()` (a resumed item past its sniff), the decode starts its own helper.
    @Test func onDemandHelpersStartForADecodeUnannounced() throws {
        var configuration = ProcessIsolatedDecoder.Configuration(helperExecutable: Fixtures.helperBinary)
        configuration.startsHelpersOnDemand = true
        let decoder = ProcessIsolatedDecoder(configuration)
        defer { decoder.shutdown() }
        decoder.prepare()
        #expect(decoder.startedHelperCount == 0)
        #expect(try decoder.decode(Self.photo()).facts.kind == .image)
        #expect(decoder.startedHelperCount == 1)
    }

    /// What is checked without starting a helper (before `share ingest`
    /// records its batch): a missing helper executable, with the same message
    /// a helper start gives.
    @Test func aMissingHelperIsFoundWithoutStartingOne() throws {
        let missing = "/nonexistent/share-helper"
        let decoder = ProcessIsolatedDecoder(helperExecutable: missing)
        let error = #expect(throws: MediaError.self) { try decoder.checkWithoutStarting() }
        #expect(
            error?.message.contains("the decoder helper \(missing) is missing") == true, "\(String(describing: error))")
        #expect(decoder.startedHelperCount == 0)
        let present = ProcessIsolatedDecoder(helperExecutable: Fixtures.helperBinary)
        #expect(throws: Never.self) { try present.checkWithoutStarting() }
        #expect(present.startedHelperCount == 0)
    }

    /// An idle helper killed from outside is replaced; the next item costs nothing.
    @Test func helperKilledWhileIdleIsReplacedAtNoCost() throws {
        let decoder = Self.decoder()
        defer { decoder.shutdown() }
        decoder.prepare()
        _ = try decoder.decode(Self.photo())
        let first = try #require(decoder.helperProcessIDs.first)
        // Killed while idle, just before the next request is sent (or while it is).
        #expect(kill(first, SIGKILL) == 0)
        let decoded = try decoder.decode(Self.photo("after-the-kill.jpg"))
        guard case .made = decoded.thumbnail else {
            Issue.record("no thumbnail after the kill: \(String(describing: decoded.thumbnail))")
            return
        }
        #expect(decoded.facts.warnings.isEmpty)
        #expect(!decoder.helperProcessIDs.contains(first))
        #expect(!Self.exists(first))
        #expect(decoder.startedHelperCount == 2)
    }

    /// A decode that overruns its time is stopped by the parent (the helper is
    /// killed) and reported as timeLimit, and it is not run again: exactly one
    /// helper was used for it. The next item gets a fresh helper.
    @Test func timedOutDecodeIsStoppedAndNeverRunAgain() throws {
        let decoder = Self.decoder(fault: "loop:endless.jpg")
        defer { decoder.shutdown() }
        decoder.prepare()
        let started = Date()
        do {
            _ = try decoder.decode(Self.photo("endless.jpg", timeLimit: 0.5))
            Issue.record("an endless decode returned")
        } catch {
            #expect(error.kind == .timeLimit, "\(error)")
            #expect(error.message.contains("endless.jpg"), "\(error)")
        }
        #expect(Date().timeIntervalSince(started) < 60)
        #expect(decoder.startedHelperCount == 1, "the timed-out decode ran in \(decoder.startedHelperCount) helpers")
        #expect(decoder.helperProcessIDs.isEmpty)
        let decoded = try decoder.decode(Self.photo("next.jpg"))
        #expect(decoded.facts.width == 640)
        #expect(decoder.startedHelperCount == 2)
    }

    /// A file that crashes the decoder is tried in a second, fresh helper and
    /// then fails alone, naming the signal.
    @Test func crashingFileFailsAloneAfterOneRetry() throws {
        let decoder = Self.decoder(fault: "segv:poison.jpg")
        defer { decoder.shutdown() }
        decoder.prepare()
        do {
            _ = try decoder.decode(
                DecodeRequest(path: Fixtures.media("photo.jpg"), label: "drop/poison.jpg", format: .jpeg))
            Issue.record("a crashing decode returned")
        } catch {
            #expect(error.kind == .decoderCrashed)
            #expect(error.message.contains("SIGSEGV"), "\(error)")
            #expect(error.message.contains("drop/poison.jpg"), "\(error)")
        }
        #expect(decoder.startedHelperCount == 2)
        let decoded = try decoder.decode(Self.photo("healthy.jpg"))
        #expect(decoded.facts.width == 640)
    }

    /// A helper executable that is not `share` fails the item with a reason that
    /// names it, and later items at once, without starting helpers for each.
    @Test func executableThatCannotRunHelpersFailsFast() throws {
        var configuration = ProcessIsolatedDecoder.Configuration(helperExecutable: "/bin/false")
        configuration.prestartedHelpers = 0
        let decoder = ProcessIsolatedDecoder(configuration)
        defer { decoder.shutdown() }
        for index in 0..<2 {
            do {
                _ = try decoder.decode(Self.photo("photo-\(index).jpg"))
                Issue.record("decoded without a helper")
            } catch {
                #expect(error.kind == .decoderCrashed)
                #expect(
                    error.message.contains("photo-\(index).jpg") && error.message.contains("/bin/false"), "\(error)")
            }
        }
        #expect(decoder.startedHelperCount == 3, "helpers started: \(decoder.startedHelperCount)")
    }

    /// Helpers keep librsvg and ImageMagick blocked (and start faster); an SVG is
    /// decoded by a helper started with them, which then serves other items too.
    @Test func svgGoesToAHelperWithItsLoaders() throws {
        let decoder = Self.decoder()
        defer { decoder.shutdown() }
        decoder.prepare()
        _ = try decoder.decode(Self.photo())
        #expect(decoder.startedHelperCount == 1)
        let scratch = TemporaryDirectory("svg")
        let svg = try scratch.add(
            "drawing.svg",
            bytes: Array(
                #"<svg xmlns="http://www.w3.org/2000/svg" width="200" height="100"><rect width="200" height="100" fill="red"/></svg>"#
                    .utf8))
        let decoded = try decoder.decode(
            DecodeRequest(path: svg, label: "drawing.svg", format: .svg, thumbnail: ThumbnailSpec()))
        guard case .made(let thumbnail) = decoded.thumbnail else {
            Issue.record("no SVG thumbnail: \(String(describing: decoded.thumbnail))")
            return
        }
        #expect(thumbnail.width == 200 && thumbnail.height == 100)
        #expect(decoder.startedHelperCount == 2)
        for index in 0..<3 { _ = try decoder.decode(Self.photo("after-\(index).jpg")) }
        _ = try decoder.decode(DecodeRequest(path: svg, label: "again.svg", format: .svg, thumbnail: ThumbnailSpec()))
        #expect(decoder.startedHelperCount == 2)
    }
}

/// Helpers never outlive their batch, and every reply is checked: what a user
/// of the library sees when requests of several batches interleave (as in
/// `share worker`), when a new batch starts (`share watch`), and when a helper
/// lies in its reply (test faults `forge-*`: a taken-over decoder).
@Suite struct HelperBatchTests {
    static func request(_ label: String = "photo.jpg", batch: String?) -> DecodeRequest {
        DecodeRequest(
            path: Fixtures.media("photo.jpg"), label: label, format: .jpeg, thumbnail: ThumbnailSpec(), batch: batch)
    }

    /// Requests of three batches, interleaved on two callers: each helper only
    /// ever serves the batch of its first request, and a batch's next request
    /// finds its helper again.
    @Test func aHelperServesOnlyTheBatchOfItsFirstRequest() throws {
        let decoder = HelperPoolTests.decoder(prestarted: 2)
        defer { decoder.shutdown() }
        decoder.prepare()
        var served: [Int32: Set<String?>] = [:]
        for round in 0..<3 {
            DispatchQueue.concurrentPerform(iterations: 2) { caller in
                let batch = ["A", "B", "C"][(round + caller) % 3]
                do {
                    let decoded = try decoder.decode(Self.request("\(batch)-\(round).jpg", batch: batch))
                    #expect(decoded.facts.width == 640, "batch \(batch), round \(round)")
                } catch {
                    Issue.record("batch \(batch), round \(round): \(error)")
                }
            }
            for (pid, batch) in decoder.helperBatches { served[pid, default: []].insert(batch) }
        }
        #expect(!served.isEmpty)
        for (pid, batches) in served { #expect(batches.count == 1, "helper \(pid) served batches \(batches)") }
        #expect(Set(served.values.flatMap { $0 }) == ["A", "B", "C"])
    }

    /// `prepare()` starts a batch: the idle helpers that served earlier batches
    /// are stopped, and the next batch gets fresh ones.
    @Test func aNewBatchGetsFreshHelpers() throws {
        let decoder = HelperPoolTests.decoder(prestarted: 1)
        defer { decoder.shutdown() }
        decoder.prepare()
        _ = try decoder.decode(Self.request(batch: "first"))
        let first = try #require(decoder.helperBatches.first { $0.value == "first" }?.key)
        decoder.prepare()
        #expect(!decoder.helperProcessIDs.contains(first), "the first batch's helper is still there")
        #expect(
            HelperPoolTests.eventually { HelperPoolTests.hasExited(first) }, "the first batch's helper is still running"
        )
        _ = try decoder.decode(Self.request(batch: "second"))
        let second = try #require(decoder.helperBatches.first { $0.value == "second" }?.key)
        #expect(second != first)
    }

    /// A reply that lies fails its item with `decoderMisbehaved`, saying what
    /// the parent refused; the helper that sent it is stopped, and the next item
    /// is decoded by a fresh one. Each lie is one test fault.
    @Test(arguments: [
        ("forge-facts", "a size of 100000×100000 pixels, over the pixel limit"),
        ("forge-duration", "a duration of -1.0 ms"),
        ("forge-mime", "the unknown MIME type \"application/x-share-forged\""),
        ("forge-jpeg", "thumbnail bytes that are not a JPEG"),
        ("forge-size", "a 3600×2700 thumbnail where at most 360 pixels were asked for"),
        ("forge-aspect", "a 270×360 thumbnail of a 640×480 picture"),
        ("forge-compatible", "a 1280×960 compatible copy of a 640×480 picture (not its full size)"),
        ("forge-location", "an overwrite of 8 bytes at -4 in step 0"),
    ])
    func aLyingReplyFailsItsItemAndStopsItsHelper(fault: String, refusal: String) throws {
        let decoder = HelperPoolTests.decoder(fault: "\(fault):liar.jpg")
        defer { decoder.shutdown() }
        decoder.prepare()
        var request = Self.request("drop/liar.jpg", batch: "b")
        switch fault {
        case "forge-compatible":
            // A HEIC's compatible copy, as the compatible stage asks for it.
            request = DecodeRequest(
                path: Fixtures.media("image.heic"), label: "drop/liar.jpg", format: .heic, batch: "b",
                compatibleCopy: CompatibleCopySpec())
        case "forge-location":
            request = DecodeRequest(
                path: Fixtures.privacy("exif-xmp-gps.jpg"), label: "drop/liar.jpg", format: .jpeg, batch: "b",
                task: .locationMetadata)
        default: break
        }
        do {
            _ = try decoder.decode(request)
            Issue.record("\(fault): a lying reply was accepted")
        } catch {
            #expect(error.kind == .decoderMisbehaved, "\(fault): \(error)")
            #expect(error.message.hasPrefix("drop/liar.jpg: the decoder helper (pid "), "\(error)")
            #expect(error.message.contains(refusal), "\(fault): \(error)")
            #expect(error.message.hasSuffix("which the parent's checks refuse; it was stopped"), "\(error)")
        }
        #expect(decoder.helperProcessIDs.isEmpty, "the lying helper is still there")
        let decoded = try decoder.decode(Self.request("honest.jpg", batch: "b"))
        #expect(decoded.facts.width == 640 && decoded.facts.mimeType == nil)
        #expect(decoder.startedHelperCount == 2)
    }
}
