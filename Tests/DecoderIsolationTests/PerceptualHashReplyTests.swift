import Foundation
import MediaFormats
import Testing

@testable import DecoderIsolation

/// A thumbnail's perceptual hash (issue 62, `similarTo`) as the parent checks
/// it: exactly 16 lowercase hexadecimal digits, reaching the parent as its
/// 64 bits, only with a thumbnail; anything else is refused.
@Suite struct PerceptualHashReplyTests {
    @Test func aPerceptualHashMustBeSixteenHexadecimalDigits() throws {
        try #require(!ReplyCheckTests.thumbnail.isEmpty)
        var reply = ReplyCheckTests.reply(ReplyCheckTests.photo)
        var result = reply.result
        result.thumbnailPerceptualHash = "9696056bd8a2657b"
        reply = HelperReply(result: result, jpeg: reply.jpeg)
        let decoded = try ReplyCheck.validate(reply, for: ReplyCheckTests.request()).get()
        guard case .made(let thumbnail) = decoded.thumbnail else {
            Issue.record("no thumbnail")
            return
        }
        #expect(thumbnail.perceptualHash == 0x9696_056b_d8a2_657b)
        for hash in [
            "9696056bd8a2657", "9696056bd8a2657b0", "9696056BD8A2657B", "9696056bd8a2657g", "+696056bd8a2657b", "",
            "0x96056bd8a2657b",
        ] {
            result.thumbnailPerceptualHash = hash
            #expect(
                ReplyCheckTests.refusal(HelperReply(result: result, jpeg: reply.jpeg))?.hasPrefix(
                    "a perceptual hash that is not 16 hexadecimal digits") == true,
                "\(hash)")
        }
        var without = ReplyCheckTests.reply(ReplyCheckTests.photo, width: nil, height: nil, jpeg: []).result
        without.thumbnailPerceptualHash = "9696056bd8a2657b"
        #expect(
            ReplyCheckTests.refusal(HelperReply(result: without, jpeg: [])) == "a perceptual hash without a thumbnail")
    }

    /// Its colour cells (the second check before naming a near-duplicate):
    /// exactly 96 lowercase hexadecimal digits, reaching the parent as 48 bytes
    /// (4×4 cells), only with a perceptual hash and a thumbnail; the 24 digits of
    /// quarters older records hold are refused from a helper.
    @Test func colourCellsMustBeNinetySixDigitsWithAHash() throws {
        let good = "0102030405060708090a0bff" + String(repeating: "00", count: 36)
        try #require(!ReplyCheckTests.thumbnail.isEmpty)
        let reply = ReplyCheckTests.reply(ReplyCheckTests.photo)
        var result = reply.result
        result.thumbnailPerceptualHash = "9696056bd8a2657b"
        result.thumbnailColourCells = good
        let decoded = try ReplyCheck.validate(
            HelperReply(result: result, jpeg: reply.jpeg), for: ReplyCheckTests.request()
        )
        .get()
        guard case .made(let thumbnail) = decoded.thumbnail else {
            Issue.record("no thumbnail")
            return
        }
        #expect(thumbnail.colourCells == [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 255] + Array(repeating: 0, count: 36))
        for cells in [
            "0102030405060708090a0bff", String(good.dropLast(2)), good + "00", good.uppercased(), "",
            "zz" + good.dropFirst(2),
        ] {
            result.thumbnailColourCells = cells
            #expect(
                ReplyCheckTests.refusal(HelperReply(result: result, jpeg: reply.jpeg))?.hasPrefix(
                    "colour cells that are not 96 hexadecimal digits") == true,
                "\(cells)")
        }
        result.thumbnailPerceptualHash = nil
        result.thumbnailColourCells = good
        #expect(
            ReplyCheckTests.refusal(HelperReply(result: result, jpeg: reply.jpeg))
                == "colour cells without a perceptual hash")
        var without = ReplyCheckTests.reply(ReplyCheckTests.photo, width: nil, height: nil, jpeg: []).result
        without.thumbnailColourCells = good
        #expect(ReplyCheckTests.refusal(HelperReply(result: without, jpeg: [])) == "colour cells without a thumbnail")
    }

    /// The helper's side: what it sends is what the parent accepts.
    @Test func theHelperSendsSixteenLowercaseDigits() {
        var thumbnail = Thumbnail(jpeg: [1], width: 1, height: 1)
        thumbnail.perceptualHash = 0xAB
        let result = WireResult(.success(DecodedMedia(facts: ReplyCheckTests.photo, thumbnail: .made(thumbnail))))
        #expect(result.thumbnailPerceptualHash == "00000000000000ab")
        thumbnail.colourCells = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 255] + Array(repeating: 16, count: 36)
        let cells = WireResult(.success(DecodedMedia(facts: ReplyCheckTests.photo, thumbnail: .made(thumbnail))))
        #expect(cells.thumbnailColourCells == "000102030405060708090aff" + String(repeating: "10", count: 36))
    }
}
