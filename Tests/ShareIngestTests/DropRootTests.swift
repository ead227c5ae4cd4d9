import Foundation
import ShareIngest
import ShareManifest
import SystemCalls
import TestSupport
import Testing

@testable import ShareIngestCore

/// The pieces of the drop boundary (issue 51) on their own: what opening
/// beneath a folder refuses, where a link of the drop leads, and that what
/// the plan records of a source (its root, the version the walk saw, why the
/// walk refused it) survives the journal's and the queue's round trip, so a
/// resumed batch and a worker check the same.
struct DropRootTests {
    /// A drop with a file, a folder, links inside and out, and a canary outside it.
    static func makeDrop() throws -> (TemporaryDirectory, DropRoot) {
        let work = TemporaryDirectory("drop-root")
        let files = FileManager.default
        try files.createDirectory(atPath: work.path + "/drop/sub", withIntermediateDirectories: true)
        try files.createDirectory(atPath: work.path + "/outside", withIntermediateDirectories: true)
        try Data("inside".utf8).write(to: URL(fileURLWithPath: work.path + "/drop/sub/a.txt"))
        try Data("canary".utf8).write(to: URL(fileURLWithPath: work.path + "/outside/a.txt"))
        try files.createSymbolicLink(atPath: work.path + "/drop/out", withDestinationPath: work.path + "/outside")
        try files.createSymbolicLink(atPath: work.path + "/drop/up", withDestinationPath: "../outside/a.txt")
        try files.createSymbolicLink(atPath: work.path + "/drop/in", withDestinationPath: "sub/../sub/a.txt")
        try files.createSymbolicLink(
            atPath: work.path + "/drop/sub/back", withDestinationPath: work.path + "/drop/sub/a.txt")
        try files.createSymbolicLink(atPath: work.path + "/drop/loop", withDestinationPath: "loop")
        try files.createSymbolicLink(atPath: work.path + "/drop/folder", withDestinationPath: "sub")
        return (work, try DropRoot(opening: SourcePath(work.path + "/drop"), followingFinalLink: false))
    }

