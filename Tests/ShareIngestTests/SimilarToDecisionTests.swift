import Foundation
import MediaFormats
import ShareManifest
import TestSupport
import Testing

@testable import ShareIngestCore

/// The fan-in's decision (``SimilarPictures``, issue 62's 0.1 %): near hashes
/// are named only when their 4×4 colour cells are alike
/// (``PerceptualHash/coloursAlike(_:_:)``); a record of quarters only (written
/// before the 4×4 cells) is judged by the older rule against any other.
@Suite struct SimilarToDecisionTests {
    static func item(_ index: Int, _ record: String) -> ItemState {
        var item = ItemState(index: index, id: UUID(), source: .text(""), label: "drop/\(index).jpg")
        (item.copyPath, item.thumbnailPath, item.perceptualHash) = ("/c/\(index).jpg", "/c/t/\(index).jpg", record)
        return item
    }

    /// 48 bytes of cells: a smooth picture of one colour, `red` `green` `blue`
    /// darkening by 4 levels a row.
    static func cells(_ red: Int, _ green: Int, _ blue: Int) -> [UInt8] {
        (0..<16).flatMap { cell in [red, green, blue].map { UInt8($0 - 4 * (cell / 4)) } }
    }

    static func record(_ hash: UInt64, _ cells: [UInt8]) -> String { PerceptualHash.record(hash, colours: cells) }

    /// Two walls in two lights, 30 levels apart in red: their quarters are
    /// within the older 40 levels, their cells are not, so the second names
    /// nothing; a copy of the first, 2 levels off, names it; an older record of
    /// the second's quarters only, with the first's hash, is judged by the
    /// quarters (30 levels off, within 40) and names the first.
    @Test func nearHashesOfCellsApartAreNotSimilarButOlderRecordsKeepTheirRule() throws {
        let folder = TemporaryDirectory("similar-cells")
        var similar = SimilarPictures(earlier: [], container: try ContainerDirectory(folder.path)) { _, _ in nil }
        let hash: UInt64 = 0xb258_af45_ad45_ad45
        let beige = Self.cells(200, 180, 150)
        let grey = Self.cells(170, 180, 150)
        #expect(PerceptualHash.coloursAlike(PerceptualHash.quarters(beige), PerceptualHash.quarters(grey)))
        let older = PerceptualHash.hex(hash) + "-" + PerceptualHash.hex(colours: PerceptualHash.quarters(grey))
        var items = [
            Self.item(0, Self.record(hash, beige)), Self.item(1, Self.record(hash ^ 1, grey)),
            Self.item(2, Self.record(hash ^ 2, Self.cells(202, 178, 150))), Self.item(3, older),
        ]
        for i in items.indices { _ = similar.resolve(&items[i]) }
        #expect(
            items.map(\.similarTo) == [
                nil, nil, SimilarRecord(path: "/c/0.jpg", distance: 1), SimilarRecord(path: "/c/0.jpg", distance: 0),
            ])
    }
}
