import Foundation
import Glibc
import MediaFormats
import ShareIngest
import ShareManifest
import SystemCalls
import TestSupport
import Testing

@testable import ShareIngestCore

/// The costliest items are decoded first and decoder memory is bounded (issue
/// 16). Order and waiting are observed, never timed.
@Suite struct SchedulingTests {
    final class Box: @unchecked Sendable {
        let value: Double
        init(_ value: Double) { self.value = value }
    }

    @Test func aPriorityQueueHandsOutTheCostliestWaitingItemFirst() {
        let queue = BlockingQueue<Box>(capacity: 8) { $0.value > $1.value }
        for value in [1.0, 5, 3, 5, 2] { queue.push(Box(value)) }
        queue.close()
        var order: [Double] = []
        while let box = queue.pop() { order.append(box.value) }
        #expect(order == [5, 5, 3, 2, 1])
    }

    @Test func aPlainQueueStaysFirstInFirstOut() {
        let queue = BlockingQueue<Box>(capacity: 8)
        for value in [1.0, 5, 3] { queue.push(Box(value)) }
        queue.close()
        var order: [Double] = []
        while let box = queue.pop() { order.append(box.value) }
        #expect(order == [1, 5, 3])
    }

    /// A timed pop (the worker's executor waits this way while records of items
    /// it ran wait to be made) returns what is there, says when nothing came in
    /// time, and says when the queue is closed and empty; a push wakes it.
    @Test func aTimedPopTellsAnElementFromATimeoutFromTheEnd() {
        let queue = BlockingQueue<Box>(capacity: 8)
        guard case .timedOut = queue.pop(waitingAtMost: 0) else {
            Issue.record("an empty queue gave something")
            return
        }
        guard case .timedOut = queue.pop(waitingAtMost: 0.01) else {
            Issue.record("an empty queue gave something")
            return
        }
        queue.push(Box(7))
        guard case .element(let box) = queue.pop(waitingAtMost: 0) else {
            Issue.record("the waiting element was not given")
            return
        }
        #expect(box.value == 7)
        // A push from another thread ends a wait long enough to fail any test run.
        let join = WorkerThreads.start(name: "timed-pop-test", count: 1) { _ in queue.push(Box(8)) }
        guard case .element(let pushed) = queue.pop(waitingAtMost: 3600) else {
            Issue.record("a push did not end the wait")
            return
        }
        #expect(pushed.value == 8)
        join()
        queue.push(Box(9))
        queue.close()
        guard case .element(let last) = queue.pop(waitingAtMost: 3600) else {
            Issue.record("closing dropped a waiting element")
            return
        }
        #expect(last.value == 9)
        guard case .closed = queue.pop(waitingAtMost: 3600) else {
            Issue.record("a closed, empty queue did not say so")
            return
        }
    }

    /// A decode that does not fit the budget waits for one that runs; one larger
    /// than the whole budget still runs when it is alone.
    @Test func theMemoryBudgetHoldsBackWhatDoesNotFit() {
        let budget = DecodeBudget(limit: 100)
        budget.acquire(300)  // alone: runs although over the budget
        let done = BlockingQueue<Int>(capacity: 4)
        let join = WorkerThreads.start(name: "budget-test", count: 1) { _ in
            budget.acquire(50)
            done.push(50)
            budget.release(50)
        }
        budget.waitForWaiters(1)  // the second decode waits for the first
        budget.release(300)
        #expect(done.pop() == 50)
        join()
        #expect(budget.waiters == 0)
        budget.acquire(60)
        budget.acquire(40)  // fits beside it
        budget.release(60)
        budget.release(40)
    }

    /// The header sizes the cost estimate uses, read from the sniffer's prefix.
    @Test(arguments: [
        ("screenshot.png", 600, 400), ("photo.jpg", 640, 480), ("image.webp", 640, 480), ("animated.gif", 200, 100),
        ("image.heic", 640, 480),
    ])
    func headerSizes(name: String, width: Int, height: Int) throws {
        let prefix = [UInt8](
            try Data(contentsOf: URL(fileURLWithPath: Fixtures.media(name))).prefix(ContentSniffer.prefixLength))
        let format = ContentSniffer.sniff(prefix, fileName: name).format
        let size = HeaderDimensions.size(of: prefix, format: format)
        #expect(size?.width == width && size?.height == height, "\(String(describing: size))")
    }

    /// An MP4 whose `moov` comes first: the track header's size (16.16 fixed point).
    @Test func videoTrackHeaderSize() {
        func box(_ type: String, _ payload: [UInt8]) -> [UInt8] {
            let size = UInt32(8 + payload.count)
            return withUnsafeBytes(of: size.bigEndian, Array.init) + Array(type.utf8) + payload
        }
        let tkhd = box("tkhd", [0, 0, 0, 0] + [UInt8](repeating: 0, count: 72) + [0x0F, 0x00, 0, 0, 0x08, 0x70, 0, 0])
        let prefix =
            box("ftyp", Array("isom\0\0\0\0isom".utf8)) + box("moov", box("trak", tkhd))
            + [UInt8](repeating: 0, count: 64)
        let size = HeaderDimensions.size(of: prefix, format: .mp4)
        #expect(size?.width == 3840 && size?.height == 2160, "\(String(describing: size))")
    }

    /// An MP4 whose `moov` follows the media data (as phones write them): found
    /// by walking the top-level boxes, its track size read.
    @Test func videoTrackSizeFromAMovieAtTheEnd() throws {
        let path = Fixtures.media("clip-h264.mp4")
        let fd = try FileDescriptor.open(path, O_RDONLY)
        let moov = try #require(SniffStage.movieHeader(fd, path: path))
        let size = HeaderDimensions.size(of: moov, format: .mp4)
        #expect(size?.width == 320 && size?.height == 240, "\(String(describing: size))")
    }

    /// A 12 MP HEIC costs more than a 12 MP JPEG, a 4K video more than a small
    /// one, anything decodable more than a text file.
    @Test func costsOrderTheUsualDrop() {
        let heic = DecodeCost.estimate(format: .heic, size: 2_600_000, pixels: 4032 * 3024)
        let jpeg = DecodeCost.estimate(format: .jpeg, size: 4_000_000, pixels: 4032 * 3024)
        let video4K = DecodeCost.estimate(format: .mov, size: 40_000_000, pixels: 3840 * 2160)
        let video = DecodeCost.estimate(format: .mp4, size: 40_000_000, pixels: 640 * 360)
        let text = DecodeCost.estimate(format: .text, size: 4_000, pixels: nil)
        #expect(heic > jpeg && video4K > video && jpeg > text && text == .zero)
    }
}
