import Foundation
import TestSupport
import Testing

/// Location privacy (issue 24, the pipeline's `location` stage) as a user sees
/// it: real phone files (an iPhone 6 JPEG, a Pixel 8 Pro JPEG, an iPhone 7
/// HEIC) and faithful ones where none can be committed (an iPhone's MOV keys) go
/// through `share ingest` and `ingest --db` with a real `share worker`, and
/// exiftool finds no location left in the copies, the same capture date and
/// orientation as the source, the same decoded pixels and sound; the source is
/// untouched and the report says what was removed.
@Suite(.serialized) struct LocationPrivacyTests {
    /// A fixture and what the report must say was removed from it.
    struct Sample {
        let name: String
        let source: String
        /// Beginnings of the report's `locationRemoved` entries, each of which must be there.
        let removed: [String]
        let video: Bool
        /// Whether vips (or ffmpeg) decodes it, so its pixels can be compared (not a RAF's or a CR3's).
        var decodes = true
        /// Whether `exiftool -v3` shows its location's bytes (not those of an MPF image's: its test looks for them itself).
        var bytesShown = true
    }

    static let samples: [Sample] = [
        // Real phone files.
        Sample(
            name: "iphone6.jpg", source: Fixtures.privacy("iphone6-gps.jpg"),
            removed: ["EXIF GPS (GPSLatitudeRef, GPSLatitude"], video: false),
        Sample(
            name: "pixel8pro.jpg", source: Fixtures.privacy("exiftool-pixel8pro.jpg"),
            removed: ["EXIF GPS (GPSVersionID"], video: false),
        Sample(
            name: "iphone7.heic", source: Fixtures.privacy("iphone7-gps.heic"), removed: ["EXIF GPS (GPSLatitudeRef"],
            video: false),
        // Written by exiftool, ffmpeg and privacy-edit.py as phones and tools write them.
        Sample(
            name: "iphone.mov", source: Fixtures.privacy("keys-iso6709.mov"),
            removed: ["QuickTime com.apple.quicktime.location.ISO6709"], video: true),
        Sample(
            name: "exif-xmp.jpg", source: Fixtures.privacy("exif-xmp-gps.jpg"),
            removed: ["EXIF GPS", "XMP exif:GPSLatitude", "XMP exif:GPSLongitude", "XMP exif:GPSAltitude"], video: false
        ),
        Sample(name: "portrait.jpg", source: Fixtures.privacy("exif6-gps.jpg"), removed: ["EXIF GPS"], video: false),
        Sample(
            name: "photo.png", source: Fixtures.privacy("gps.png"),
            removed: ["EXIF (PNG eXIf) GPS", "XMP (PNG iTXt) exif:GPSLatitude"], video: false),
        Sample(
            name: "photo.webp", source: Fixtures.privacy("gps.webp"),
            removed: ["EXIF (WebP) GPS", "XMP (WebP) exif:GPSLatitude"], video: false),
        Sample(
            name: "photo.avif", source: Fixtures.privacy("gps.avif"), removed: ["EXIF GPS", "XMP exif:GPSLatitude"],
            video: false),
        Sample(
            name: "photo.jxl", source: Fixtures.privacy("gps.jxl"),
            removed: ["EXIF (JPEG XL) GPS", "XMP (JPEG XL) exif:GPSLatitude"], video: false),
        Sample(
            name: "android.mp4", source: Fixtures.privacy("android-xyz.mp4"), removed: ["QuickTime ©xyz"], video: true),
        Sample(
            name: "quicktime.mov", source: Fixtures.privacy("quicktime-xyz.mov"), removed: ["QuickTime ©xyz"],
            video: true),
        Sample(name: "3gpp.mp4", source: Fixtures.privacy("loci.mp4"), removed: ["MP4 loci"], video: true),
    ]

