import Foundation
import TestSupport
import Testing

/// Near-duplicates (issue 62, v2 `similarTo`) in both modes: `share ingest`
/// (SQLite journal) and `share ingest --db` with a real `share worker`
/// (PostgreSQL). Recompressed, resized, re-encoded and cropped copies of a
/// photo (testdata/similar, made by scripts/make-similar.sh) name it, in a later
/// share and in their own; the same bytes are `duplicateOf`, never
/// `similarTo`; distinct pictures and a consumed share's name nothing; a
/// legacy manifest never has it.
@Suite(.serialized) struct SimilarToTests {
    static func similar(_ name: String) -> String { Fixtures.testdata("similar/" + name) }
    static let copies = [
        "copy-q40.jpg", "copy-half.jpg", "copy-quarter.jpg", "copy.webp", "copy.png", "copy.heic", "copy-crop.jpg",
        "copy-crop-centre.jpg",
    ]
    static func inDrop(_ name: String) -> String { name == "copy-crop-centre.jpg" ? "copy-z-crop-centre.jpg" : name }
    static let distinct = [
        "distinct-zone.jpg", "distinct-sines.jpg", "distinct-gradient.jpg", "distinct-noise-1.jpg",
        "distinct-noise-2.jpg", "distinct-screenshot.png",
    ]