    @Test func opensOnlyBeneathTheRootAndNeverThroughALink() throws {
        let (work, root) = try Self.makeDrop()
        defer { withExtendedLifetime(work) {} }
        let read = try root.openFile(Array("sub/a.txt".utf8)).read(count: 16, at: 0, path: "a")
        #expect(String(decoding: read, as: UTF8.self) == "inside")
        for (path, code) in [
            ("out/a.txt", ELOOP), ("up", ELOOP), ("in", ELOOP), ("../outside/a.txt", EXDEV), ("/etc/hostname", EXDEV),
        ] {
            #expect(throws: SystemError.self, "\(path)") { _ = try root.openFile(Array(path.utf8)) }
            do { _ = try root.openFile(Array(path.utf8)) } catch { #expect(error.code == code, "\(path): \(error)") }
        }
        // A folder that is a link is refused as a folder too.
        do {
            _ = try root.openFolder(Array("folder".utf8))
            Issue.record("a linked folder was opened")
        } catch { #expect(error.code == ELOOP, "\(error)") }
    }

    @Test func aLinkLeadsOnlyToARegularFileInsideTheDrop() throws {
        let (work, root) = try Self.makeDrop()
        defer { withExtendedLifetime(work) {} }
        func target(_ link: String) -> String {
            switch root.follow(link: Array(link.utf8)) {
            case .file(let relative, _): "file " + String(decoding: relative, as: UTF8.self)
            case .outside: "outside"
            case .broken: "broken"
            case .notRegularFile(let type): "not a file (\(type))"
            }
        }
        #expect(target("in") == "file sub/a.txt")
        #expect(target("sub/back") == "file sub/a.txt")
        #expect(target("up") == "outside")
        #expect(target("out") == "outside")
        #expect(target("loop") == "broken")
        #expect(target("folder") == "not a file (directory)")
    }

    @Test func theSourceAsPlannedSurvivesItsRecord() throws {
        let version = FileVersion(
            device: 66306, inode: 1 << 40, size: 1234, modifiedSeconds: -86_400, modifiedNanoseconds: 999_999_999)
        let refused = ItemFailure(
            .copy, .symbolicLink, "/drop/x is a symbolic link pointing outside the drop; not followed")
        // As the plan makes it: the root recorded with the source, what the walk saw as the item's sourceVersion.
        let file = SourceFile(
            root: SourcePath("/inbox/.processing/B/drop"), relative: Array("zzz/X.jpg".utf8), name: "X.jpg",
            expected: nil)
        var item = ItemState(index: 4, id: UUID(), source: .file(file), label: "/inbox/drop/zzz/X.jpg")
        item.sourceVersion = version
        var sidecar = CarriedSidecar(
            index: 5, name: "X.jpg.json", ownPath: SourcePath("/elsewhere/sub/X.jpg.json"),
            ownLabel: "elsewhere/sub/X.jpg.json", size: 12)
        sidecar.ownRootLength = "/elsewhere".utf8.count
        sidecar.expected = version
        var plain = CarriedSidecar(index: 6, name: "X.jpg.xmp", ownPath: nil, ownLabel: nil, size: 40)
        plain.expected = version
        item.carriedSidecars = [sidecar, plain]
        let read = try JSONDecoder().decode(ItemState.self, from: JSONEncoder().encode(item))
        #expect(read == item)
        guard case .file(let back) = read.source else {
            Issue.record("not a file")
            return
        }
        #expect(
            back.root == SourcePath("/inbox/.processing/B/drop") && back.relative == Array("zzz/X.jpg".utf8)
                && read.sourceVersion == version)
        #expect(read.carriedSidecars[0].source(carriedBy: read).root == SourcePath("/elsewhere"))
        #expect(read.carriedSidecars[0].source(carriedBy: read).relative == Array("sub/X.jpg.json".utf8))
        #expect(
            read.carriedSidecars[1].source(carriedBy: read)
                == SourceFile(
                    path: SourcePath("/inbox/.processing/B/drop/zzz/X.jpg.xmp"), name: "X.jpg.xmp",
                    rootLength: file.rootLength, expected: version))
        let skipped = ItemState(
            index: 7, id: UUID(), source: .file(SourceFile(path: SourcePath("/drop/x"), name: "x", refused: refused)),
            label: "/drop/x")
        #expect(try JSONDecoder().decode(ItemState.self, from: JSONEncoder().encode(skipped)) == skipped)
        // A file whose root is its own folder records no root: read back, its own folder is its root.
        let flat = SourceFile(root: SourcePath("/drop"), relative: Array("a.txt".utf8), name: "a.txt", expected: nil)
        let flatItem = ItemState(index: 8, id: UUID(), source: .file(flat), label: "/drop/a.txt")
        let flatRead = try JSONDecoder().decode(ItemState.self, from: JSONEncoder().encode(flatItem))
        guard case .file(let flatBack) = flatRead.source else { return }
        #expect(flatBack.root == SourcePath("/drop") && flatBack.relative == Array("a.txt".utf8))
    }

    /// A version is recorded as one array; one recorded before, as an object, still reads.
    @Test func aVersionIsRecordedAsAnArrayAndReadEitherWay() throws {
        let version = FileVersion(
            device: 66306, inode: 1 << 40, size: 1234, modifiedSeconds: -86_400, modifiedNanoseconds: 999_999_999)
        let encoded = String(decoding: try JSONEncoder().encode(version), as: UTF8.self)
        #expect(encoded == "[66306,1099511627776,1234,-86400,999999999]")
        #expect(try JSONDecoder().decode(FileVersion.self, from: Data(encoded.utf8)) == version)
        let before =
            #"{"device":66306,"inode":1099511627776,"modifiedNanoseconds":999999999,"modifiedSeconds":-86400,"size":1234}"#
        #expect(try JSONDecoder().decode(FileVersion.self, from: Data(before.utf8)) == version)
    }
}
