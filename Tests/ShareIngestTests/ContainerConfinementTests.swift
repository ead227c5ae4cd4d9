import Foundation
import Glibc
import ShareManifest
import SystemCalls
import TestSupport
import Testing

/// A manifest may only name files inside its container. The sibling folder
/// whose name extends the container's (`<root>-evil`) is the case a prefix
/// check without the trailing `/` lets through; here it exists, with a real
/// file in it, so an entry pointing there can only be refused as outside the
/// container, never as missing (a missing file is refused before the
/// confinement check runs).
@Suite struct ContainerConfinementTests {
    /// `<parent>/box` (the container, with a real photo) beside `<parent>/box-evil/x.jpg`,
    /// and inside the container `escape` (a link to the sibling folder) and
    /// `x-link.jpg` (a link to the sibling's file).
    struct Layout {
        let parent = TemporaryDirectory("confine")
        let root: String
        let sibling: String
        let container: ContainerDirectory

        init() throws {
            root = URL(fileURLWithPath: parent.path + "/box").standardizedFileURL.path
            sibling = root + "-evil"
            container = try ContainerDirectory(root)
            try parent.add("box/photo.jpg", copying: Fixtures.media("photo.jpg"))
            try parent.add("box-evil/x.jpg", copying: Fixtures.media("photo.jpg"))
            try FileManager.default.createSymbolicLink(atPath: root + "/escape", withDestinationPath: sibling)
            try FileManager.default.createSymbolicLink(
                atPath: root + "/x-link.jpg", withDestinationPath: sibling + "/x.jpg")
            // Not vacuous: every path below exists and is a regular file when followed.
            for path in [sibling + "/x.jpg", root + "/escape/x.jpg", root + "/x-link.jpg"] {
                #expect(FileManager.default.isReadableFile(atPath: path), "\(path) should exist")
            }
        }

        /// Paths leading into the sibling, and the refusal each must get.
        var escapes: [(String, ContainerPathError)] {
            [
                (sibling + "/x.jpg", .outsideContainer(sibling + "/x.jpg")),
                (root + "/../box-evil/x.jpg", .outsideContainer(root + "/../box-evil/x.jpg")),
                (
                    root + "/thumbnails/../../box-evil/x.jpg",
                    .outsideContainer(root + "/thumbnails/../../box-evil/x.jpg")
                ),
                // A folder link inside the container: the entry's last component is
                // a regular file, only its resolved path shows it is outside.
                (root + "/escape/x.jpg", .outsideContainer(root + "/escape/x.jpg")),
                // A link as the entry itself is refused as a link (never followed).
                (root + "/x-link.jpg", .symbolicLink(root + "/x-link.jpg")),
            ]
        }
    }

    @Test func aSiblingWhoseNameExtendsTheContainersIsOutsideIt() throws {
        let layout = try Layout()
        #expect(layout.container.checkedFile(layout.root + "/photo.jpg") == .success(layout.root + "/photo.jpg"))
        for (path, refusal) in layout.escapes {
            #expect(layout.container.checkedFile(path) == .failure(refusal), "\(path)")
        }
    }

    /// The container opened through a link to it: its real path is what files
    /// are compared with, and the sibling of that real path is still outside.
    @Test func aContainerOpenedThroughALinkStillConfinesToItsRealFolder() throws {
        let layout = try Layout()
        let alias = layout.parent.path + "/alias"
        try FileManager.default.createSymbolicLink(atPath: alias, withDestinationPath: layout.root)
        let container = try ContainerDirectory(alias)
        #expect(container.checkedFile(alias + "/photo.jpg") == .success(layout.root + "/photo.jpg"))
        #expect(
            container.checkedFile(layout.sibling + "/x.jpg") == .failure(.outsideContainer(layout.sibling + "/x.jpg")))
        #expect(container.checkedFile(alias + "/escape/x.jpg") == .failure(.outsideContainer(alias + "/escape/x.jpg")))
    }

    /// The host side: `RedirectHandler.open` refuses a manifest naming the
    /// sibling (as the path or as the thumbnail), by name and reason, and does
    /// not consume it; the same manifest naming the container's own photo opens.
    @Test func theRedirectHandlerRefusesEntriesIntoTheSibling() throws {
        let layout = try Layout()
        let handler = RedirectHandler(container: layout.container)
        let store = ManifestStore(container: layout.container)
        func write(_ key: String, path: String, thumbnail: String?) throws -> ShareKey {
            let json =
                #"[{"path": "file://\#(path)", "thumbnail": \#(thumbnail.map { "\"file://\($0)\"" } ?? "null"), "type": "image"}]"#
            let shareKey = try ShareKey(key)
            try Data(json.utf8).write(to: URL(fileURLWithPath: layout.container.manifestPath(key: shareKey)))
            return shareKey
        }
        let good = try write("good", path: layout.root + "/photo.jpg", thumbnail: nil)
        #expect(try handler.open(key: good).entries.count == 1)
        for (number, (path, refusal)) in layout.escapes.enumerated() {
            for asThumbnail in [false, true] {
                let key = try write(
                    "evil\(number)\(asThumbnail ? "t" : "")", path: asThumbnail ? layout.root + "/photo.jpg" : path,
                    thumbnail: asThumbnail ? path : nil)
                #expect(throws: RedirectError.badEntry(index: 0, refusal), "\(path)") {
                    try handler.open("ShareMedia://dataUrl=\(key.rawValue)#media", consume: true)
                }
                #expect(store.exists(key), "a refused manifest was consumed")
            }
        }
        #expect(
            FileManager.default.contentsEqual(atPath: layout.sibling + "/x.jpg", andPath: Fixtures.media("photo.jpg")))
    }
}

/// What `share gc` removes a share's files with: the regular files a folder
/// lists whose names are selected, in chunks (here of two, so several), each
/// relative to the open folder; a link, a folder and unselected names stay.
@Suite struct FolderRemovalTests {
    @Test(arguments: [false, true])
    func removesTheSelectedRegularFilesOnly(dryRun: Bool) throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("removal-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder + "/take-dir", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        for name in ["take-1", "take-2", "take-3", "take-4", "take-5", "keep-1"] {
            try Data(repeating: 7, count: name.count).write(to: URL(fileURLWithPath: folder + "/" + name))
        }
        try FileManager.default.createSymbolicLink(
            atPath: folder + "/take-link", withDestinationPath: folder + "/keep-1")
        var heard: [String: Int64] = [:]
        try DirectoryEntries.removeRegularFiles(
            in: Array(folder.utf8), display: folder, dryRun: dryRun, chunk: 2,
            where: { $0.starts(with: Array("take-".utf8)) },
            removed: { name, size in heard[String(decoding: name, as: UTF8.self)] = size })
        #expect(heard == ["take-1": 6, "take-2": 6, "take-3": 6, "take-4": 6, "take-5": 6])
        let left = Set(try FileManager.default.contentsOfDirectory(atPath: folder))
        #expect(
            left
                == (dryRun
                    ? ["take-1", "take-2", "take-3", "take-4", "take-5", "keep-1", "take-dir", "take-link"]
                    : ["keep-1", "take-dir", "take-link"]))
    }
}
