import Foundation
import TestSupport
import Testing

/// Near-duplicates in a watched inbox (issue 62): `share watch --once`, with
/// and without `--db`, delivers a drop of a photo and its recompressed copy
/// with the copy's `similarTo` naming the photo, as `share ingest` does.
@Suite(.serialized) struct SimilarToWatchTests {
    @Test(arguments: [false, true])
    func aWatchedDropsCopyNamesItsOriginal(database: Bool) throws {
        let work = TemporaryDirectory("similar-watch")
        let root = (work.path as NSString).standardizingPath
        let drop = root + "/inbox/drop"
        try FileManager.default.createDirectory(atPath: drop, withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            atPath: Fixtures.testdata("similar/original.jpg"), toPath: drop + "/a-original.jpg")
        try FileManager.default.copyItem(
            atPath: Fixtures.testdata("similar/copy-q40.jpg"), toPath: drop + "/b-copy-q40.jpg")
        FileManager.default.createFile(atPath: drop + "/.ready", contents: nil)
        let mode = try DatabaseMode(database, worker: "similar-watch")
        defer { mode.stop() }

        let watch = try ShareProcess.run(
            ["watch", root + "/inbox", "--container", root + "/c", "--once", "--settle", "0"] + mode.options)
        #expect(watch.stdout.contains("ingested=2 failed=0"), "\(watch.stdout)\n\(watch.stderr)")
        let manifests = try FileManager.default.contentsOfDirectory(atPath: root + "/c/manifests").filter {
            $0.hasSuffix(".json")
        }
        let name = try #require(manifests.first)
        let data = try #require(FileManager.default.contents(atPath: root + "/c/manifests/" + name))
        let entries = try #require(try JSONSerialization.jsonObject(with: data) as? [[String: Any]])
        let byName = Dictionary(uniqueKeysWithValues: entries.map { (($0["fileName"] as? String) ?? "?", $0) })
        let original = try #require(byName["a-original.jpg"]?["path"] as? String)
        let similar = try #require(byName["b-copy-q40.jpg"]?["similarTo"] as? [String: Any], "\(entries)")
        #expect(similar["path"] as? String == original && (similar["distance"] as? Int ?? 99) <= 8, "\(similar)")
        #expect(byName["a-original.jpg"]?["similarTo"] == nil)
    }
}
