import DecoderHelperKit
import Foundation
import MediaFormats
import MediaKit
import TestSupport
import Testing

@testable import DecoderIsolation

/// The contact sheet is drawn where decoding is done (issue 59: `share` links
/// no libvips): the parent writes a ``ContactSheetPlan`` and a decoder draws
/// it. The plan read back is the plan written; a plan cut short, out of
/// bounds or with trailing bytes is refused; a sheet is accepted only at the
/// plan's size, and a helper's answer with more than the sheet is refused.
@Suite struct ContactSheetPlanTests {
    static func pixels(_ width: Int, _ height: Int, _ value: UInt8) -> DecodedPixels {
        DecodedPixels(
            width: width, height: height, stride: width * 3, bytes: [UInt8](repeating: value, count: width * height * 3)
        )!
    }

    static let plan = ContactSheetPlan(
        tiles: [
            ContactSheetTile(picture: .pixels(pixels(40, 30, 200)), caption: "a.jpg\n640 × 480"),
            ContactSheetTile(picture: .placeholder("PDF"), caption: "b.pdf"),
            ContactSheetTile(picture: .failed("failed"), caption: "<c>\u{7}.jpg\nfailed: damaged"),
        ], title: "Key · 2 of 3 ingested", layout: ContactSheetLayout(cellSize: 100), total: 5)

    @Test func aPlanReadBackIsThePlanWritten() throws {
        let read = try ContactSheetPlan(decoding: Self.plan.encoded())
        #expect(read == Self.plan)
        #expect(read.size == (width: 2 * 100 + 3 * 6, height: 30 + 2 * (100 + 36) + 3 * 6))
    }

    @Test func aDamagedPlanIsRefused() throws {
        let bytes = Self.plan.encoded()
        for cut in [0, 10, bytes.count / 2, bytes.count - 1] {
            #expect(throws: MediaError.self, "cut at \(cut)") {
                try ContactSheetPlan(decoding: Array(bytes.prefix(cut)))
            }
        }
        #expect(throws: MediaError.self) { try ContactSheetPlan(decoding: bytes + [0]) }
        // A cell of 100,000 pixels, or pixels larger than the cell's picture box.
        var huge = Self.plan
        huge.layout.cellSize = 100_000
        #expect(throws: MediaError.self) { try ContactSheetPlan(decoding: huge.encoded()) }
        var large = Self.plan
        large.tiles[0] = ContactSheetTile(picture: .pixels(Self.pixels(200, 10, 1)), caption: "x")
        #expect(throws: MediaError.self) { try ContactSheetPlan(decoding: large.encoded()) }
    }

    /// Drawn in this process (MediaKit) from the plan's bytes, as a helper
    /// does: a JPEG at exactly the plan's size, and the grid's numbers from the plan.
    @Test func aPlanIsDrawnAtItsSize() throws {
        let work = TemporaryDirectory("contact-sheet-plan")
        let path = work.file("plan")
        try Data(Self.plan.encoded()).write(to: URL(fileURLWithPath: path))
        let size = Self.plan.size
        let request = DecodeRequest(
            path: path, label: "the sheet", format: .jpeg, thumbnail: ThumbnailSpec(size: max(size.width, size.height)),
            task: .contactSheet)
        let drawn = try InProcessDecoder().decode(request)
        let sheet = try ContactSheet(plan: Self.plan, composed: drawn)
        #expect(sheet.width == size.width && sheet.height == size.height && sheet.jpeg.starts(with: [0xFF, 0xD8]))
        #expect(sheet.tileCount == 3 && sheet.omittedCount == 2 && sheet.columns == 2 && sheet.rows == 2)
        // The same answer at another size is not this plan's sheet.
        var other = drawn
        if case .made(let made) = drawn.thumbnail {
            other.thumbnail = .made(Thumbnail(jpeg: made.jpeg, width: made.width + 1, height: made.height))
        }
        #expect(throws: MediaError.self) { try ContactSheet(plan: Self.plan, composed: other) }
    }

    /// A helper's answer to a sheet request: the sheet alone, its JPEG's frame
    /// the size it says, at most the size asked for.
    @Test func aHelpersSheetAnswerIsChecked() throws {
        let thumbnail = ReplyCheckTests.thumbnail
        try #require(!thumbnail.isEmpty)
        let request = DecodeRequest(
            path: "/tmp/plan", label: "the sheet", format: .jpeg, thumbnail: ThumbnailSpec(size: 400),
            task: .contactSheet)
        let facts = MediaFacts(kind: .image, width: 360, height: 270)
        #expect(ReplyCheckTests.refusal(ReplyCheckTests.reply(facts), request) == nil)
        // Its JPEG is not the size it says; its facts disagree; more than the sheet.
        #expect(ReplyCheckTests.refusal(ReplyCheckTests.reply(facts, width: 300, height: 225), request) != nil)
        #expect(
            ReplyCheckTests.refusal(ReplyCheckTests.reply(MediaFacts(kind: .image, width: 720, height: 540)), request)
                != nil)
        var withHash = ReplyCheckTests.reply(facts).result
        withHash.thumbnailThumbHash = "AAAA"
        #expect(ReplyCheckTests.refusal(HelperReply(result: withHash, jpeg: thumbnail[...]), request) != nil)
        let small = DecodeRequest(
            path: "/tmp/plan", label: "the sheet", format: .jpeg, thumbnail: ThumbnailSpec(size: 200),
            task: .contactSheet)
        #expect(ReplyCheckTests.refusal(ReplyCheckTests.reply(facts), small) != nil)
    }
}