    /// A pipeline file: `default`'s stages, with the location stage (and the
    /// compatible stage) when asked, and the duplicates policy.
    static func pipeline(
        in directory: TemporaryDirectory, location: Bool = true, compatible: Bool = false, duplicates: String = "keep"
    ) throws -> String {
        var stages = [#"{"stage": "sniff"}"#, #"{"stage": "copy"}"#]
        if location { stages.append(#"{"stage": "location"}"#) }
        stages += [#"{"stage": "probe"}"#, #"{"stage": "thumbnail"}"#]
        if compatible { stages.append(#"{"stage": "compatible"}"#) }
        stages.append(#"{"stage": "manifest", "duplicates": "\#(duplicates)"}"#)
        let path = directory.file("pipeline-\(location)-\(compatible)-\(duplicates).json")
        try Data(#"{"name": "privacy-test", "stages": [\#(stages.joined(separator: ", "))]}"#.utf8).write(
            to: URL(fileURLWithPath: path))
        return path
    }

    /// A drop of the samples (and of `extra` files: name → source).
    static func makeDrop(at folder: String, extra: [String: String] = [:]) throws {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        for sample in samples {
            try FileManager.default.copyItem(atPath: sample.source, toPath: folder + "/" + sample.name)
        }
        for (name, source) in extra { try FileManager.default.copyItem(atPath: source, toPath: folder + "/" + name) }
    }

    /// The report's items by file name.
    static func reportItems(_ path: String) throws -> [String: [String: Any]] {
        let report = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any])
        let items = try #require(report["items"] as? [[String: Any]])
        return Dictionary(
            uniqueKeysWithValues: items.map {
                (($0["source"] as? String).map { ($0 as NSString).lastPathComponent } ?? "?", $0)
            })
    }

    /// What exiftool says of each sample's copy, against its source: no
    /// location tag, the same capture date and orientation, the same decoded
    /// pixels (and frames), the report listing what was removed, `sha256` the copy's.
    static func verifyCopies(report path: String, sources: [String: String], samples: [Sample] = Self.samples) throws {
        let items = try reportItems(path)
        for sample in samples {
            let item = try #require(items[sample.name], "\(sample.name) is not in the report")
            #expect(item["status"] as? String == "ingested", "\(sample.name): \(item)")
            let copy = try #require((item["path"] as? String).flatMap { URL(string: $0)?.path })
            let source = try #require(sources[sample.name])

            // Before: the source has a location; after: the copy has none.
            let (original, stripped) = (try MediaTools.metadata(source), try MediaTools.metadata(copy))
            #expect(!original.locationTags.isEmpty, "\(sample.name): the source has no location to remove")
            #expect(stripped.locationTags.isEmpty, "\(sample.name): exiftool still finds \(stripped.locationTags)")

            // Nor are the location's bytes left in it: each GPS or location
            // value exiftool finds in the source is overwritten where it was,
            // and no XMP GPS property or ISO 6709 text is anywhere (not in a
            // box or a segment readers skip).
            let leftovers = sample.bytesShown ? try MediaTools.locationBytes(source) : []
            #expect(!leftovers.isEmpty || !sample.bytesShown, "\(sample.name): no location bytes found in the source")
            let copyBytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: copy)))
            for place in leftovers {
                if let offset = place.offset {
                    guard place.bytes.contains(where: { $0 != 0 }) else { continue }
                    let there =
                        offset + place.bytes.count <= copyBytes.count
                        ? Array(copyBytes[offset..<(offset + place.bytes.count)]) : []
                    #expect(there != place.bytes, "\(sample.name): the copy still holds \(place)")
                } else {
                    #expect(
                        Data(copyBytes).range(of: Data(place.bytes)) == nil,
                        "\(sample.name): the copy still holds \(place)")
                }
            }

            // Every other tag exiftool reads stays as it was.
            let (before, after) = (original.otherTags, stripped.otherTags)
            let differing = Set(before.keys).union(after.keys).filter { before[$0] != after[$0] }.sorted()
            #expect(
                differing.isEmpty,
                "\(sample.name): \(differing.map { "\($0): \(before[$0] ?? "absent") → \(after[$0] ?? "absent")" })")

            // The capture date and the orientation stay.
            for tag in sample.video
                ? ["CreateDate", "CreationDate", "Rotation"]
                : ["DateTimeOriginal", "OffsetTimeOriginal", "Orientation", "Make", "Model"]
            {
                #expect(
                    stripped.value(tag, numeric: true) == original.value(tag, numeric: true),
                    "\(sample.name): \(tag) changed")
            }
            if !sample.video { #expect(stripped.value("DateTimeOriginal") != nil, "\(sample.name): no capture date") }

            // The same pictures and sound: only metadata changed.
            if sample.decodes {
                #expect(
                    try MediaTools.decodedDigest(copy, video: sample.video)
                        == (try MediaTools.decodedDigest(source, video: sample.video)),
                    "\(sample.name): decoded content differs")
            }
            #expect(
                try FileManager.default.attributesOfItem(atPath: copy)[.size] as? Int
                    == (try FileManager.default.attributesOfItem(atPath: source)[.size] as? Int))

