import MediaFormats
import SystemCalls

/// A file read on demand through its descriptor (`pread`, never moving its
/// position), in 64 KiB pages of which the last few are kept: directories of
/// a RAW are small reads close to each other, previews one large read.
final class DescriptorBytes: RandomAccessBytes {
    let descriptor: Int32
    private let file: FileDescriptor
    let count: Int
    static let pageSize = 64 << 10
    static let cachedPages = 16
    private var pages: [Int: [UInt8]] = [:]
    private var order: [Int] = []

    init(_ descriptor: Int32) {
        self.descriptor = descriptor
        file = FileDescriptor(borrowing: descriptor)
        count = Int((try? file.status(path: "the file").size) ?? 0)
    }

    func read(_ range: Range<Int>) -> [UInt8]? {
        guard range.lowerBound >= 0, range.upperBound <= count else { return nil }
        if range.isEmpty { return [] }
        let first = range.lowerBound / Self.pageSize
        let last = (range.upperBound - 1) / Self.pageSize
        // Large reads (a preview) go straight to the file.
        guard last - first < 2 else { return readDirectly(range) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(range.count)
        for index in first...last {
            guard let page = page(index) else { return nil }
            let start = index * Self.pageSize
            let from = max(range.lowerBound, start) - start
            let to = min(range.upperBound, start + page.count) - start
            guard from <= to else { return nil }
            bytes += page[from..<to]
        }
        return bytes.count == range.count ? bytes : nil
    }

    private func page(_ index: Int) -> [UInt8]? {
        if let page = pages[index] { return page }
        let start = index * Self.pageSize
        guard let page = readDirectly(start..<min(count, start + Self.pageSize)) else { return nil }
        pages[index] = page
        order.append(index)
        if order.count > Self.cachedPages { pages[order.removeFirst()] = nil }
        return page
    }

    private func readDirectly(_ range: Range<Int>) -> [UInt8]? {
        var failed = false
        let bytes = [UInt8](unsafeUninitializedCapacity: range.count) { buffer, filled in
            do throws(SystemError) {
                filled = try file.read(
                    into: UnsafeMutableRawBufferPointer(buffer), at: Int64(range.lowerBound), path: "the file")
            } catch {
                filled = 0
                failed = true
            }
        }
        return failed || bytes.count != range.count ? nil : bytes
    }
}