    /// Source name → (the source whose copy its `similarTo` names, its distance), or "-"; and its `duplicateOf`'s source.
    static func found(inReport path: String, sourceOfCopy: inout [String: String]) throws -> (
        similar: [String: String], duplicates: [String: String]
    ) {
        let report = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any])
        let items = try #require(report["items"] as? [[String: Any]])
        for item in items {
            if let copy = item["path"] as? String, let source = item["source"] as? String {
                sourceOfCopy[copy] = (source as NSString).lastPathComponent
            }
        }
        var similar: [String: String] = [:]
        var duplicates: [String: String] = [:]
        for item in items {
            let name = ((item["source"] as? String ?? "?") as NSString).lastPathComponent
            if let object = item["similarTo"] as? [String: Any], let path = object["path"] as? String,
                let distance = object["distance"] as? Int
            {
                similar[name] =
                    (sourceOfCopy[path] ?? "unknown \(path)") + (distance <= 8 ? "" : " at \(distance) bits")
            } else {
                similar[name] = "-"
            }
            duplicates[name] = (item["duplicateOf"] as? String).map { sourceOfCopy[$0] ?? "unknown \($0)" } ?? "-"
        }
        return (similar, duplicates)
    }

    @Test func copiesNameTheOriginalAndDistinctPicturesNothingInBothModes() throws {
        let work = TemporaryDirectory("similar-modes")
        let root = (work.path as NSString).standardizingPath
        let first = TemporaryDirectory("similar-first")
        let second = TemporaryDirectory("similar-second")
        let own = TemporaryDirectory("similar-own")
        try first.add("a-original.jpg", copying: Self.similar("original.jpg"))
        for name in Self.distinct { try first.add(name, copying: Self.similar(name)) }
        // Each copy's nearest earlier picture is the original: the centred crop
        // (2 bits from it) goes after the corner crop (6 bits from the centred one, 8 from the original).
        for name in Self.copies { try second.add(Self.inDrop(name), copying: Self.similar(name)) }
        try second.add("z-same-bytes.jpg", copying: Self.similar("original.jpg"))
        // In one share: the copy after the original names it.
        try own.add("a-original.jpg", copying: Self.similar("original.jpg"))
        try own.add("b-copy-q40.jpg", copying: Self.similar("copy-q40.jpg"))
        let consumed = TemporaryDirectory("similar-consumed")
        try consumed.add("c-after-consuming.jpg", copying: Self.similar("copy-half.jpg"))

        let server = try PostgresServer()
        #expect(try ShareProcess.run(["db", "migrate", "--db", server.url]).status == 0)
        let workers = DistributedTests.Workers(url: server.url)
        try workers.start("similar")
        defer { workers.stopAll() }

        for (mode, database) in [("local", [String]()), ("remote", ["--db", server.url])] {
            var sourceOfCopy: [String: String] = [:]
            let container = root + "/c-" + mode
            let one = try ShareProcess.run(
                ["ingest"] + database + ["--container", container, "--report", root + "/\(mode)-1.json", first.path])
            #expect(one.status == 0, "\(mode): \(one.stderr) \(workers.log("similar"))")
            let firstFound = try Self.found(inReport: root + "/\(mode)-1.json", sourceOfCopy: &sourceOfCopy)
            #expect(
                firstFound.similar.count == 7 && firstFound.similar.values.allSatisfy { $0 == "-" },
                "\(mode): distinct pictures: \(firstFound.similar)")

            let two = try ShareProcess.run(
                ["ingest"] + database + ["--container", container, "--report", root + "/\(mode)-2.json", second.path])
            #expect(two.status == 0, "\(mode): \(two.stderr)")
            let secondFound = try Self.found(inReport: root + "/\(mode)-2.json", sourceOfCopy: &sourceOfCopy)
            var expected = Dictionary(uniqueKeysWithValues: Self.copies.map { (Self.inDrop($0), "a-original.jpg") })
            expected["z-same-bytes.jpg"] = "-"
            #expect(secondFound.similar == expected, "\(mode): \(secondFound.similar)")
            #expect(
                secondFound.duplicates["z-same-bytes.jpg"] == "a-original.jpg", "\(mode): \(secondFound.duplicates)")

            // Once the host consumed both shares, their pictures are the app's: a copy names nothing.
            for run in [one, two] {
                let url = run.stdout.split(separator: "\n").last.map(String.init) ?? ""
                let open = try ShareProcess.run(["open", url, "--container", container, "--consume"])
                #expect(open.status == 0, "\(mode): \(url): \(open.stderr)")
            }
            let after = try ShareProcess.run(
                ["ingest"] + database + ["--container", container, "--report", root + "/\(mode)-4.json", consumed.path])
            #expect(after.status == 0, "\(mode): \(after.stderr)")
            let afterFound = try Self.found(inReport: root + "/\(mode)-4.json", sourceOfCopy: &sourceOfCopy)
            #expect(
                afterFound.similar == ["c-after-consuming.jpg": "-"],
                "\(mode): both earlier shares are consumed: \(afterFound.similar)")

            let three = try ShareProcess.run(
                ["ingest"] + database + [
                    "--container", root + "/own-" + mode, "--report", root + "/\(mode)-3.json", own.path,
                ])
            #expect(three.status == 0, "\(mode): \(three.stderr)")
            let ownFound = try Self.found(inReport: root + "/\(mode)-3.json", sourceOfCopy: &sourceOfCopy)
            #expect(
                ownFound.similar == ["a-original.jpg": "-", "b-copy-q40.jpg": "a-original.jpg"],
                "\(mode): \(ownFound.similar)")
            // The manifest carries it as the report does.
            let manifests = try FileManager.default.contentsOfDirectory(atPath: root + "/own-" + mode + "/manifests")
                .filter { $0.hasSuffix(".json") }
            let manifest = try String(
                contentsOfFile: root + "/own-" + mode + "/manifests/" + #require(manifests.first), encoding: .utf8)
            #expect(manifest.contains("\"similarTo\""), "\(mode): \(manifest)")
        }
    }

    /// Pictures without detail (issue 62: every plain picture hashed alike)
    /// get no hash: two plain colours of one share, and a plain one beside the
    /// photo, name nothing and are named by nothing; the photo's copy still
    /// names it.
    @Test func plainPicturesAreNoNearDuplicates() throws {
        let work = TemporaryDirectory("similar-flat")
        let root = (work.path as NSString).standardizingPath
        let drop = TemporaryDirectory("similar-flat-drop")
        try drop.add("a-plain-grey.jpg", copying: Fixtures.testdata("flat/plain-grey.jpg"))
        try drop.add("b-original.jpg", copying: Self.similar("original.jpg"))
        try drop.add("c-plain-blue.jpg", copying: Fixtures.testdata("flat/plain-blue.jpg"))
        try drop.add("d-copy-q40.jpg", copying: Self.similar("copy-q40.jpg"))
        try drop.add("e-plain-blue-again.jpg", copying: Fixtures.testdata("flat/plain-blue.jpg"))
        let run = try ShareProcess.run(["ingest", "--container", root + "/c", "--report", root + "/r.json", drop.path])
        #expect(run.status == 0, "\(run.stderr)")
        var sourceOfCopy: [String: String] = [:]
        let found = try Self.found(inReport: root + "/r.json", sourceOfCopy: &sourceOfCopy)
        #expect(
            found.similar == [
                "a-plain-grey.jpg": "-", "b-original.jpg": "-", "c-plain-blue.jpg": "-",
                "d-copy-q40.jpg": "b-original.jpg", "e-plain-blue-again.jpg": "-",
            ], "\(found.similar)")
        // The same bytes are still a duplicate.
        #expect(found.duplicates["e-plain-blue-again.jpg"] == "c-plain-blue.jpg", "\(found.duplicates)")
    }

    /// Two smooth gradients whose hashes agree but whose colours (and shapes)
    /// do not (testdata/flat: warm 4:3, cool 2:3) are not near-duplicates;
    /// a copy of the photo in the same share still names it.
    @Test func gradientsOfUnlikeColoursAreNoNearDuplicates() throws {
        let work = TemporaryDirectory("similar-gradients")
        let root = (work.path as NSString).standardizingPath
        let drop = TemporaryDirectory("similar-gradients-drop")
        try drop.add("a-gradient-warm.jpg", copying: Fixtures.testdata("flat/gradient-warm.jpg"))
        try drop.add("b-gradient-cool.jpg", copying: Fixtures.testdata("flat/gradient-cool.jpg"))
        try drop.add("c-original.jpg", copying: Self.similar("original.jpg"))
        try drop.add("d-copy-half.jpg", copying: Self.similar("copy-half.jpg"))
        let run = try ShareProcess.run(["ingest", "--container", root + "/c", "--report", root + "/r.json", drop.path])
        #expect(run.status == 0, "\(run.stderr)")
        var sourceOfCopy: [String: String] = [:]
        let found = try Self.found(inReport: root + "/r.json", sourceOfCopy: &sourceOfCopy)
        #expect(
            found.similar == [
                "a-gradient-warm.jpg": "-", "b-gradient-cool.jpg": "-", "c-original.jpg": "-",
                "d-copy-half.jpg": "c-original.jpg",
            ], "\(found.similar)")
    }

    /// Issue 62's 0.1 %: two pictures of one smooth shape in two lights (30
    /// levels apart in red, 20 in blue; testdata/flat/near-colour-*), whose
    /// hashes and quarters agree (the older rule named the second), are not
    /// near-duplicates: their 4×4 colour cells differ. A half-size copy of the
    /// first still names it, as the photo's HEIC re-encode names the photo.
    @Test func picturesOfOneShapeInTwoLightsAreNoNearDuplicates() throws {
        let work = TemporaryDirectory("similar-lights")
        let root = (work.path as NSString).standardizingPath
        let drop = TemporaryDirectory("similar-lights-drop")
        try drop.add("a-near-colour-a.jpg", copying: Fixtures.testdata("flat/near-colour-a.jpg"))
        try drop.add("b-near-colour-b.jpg", copying: Fixtures.testdata("flat/near-colour-b.jpg"))
        try drop.add("c-near-colour-a-half.jpg", copying: Fixtures.testdata("flat/near-colour-a-half.jpg"))
        try drop.add("d-original.jpg", copying: Self.similar("original.jpg"))
        try drop.add("e-copy.heic", copying: Self.similar("copy.heic"))
        let run = try ShareProcess.run(["ingest", "--container", root + "/c", "--report", root + "/r.json", drop.path])
        #expect(run.status == 0, "\(run.stderr)")
        var sourceOfCopy: [String: String] = [:]
        let found = try Self.found(inReport: root + "/r.json", sourceOfCopy: &sourceOfCopy)
        #expect(
            found.similar == [
                "a-near-colour-a.jpg": "-", "b-near-colour-b.jpg": "-",
                "c-near-colour-a-half.jpg": "a-near-colour-a.jpg",
                "d-original.jpg": "-", "e-copy.heic": "d-original.jpg",
            ], "\(found.similar)")
    }

    /// A legacy manifest (the share extension's) never carries it.
    @Test func aLegacyManifestHasNoSimilarTo() throws {
        let work = TemporaryDirectory("similar-legacy")
        let root = (work.path as NSString).standardizingPath
        let drop = TemporaryDirectory("similar-legacy-drop")
        try drop.add("a-original.jpg", copying: Self.similar("original.jpg"))
        try drop.add("b-copy-q40.jpg", copying: Self.similar("copy-q40.jpg"))
        let run = try ShareProcess.run([
            "ingest", "--pipeline", "share-extension", "--container", root + "/c", drop.path,
        ])
        #expect(run.status == 0, "\(run.stderr)")
        let manifests = try FileManager.default.contentsOfDirectory(atPath: root + "/c/manifests").filter {
            $0.hasSuffix(".json")
        }
        let manifest = try String(contentsOfFile: root + "/c/manifests/" + #require(manifests.first), encoding: .utf8)
        #expect(!manifest.contains("similarTo"), "\(manifest)")
    }
}