            // The report says what was removed; sha256 is the delivered bytes'.
            let removed = item["locationRemoved"] as? [String] ?? []
            for expected in sample.removed {
                #expect(
                    removed.contains { $0.hasPrefix(expected) },
                    "\(sample.name): the report says \(removed), not \(expected)")
            }
            #expect(
                item["sha256"] as? String == (try SHA256Digest.hex(of: copy)),
                "\(sample.name): sha256 is not the copy's")
            #expect(item["sha256"] as? String != (try SHA256Digest.hex(of: source)))
        }
    }

    @Test func phoneFilesLoseTheirLocationAndKeepEverythingElse() throws {
        let work = TemporaryDirectory("privacy")
        let drop = work.file("drop")
        try Self.makeDrop(at: drop, extra: ["compressed-xmp.png": Fixtures.privacy("ztxt-xmp-gps.png")])
        var before: [String: String] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: drop) {
            before[name] = try SHA256Digest.hex(of: drop + "/" + name)
        }

        let run = try ShareProcess.run([
            "ingest", "--container", work.file("c"), "--pipeline", try Self.pipeline(in: work), "--report",
            work.file("report.json"), drop,
        ])
        // One file's location cannot be removed in place: it alone is not delivered.
        #expect(run.status == 1, "\(run.stderr)")
        let sources = Dictionary(uniqueKeysWithValues: Self.samples.map { ($0.name, drop + "/" + $0.name) })
        try Self.verifyCopies(report: work.file("report.json"), sources: sources)

        let items = try Self.reportItems(work.file("report.json"))
        let refused = try #require(items["compressed-xmp.png"])
        #expect(
            refused["status"] as? String == "failed" && refused["stage"] as? String == "location"
                && refused["reason"] as? String == "locationNotRemovable", "\(refused)")
        #expect((refused["error"] as? String)?.contains("compressed") == true, "\(refused)")
        // Nothing of it is left in the container.
        let files = try FileManager.default.contentsOfDirectory(atPath: work.file("c")).filter { $0.hasSuffix(".png") }
        #expect(files.count == 1, "\(files)")

        // The sources are untouched.
        for (name, digest) in before {
            #expect(try SHA256Digest.hex(of: drop + "/" + name) == digest, "\(name) changed")
        }

        // The manifest carries what was removed (v2, only where something was).
        let manifestPath = try #require(try Self.manifestPath(work.file("c")))
        let manifest = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: manifestPath)))
                as? [[String: Any]])
        #expect(manifest.count == Self.samples.count)
        #expect(manifest.allSatisfy { ($0["locationRemoved"] as? [String])?.isEmpty == false }, "\(manifest)")
    }

    @Test func aWorkerRemovesTheSameAsALocalRun() throws {
        let work = TemporaryDirectory("privacy-modes")
        let drop = work.file("drop")
        try Self.makeDrop(at: drop)
        let pipeline = try Self.pipeline(in: work)
        let local = try ShareProcess.run([
            "ingest", "--container", work.file("local"), "--pipeline", pipeline, "--report", work.file("local.json"),
            drop,
        ])
        #expect(local.status == 0, "\(local.stderr)")

        let server = try PostgresServer()
        #expect(try ShareProcess.run(["db", "migrate", "--db", server.url]).status == 0)
        let workers = DistributedTests.Workers(url: server.url)
        try workers.start("privacy")
        defer { workers.stopAll() }
        let remote = try ShareProcess.run([
            "ingest", "--db", server.url, "--container", work.file("remote"), "--pipeline", pipeline, "--report",
            work.file("remote.json"), drop,
        ])
        #expect(remote.status == 0, "\(remote.stderr) \(workers.log("privacy"))")

        let sources = Dictionary(uniqueKeysWithValues: Self.samples.map { ($0.name, drop + "/" + $0.name) })
        try Self.verifyCopies(report: work.file("remote.json"), sources: sources)
        // Item by item, the same outcome, the same removals, the same bytes delivered.
        let (a, b) = (try Self.reportItems(work.file("local.json")), try Self.reportItems(work.file("remote.json")))
        #expect(a.count == b.count)
        for (name, item) in a {
            for key in ["status", "locationRemoved", "sha256", "size", "width", "height", "duration"] {
                #expect(
                    "\(item[key] ?? "absent")" == "\(b[name]?[key] ?? "absent")",
                    "\(name): \(key) differs between ingest and ingest --db")
            }
        }
    }

    /// `sha256` is the delivered bytes' identity: a photo shared twice with
    /// location privacy is a duplicate of its first (stripped) copy, and is
    /// never linked to an earlier copy that still carries its location.
    @Test func duplicatesAreFoundAmongStrippedCopiesOnly() throws {
        let work = TemporaryDirectory("privacy-duplicates")
        let container = work.file("c")
        let photo = Fixtures.privacy("iphone6-gps.jpg")
        let sourceDigest = try SHA256Digest.hex(of: photo)

        // Without the option the copy is the source, byte for byte, location included.
        let plainDrop = work.file("plain")
        try FileManager.default.createDirectory(atPath: plainDrop, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: photo, toPath: plainDrop + "/IMG_0001.JPG")
        let plain = try ShareProcess.run([
            "ingest", "--container", container, "--pipeline", try Self.pipeline(in: work, location: false), "--report",
            work.file("plain.json"), plainDrop,
        ])
        #expect(plain.status == 0, "\(plain.stderr)")
        let plainItem = try #require(try Self.reportItems(work.file("plain.json"))["IMG_0001.JPG"])
        #expect(plainItem["sha256"] as? String == sourceDigest && plainItem["locationRemoved"] == nil)
        let plainCopy = try #require((plainItem["path"] as? String).flatMap { URL(string: $0)?.path })
        #expect(!(try MediaTools.locationTags(plainCopy)).isEmpty)

        // The same photo twice with privacy, duplicates linked: the second is the
        // first stripped copy's duplicate; neither is the unconsumed plain copy's.
        let privateDrop = work.file("private")
        try FileManager.default.createDirectory(atPath: privateDrop, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: photo, toPath: privateDrop + "/a.jpg")
        try FileManager.default.copyItem(atPath: photo, toPath: privateDrop + "/b.jpg")
        let linked = try ShareProcess.run([
            "ingest", "--container", container, "--pipeline", try Self.pipeline(in: work, duplicates: "link"),
            "--report", work.file("private.json"), privateDrop,
        ])
        #expect(linked.status == 0, "\(linked.stderr)")
        let items = try Self.reportItems(work.file("private.json"))
        let (a, b) = (try #require(items["a.jpg"]), try #require(items["b.jpg"]))
        #expect(a["duplicateOf"] == nil, "linked to a copy that carries the location: \(a)")
        #expect(
            b["duplicateOf"] as? String == a["path"] as? String && b["path"] as? String == a["path"] as? String, "\(b)")
        #expect(a["sha256"] as? String == b["sha256"] as? String && a["sha256"] as? String != sourceDigest)
        let copy = try #require((a["path"] as? String).flatMap { URL(string: $0)?.path })
        #expect(try MediaTools.locationTags(copy).isEmpty)
    }

    /// Both settings are off by default: the default pipeline delivers each
    /// file as it came (its location too), makes no compatible copy, and its
    /// report and manifest have neither `locationRemoved` nor `compatible`.
    @Test func offByDefaultEachFileArrivesAsItCame() throws {
        let work = TemporaryDirectory("privacy-off")
        let drop = work.file("drop")
        try Self.makeDrop(at: drop)
        let run = try ShareProcess.run([
            "ingest", "--container", work.file("c"), "--report", work.file("report.json"), drop,
        ])
        #expect(run.status == 0, "\(run.stderr)")
        let items = try Self.reportItems(work.file("report.json"))
        #expect(items.count == Self.samples.count)
        for sample in Self.samples {
            let item = try #require(items[sample.name], "\(sample.name) is not in the report")
            #expect(
                item["status"] as? String == "ingested" && item["locationRemoved"] == nil && item["compatible"] == nil,
                "\(sample.name): \(item)")
            let copy = try #require((item["path"] as? String).flatMap { URL(string: $0)?.path })
            let source = try SHA256Digest.hex(of: drop + "/" + sample.name)
            #expect(
                try SHA256Digest.hex(of: copy) == source && item["sha256"] as? String == source,
                "\(sample.name): not delivered as it came")
        }
        let files = try FileManager.default.contentsOfDirectory(atPath: work.file("c"))
        #expect(!files.contains { $0.hasSuffix(".compatible.jpg") }, "\(files)")
        let manifestPath = try #require(try Self.manifestPath(work.file("c")))
        let text = try String(contentsOfFile: manifestPath, encoding: .utf8)
        #expect(!text.contains("\"compatible\"") && !text.contains("\"locationRemoved\""), "\(text)")
    }

    // MARK: - One place at a time (README, "Rules and the tests that hold them")

    /// `share ingest` with the location stage over one file (copied from
    /// `source`, then given a location by `exiftool` when its arguments are
    /// given): exiftool finds no location in the copy, the report names
    /// `removed`, and everything else stays the source's (``verifyCopies``).
    @discardableResult
    static func strips(
        _ name: String, from source: String, removed: [String], video: Bool = false, decodes: Bool = true,
        bytesShown: Bool = true, exiftool: [String] = []
    ) throws -> Data {
        let work = TemporaryDirectory("privacy-place")
        let drop = work.file("drop")
        try FileManager.default.createDirectory(atPath: drop, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: source, toPath: drop + "/" + name)
        if !exiftool.isEmpty {
            let made = try MediaTools.run(
                "/usr/bin/exiftool", ["-q", "-overwrite_original"] + exiftool + [drop + "/" + name])
            #expect(made.status == 0, "exiftool could not write the location into \(name)")
        }
        let run = try ShareProcess.run([
            "ingest", "--container", work.file("c"), "--pipeline", try Self.pipeline(in: work), "--report",
            work.file("report.json"), drop,
        ])
        #expect(run.status == 0, "\(name): \(run.stderr)")
        try Self.verifyCopies(
            report: work.file("report.json"), sources: [name: drop + "/" + name],
            samples: [
                Sample(
                    name: name, source: drop + "/" + name, removed: removed, video: video, decodes: decodes,
                    bytesShown: bytesShown)
            ])
        // The copy's bytes (the container goes with `work`).
        let copy = try #require(
            (try Self.reportItems(work.file("report.json"))[name]?["path"] as? String).flatMap { URL(string: $0)?.path }
        )
        return try Data(contentsOf: URL(fileURLWithPath: copy))
    }

    static let gpsArguments = [
        "-GPSLatitude=48.8584", "-GPSLatitudeRef=N", "-GPSLongitude=2.2945", "-GPSLongitudeRef=E", "-GPSAltitude=35",
        "-GPSAltitudeRef=0",
    ]

    @Test func exifGPSIsRemovedFromAJPEG() throws {
        try Self.strips(
            "iphone6.jpg", from: Fixtures.privacy("iphone6-gps.jpg"), removed: ["EXIF GPS (GPSLatitudeRef, GPSLatitude"]
        )
    }
    @Test func exifGPSIsRemovedFromAHEIF() throws {
        try Self.strips(
            "iphone7.heic", from: Fixtures.privacy("iphone7-gps.heic"), removed: ["EXIF GPS (GPSLatitudeRef"])
    }
    @Test func exifGPSIsRemovedFromAnAVIF() throws {
        try Self.strips("photo.avif", from: Fixtures.privacy("gps.avif"), removed: ["EXIF GPS"])
    }
    @Test func exifGPSIsRemovedFromAPNGeXIf() throws {
        try Self.strips("photo.png", from: Fixtures.privacy("gps.png"), removed: ["EXIF (PNG eXIf) GPS"])
    }
    @Test func exifGPSIsRemovedFromAWebP() throws {
        try Self.strips("photo.webp", from: Fixtures.privacy("gps.webp"), removed: ["EXIF (WebP) GPS"])
    }
    @Test func exifGPSIsRemovedFromAJPEGXL() throws {
        try Self.strips("photo.jxl", from: Fixtures.privacy("gps.jxl"), removed: ["EXIF (JPEG XL) GPS"])
    }
    /// A TIFF (the structure of DNG and the TIFF-based RAWs), its GPS IFD and capture date written by exiftool.
    @Test func exifGPSIsRemovedFromATIFF() throws {
        try Self.strips(
            "scan.tiff", from: Fixtures.media("image.tiff"), removed: ["EXIF GPS"],
            exiftool: Self.gpsArguments + ["-DateTimeOriginal=2024:05:01 12:00:00"])
    }
    /// A DNG, its GPS IFD written by exiftool.
    @Test func exifGPSIsRemovedFromADNG() throws {
        try Self.strips(
            "raw.dng", from: Fixtures.testdata("modern/raw/canon-350d-preview1024.dng"), removed: ["EXIF GPS"],
            exiftool: Self.gpsArguments)
    }
    /// A Fujifilm RAF (its EXIF is its embedded JPEG's), GPS written by exiftool; vips does not read a RAF, so its pixels are not compared.
    @Test func exifGPSIsRemovedFromARAF() throws {
        try Self.strips(
            "raw.raf", from: Fixtures.testdata("modern/raw/fujifilm-s5pro-exif8.raf"), removed: ["EXIF GPS"],
            decodes: false, exiftool: Self.gpsArguments)
    }
    /// A Canon CR3 (its GPS is the CMT4 box), GPS written by exiftool; not decoded by vips either.
    @Test func exifGPSIsRemovedFromACR3() throws {
        try Self.strips(
            "raw.cr3", from: Fixtures.testdata("modern/raw/exiftool-CanonRaw.cr3"), removed: ["EXIF (CR3 CMT4) GPS"],
            decodes: false, exiftool: Self.gpsArguments)
    }
    /// A motion photo whose video carries a location: testdata's Google
    /// container layout (`motion/google-container.jpg`) with its MP4 replaced by
    /// the Android MP4 that has a `©xyz` (its `Item:Length` rewritten to match).
    /// exiftool does not read inside the embedded video, so the test looks at the
    /// video the pipeline copied out: no location, and the same frames and sound.
    @Test func aMotionPhotosEmbeddedVideoLosesItsLocation() throws {
        let photo = [UInt8](try Data(contentsOf: URL(fileURLWithPath: Fixtures.motion("google-container.jpg"))))
        let video = [UInt8](try Data(contentsOf: URL(fileURLWithPath: Fixtures.privacy("android-xyz.mp4"))))
        let start = try #require(photo.firstRange(of: Array("ftyp".utf8))).lowerBound - 4
        #expect(photo.count - start == 18021)
        var head = Array(photo[..<start])
        let old = Array(#"Item:Length="18021""#.utf8)
        let new = Array(#"Item:Length="\#(video.count)""#.utf8)
        let at = try #require(head.firstRange(of: old))
        #expect(old.count == new.count)
        head.replaceSubrange(at, with: new)
        let work = TemporaryDirectory("privacy-motion")
        let drop = work.file("drop")
        try FileManager.default.createDirectory(atPath: drop, withIntermediateDirectories: true)
        try Data(head + video).write(to: URL(fileURLWithPath: drop + "/PXL_0001.MP.jpg"))

        // The privacy pipeline with the motion stage, which copies the video out of the stripped copy.
        let pipeline = work.file("pipeline-motion.json")
        try Data(
            #"{"name": "privacy-motion", "stages": [{"stage": "sniff"}, {"stage": "copy"}, {"stage": "location"}, {"stage": "probe"}, {"stage": "thumbnail"}, {"stage": "motion"}, {"stage": "manifest"}]}"#
                .utf8
        )
        .write(to: URL(fileURLWithPath: pipeline))
        let run = try ShareProcess.run([
            "ingest", "--container", work.file("c"), "--pipeline", pipeline, "--report", work.file("report.json"), drop,
        ])
        #expect(run.status == 0, "\(run.stderr)")
        let item = try #require(try Self.reportItems(work.file("report.json"))["PXL_0001.MP.jpg"])
        let removed = item["locationRemoved"] as? [String] ?? []
        #expect(removed.contains { $0.hasPrefix("QuickTime ©xyz") }, "the report says \(removed)")
        let copy = try #require((item["path"] as? String).flatMap { URL(string: $0)?.path })
        #expect(try FileManager.default.attributesOfItem(atPath: copy)[.size] as? Int == head.count + video.count)
        let extracted = try #require(
            ((item["motionVideo"] as? [String: Any])?["path"] as? String).flatMap { URL(string: $0)?.path },
            "no motionVideo: \(item)")
        #expect(!(try MediaTools.locationTags(Fixtures.privacy("android-xyz.mp4"))).isEmpty)
        let left = try MediaTools.locationTags(extracted)
        #expect(left.isEmpty, "exiftool finds \(left) in the extracted video")
        #expect(
            try MediaTools.decodedDigest(extracted, video: true)
                == (try MediaTools.decodedDigest(Fixtures.privacy("android-xyz.mp4"), video: true)))
    }
    @Test func xmpGPSIsRemovedFromAJPEG() throws {
        try Self.strips(
            "exif-xmp.jpg", from: Fixtures.privacy("exif-xmp-gps.jpg"),
            removed: ["XMP exif:GPSLatitude", "XMP exif:GPSLongitude", "XMP exif:GPSAltitude"])
    }
    @Test func xmpGPSIsRemovedFromAPNGiTXt() throws {
        try Self.strips("photo.png", from: Fixtures.privacy("gps.png"), removed: ["XMP (PNG iTXt) exif:GPSLatitude"])
    }
    @Test func xmpGPSIsRemovedFromAWebP() throws {
        try Self.strips("photo.webp", from: Fixtures.privacy("gps.webp"), removed: ["XMP (WebP) exif:GPSLatitude"])
    }
    @Test func xmpGPSIsRemovedFromAJPEGXL() throws {
        try Self.strips("photo.jxl", from: Fixtures.privacy("gps.jxl"), removed: ["XMP (JPEG XL) exif:GPSLatitude"])
    }
    /// HEIF's XMP is a `mime` item (gps.avif has one).
    @Test func xmpGPSIsRemovedFromAHEIFMimeItem() throws {
        try Self.strips("photo.avif", from: Fixtures.privacy("gps.avif"), removed: ["XMP exif:GPSLatitude"])
    }
    /// EXIF GPS in a further MPF image: testdata's gray JPEG as the primary
    /// image, an MPF index (APP2 `MPF`, its MP entries: the primary, then a
    /// second image at its offset from the index's TIFF header) and the iPhone 6
    /// JPEG with its GPS as that second image, assembled by the test (exiftool
    /// writes no MPF images); exiftool reads the second image's GPS (`-ee`).
    @Test func exifGPSIsRemovedFromAFurtherMPFImage() throws {
        func be16(_ value: Int) -> [UInt8] { [UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)] }
        func be32(_ value: Int) -> [UInt8] {
            [UInt8(value >> 24 & 0xFF), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
        }
        /// "MPF\0", then a big-endian TIFF header and one IFD: MPFVersion, NumberOfImages 2, MPEntry (two 16-byte entries after the IFD).
        func index(primarySize: Int, secondSize: Int, secondOffset: Int) -> [UInt8] {
            let entries =
                be32(0x2003_0000) + be32(primarySize) + be32(0) + be16(0) + be16(0) + be32(0) + be32(secondSize)
                + be32(secondOffset) + be16(0) + be16(0)
            let data = 8 + 2 + 3 * 12 + 4
            var tiff: [UInt8] = Array("MM".utf8) + be16(42) + be32(8) + be16(3)
            tiff += be16(0xB000) + be16(7) + be32(4) + Array("0100".utf8)
            tiff += be16(0xB001) + be16(4) + be32(1) + be32(2)
            tiff += be16(0xB002) + be16(7) + be32(entries.count) + be32(data)
            return Array("MPF\0".utf8) + tiff + be32(0) + entries
        }
        let primary = [UInt8](try Data(contentsOf: URL(fileURLWithPath: Fixtures.media("gray.jpg"))))
        let second = [UInt8](try Data(contentsOf: URL(fileURLWithPath: Fixtures.privacy("iphone6-gps.jpg"))))
        let length = index(primarySize: 0, secondSize: 0, secondOffset: 0).count + 2
        let primaryTotal = primary.count + 2 + length
        // The TIFF header starts after SOI (2), the APP2 marker and length (4) and "MPF\0" (4).
        let payload = index(primarySize: primaryTotal, secondSize: second.count, secondOffset: primaryTotal - 10)
        let file =
            Array(primary[..<2]) + [0xFF, 0xE2] + be16(payload.count + 2) + payload + Array(primary[2...]) + second
        let work = TemporaryDirectory("privacy-mpf")
        let source = work.file("mpf.jpg")
        try Data(file).write(to: URL(fileURLWithPath: source))
        let copyBytes = try Self.strips(
            "mpf.jpg", from: source, removed: ["EXIF GPS (GPSLatitudeRef, GPSLatitude"], bytesShown: false)
        // exiftool -v3 shows no embedded image's bytes: each location value it
        // shows in the iPhone JPEG must be overwritten where it is in the copy's second image.
        let values = try MediaTools.locationBytes(Fixtures.privacy("iphone6-gps.jpg")).filter {
            $0.offset != nil && $0.bytes.contains { $0 != 0 }
        }
        #expect(!values.isEmpty)
        let copy = [UInt8](copyBytes)
        for value in values {
            let at = primaryTotal + (value.offset ?? 0)
            let there = at + value.bytes.count <= copy.count ? Array(copy[at..<(at + value.bytes.count)]) : []
            #expect(there != value.bytes, "the copy's second image still holds \(value)")
        }
    }

    /// XMP `exif:GPS*` in extended XMP only: testdata's gray JPEG given a main
    /// packet that names the extension (`xmpNote:HasExtendedXMP`, the MD5 of the
    /// extended packet, as the XMP specification says) and one extension chunk
    /// holding the GPS properties (exiftool writes GPS into the main packet, so
    /// the segments are assembled here).
    @Test func xmpGPSIsRemovedFromExtendedXMP() throws {
        let extended = Array(
            #"<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"><rdf:Description rdf:about="" xmlns:exif="http://ns.adobe.com/exif/1.0/" exif:GPSLatitude="48,51.504N" exif:GPSLongitude="2,17.670E"/></rdf:RDF></x:xmpmeta>"#
                .utf8)
        let work = TemporaryDirectory("privacy-extended")
        let packetPath = work.file("extended.xml")
        try Data(extended).write(to: URL(fileURLWithPath: packetPath))
        let digest = try MediaTools.run("/usr/bin/md5sum", [packetPath]).output.prefix(32).uppercased()
        #expect(digest.count == 32)
        let main = Array(
            #"<?xpacket begin="" id="W5M0MpCehiHzreSzNTczkc9d"?><x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"><rdf:Description rdf:about="" xmlns:xmpNote="http://ns.adobe.com/xmp/note/" xmpNote:HasExtendedXMP="\#(digest)"/></rdf:RDF></x:xmpmeta><?xpacket end="w"?>"#
                .utf8)
        func app1(_ payload: [UInt8]) -> [UInt8] {
            [0xFF, 0xE1, UInt8((payload.count + 2) >> 8), UInt8((payload.count + 2) & 0xFF)] + payload
        }
        func be32(_ value: Int) -> [UInt8] {
            [UInt8(value >> 24 & 0xFF), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
        }
        // A capture date first (exiftool), to see it kept.
        let dated = work.file("dated.jpg")
        try FileManager.default.copyItem(atPath: Fixtures.media("gray.jpg"), toPath: dated)
        #expect(
            try MediaTools.run(
                "/usr/bin/exiftool", ["-q", "-overwrite_original", "-DateTimeOriginal=2024:05:01 12:00:00", dated]
            ).status == 0)
        let jpeg = [UInt8](try Data(contentsOf: URL(fileURLWithPath: dated)))
        let segments =
            app1(Array("http://ns.adobe.com/xap/1.0/\0".utf8) + main)
            + app1(
                Array("http://ns.adobe.com/xmp/extension/\0".utf8) + Array(digest.utf8) + be32(extended.count) + be32(0)
                    + extended)
        let source = work.file("extended.jpg")
        try Data(Array(jpeg[..<2]) + segments + Array(jpeg[2...])).write(to: URL(fileURLWithPath: source))
        try Self.strips(
            "extended.jpg", from: source,
            removed: ["XMP (extended) exif:GPSLatitude", "XMP (extended) exif:GPSLongitude"])
    }

    static let xmpGPSArguments = [
        "-XMP-exif:GPSLatitude=48.8584 N", "-XMP-exif:GPSLongitude=2.2945 E", "-XMP-exif:GPSAltitude=35",
    ]

    /// A TIFF's XMP (tag 700), written by exiftool.
    @Test func xmpGPSIsRemovedFromATIFF() throws {
        try Self.strips(
            "scan.tiff", from: Fixtures.media("image.tiff"), removed: ["XMP (TIFF tag 700) exif:GPSLatitude"],
            exiftool: Self.xmpGPSArguments + ["-DateTimeOriginal=2024:05:01 12:00:00"])
    }
    /// An MP4's XMP `uuid` box, written by exiftool.
    @Test func xmpGPSIsRemovedFromAnMP4UUIDBox() throws {
        try Self.strips(
            "clip.mp4", from: Fixtures.media("clip-h264.mp4"), removed: ["XMP (uuid box) exif:GPSLatitude"],
            video: true, exiftool: Self.xmpGPSArguments)
    }
    /// A MOV's XMP (`udta/XMP_`), written by exiftool.
    @Test func xmpGPSIsRemovedFromAMOV() throws {
        try Self.strips(
            "clip.mov", from: Fixtures.media("clip.mov"), removed: ["XMP (QuickTime XMP_) exif:GPSLatitude"],
            video: true, exiftool: Self.xmpGPSArguments)
    }
    @Test func quickTimeXYZIsRemovedFromUserData() throws {
        try Self.strips(
            "android.mp4", from: Fixtures.privacy("android-xyz.mp4"), removed: ["QuickTime ©xyz"], video: true)
        try Self.strips(
            "quicktime.mov", from: Fixtures.privacy("quicktime-xyz.mov"), removed: ["QuickTime ©xyz"], video: true)
    }
    /// `©xyz` as an iTunes-style item (`moov/udta/meta/ilst`), written by exiftool.
    @Test func quickTimeXYZIsRemovedFromAnItemList() throws {
        try Self.strips(
            "clip.mp4", from: Fixtures.media("clip-h264.mp4"), removed: ["QuickTime ©xyz (ilst)"], video: true,
            exiftool: ["-ItemList:GPSCoordinates=48.8584 N, 2.2945 E"])
    }
    @Test func appleLocationKeysAreRemoved() throws {
        try Self.strips(
            "iphone.mov", from: Fixtures.privacy("keys-iso6709.mov"),
            removed: ["QuickTime com.apple.quicktime.location.ISO6709"], video: true)
    }
    @Test func mp4LociIsRemoved() throws {
        try Self.strips("3gpp.mp4", from: Fixtures.privacy("loci.mp4"), removed: ["MP4 loci"], video: true)
    }

    static func manifestPath(_ container: String) throws -> String? {
        try FileManager.default.contentsOfDirectory(atPath: container + "/manifests").first { $0.hasSuffix(".json") }
            .map { container + "/manifests/" + $0 }
    }
}
