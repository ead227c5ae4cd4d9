import Foundation
import TestSupport
import Testing

/// `share open` and `share gc` on manifests that name a file in a real sibling
/// folder whose name extends the container's (`<root>-evil/x.jpg`), directly
/// or through a folder link inside the container: `open` refuses the share as
/// outside the container (not as missing) and leaves it unconsumed; `gc` never
/// removes the sibling's file.
@Suite struct ConfinementCommandTests {
    /// `<parent>/box` (the container) beside `<parent>/box-evil/x.jpg`; `box/escape` links to the sibling folder.
    static func layout() throws -> (parent: TemporaryDirectory, root: String, sibling: String) {
        let parent = TemporaryDirectory("confine-cli")
        let root = URL(fileURLWithPath: parent.path + "/box").standardizedFileURL.path
        try parent.add("box-evil/x.jpg", copying: Fixtures.media("photo.jpg"))
        #expect(try ShareProcess.run(["status", "--container", root]).status == 0)  // creates the container
        try FileManager.default.createSymbolicLink(atPath: root + "/escape", withDestinationPath: root + "-evil")
        return (parent, root, root + "-evil")
    }

    static func manifest(_ paths: [String]) -> Data {
        Data(("[" + paths.map { #"{"path": "file://\#($0)", "thumbnail": null, "type": "image"}"# }.joined(separator: ",") + "]").utf8)
    }

    @Test(arguments: ["direct", "folder link", "dot-dot"])
    func shareOpenRefusesAnEntryInTheSiblingAsOutside(way: String) throws {
        let (parent, root, sibling) = try Self.layout()
        let path = switch way {
        case "direct": sibling + "/x.jpg"
        case "folder link": root + "/escape/x.jpg"
        default: root + "/../box-evil/x.jpg"
        }
        try Self.manifest([path]).write(to: URL(fileURLWithPath: root + "/manifests/evil.json"))
        let open = try ShareProcess.run(["open", "ShareMedia://dataUrl=evil#media", "--container", root, "--consume"])
        #expect(open.status == 1, "\(open.stderr)")
        #expect(open.stderr.contains("manifest entry 0: \(path): is outside the container; refused"), "\(open.stderr)")
        #expect(open.stdout.isEmpty, "\(open.stdout)")
        #expect(FileManager.default.fileExists(atPath: root + "/manifests/evil.json"), "the refused share was consumed")
        #expect(FileManager.default.contentsEqual(atPath: sibling + "/x.jpg", andPath: Fixtures.media("photo.jpg")))
        _ = parent
    }

    /// `gc` removes the files a consumed manifest names, but only inside the
    /// container: a consumed manifest rewritten to name the sibling's file
    /// (directly and through the folder link) must not make it remove that file.
    @Test func gcNeverRemovesAFileInTheSibling() throws {
        let (parent, root, sibling) = try Self.layout()
        try parent.add("drop/photo.jpg", copying: Fixtures.media("photo.jpg"))
        let ingest = try ShareProcess.run(["ingest", "--quiet", "--container", root, "--key", "Real", parent.file("drop")])
        #expect(ingest.status == 0, "\(ingest.stderr)")
        let open = try ShareProcess.run(["open", "ShareMedia://dataUrl=Real#media", "--container", root, "--consume"])
        #expect(open.status == 0, "\(open.stderr)")
        let consumed = root + "/manifests/consumed/Real.json"
        #expect(FileManager.default.fileExists(atPath: consumed))
        try Self.manifest([sibling + "/x.jpg", root + "/escape/x.jpg", root + "/../box-evil/x.jpg"]).write(to: URL(fileURLWithPath: consumed))
        let gc = try ShareProcess.run(["gc", "--container", root, "--older-than", "0"])
        #expect(gc.status == 0, "\(gc.stderr)")
        #expect(!FileManager.default.fileExists(atPath: consumed), "gc did not collect the consumed share: \(gc.stderr)")
        #expect(FileManager.default.fileExists(atPath: sibling + "/x.jpg"), "gc removed a file outside the container: \(gc.stdout)\(gc.stderr)")
    }
}
