import Foundation

/// A bounded FIFO between stages: `push` waits while it is full (backpressure,
/// so memory stays flat whatever the batch size) and `pop` waits while it is
/// empty, until the queue is closed and drained. With an order (`precedes`),
/// `pop` takes the waiting element that comes first in it (the oldest of
/// equals), not the oldest.
/// (`@unchecked`: its state is only touched under `condition`, a lock with the
/// wait/broadcast that Mutex lacks.)
final class BlockingQueue<Element>: @unchecked Sendable {
    private let condition = NSCondition()
    private var items: [Element] = []
    private var head = 0
    private var closed = false
    let capacity: Int
    private let precedes: (@Sendable (Element, Element) -> Bool)?

    init(capacity: Int, precedes: (@Sendable (Element, Element) -> Bool)? = nil) {
        self.capacity = max(1, capacity)
        self.precedes = precedes
    }

    func push(_ element: Element) {
        condition.lock()
        while items.count - head >= capacity && !closed { condition.wait() }
        items.append(element)
        condition.broadcast()
        condition.unlock()
    }

    /// The next element, or nil once closed and empty.
    func pop() -> Element? {
        condition.lock()
        defer { condition.unlock() }
        while head == items.count && !closed { condition.wait() }
        return head < items.count ? takeNext() : nil
    }

    /// What ``pop(waitingAtMost:)`` found.
    enum Timed {
        case element(Element)
        /// Nothing came within the time.
        case timedOut
        /// Closed and empty.
        case closed
    }

    /// The next element, waiting at most `seconds` for one.
    func pop(waitingAtMost seconds: Double) -> Timed {
        let deadline = Date(timeIntervalSinceNow: max(0, seconds))
        condition.lock()
        defer { condition.unlock() }
        while head == items.count && !closed {
            if !condition.wait(until: deadline) { break }
        }
        if head < items.count { return .element(takeNext()) }
        return closed ? .closed : .timedOut
    }

    /// Takes the element `pop` returns (under the lock, with one waiting).
    private func takeNext() -> Element {
        if let precedes, items.count - head > 1 {
            // Bring the element that comes first to the head (the queue is
            // short: a stage's capacity).
            var best = head
            for i in (head + 1)..<items.count where precedes(items[i], items[best]) { best = i }
            if best != head {
                let chosen = items.remove(at: best)
                items.insert(chosen, at: head)
            }
        }
        let element = items[head]
        head += 1
        if head > 64 && head * 2 > items.count {
            items.removeFirst(head)
            head = 0
        }
        condition.broadcast()
        return element
    }

    func close() {
        condition.lock()
        closed = true
        condition.broadcast()
        condition.unlock()
    }

    /// Elements waiting now.
    var count: Int {
        condition.lock()
        defer { condition.unlock() }
        return items.count - head
    }

    /// Closes the queue and takes the elements nobody popped.
    func drain() -> [Element] {
        condition.lock()
        defer { condition.unlock() }
        closed = true
        let rest = Array(items[head...])
        items = []
        head = 0
        condition.broadcast()
        return rest
    }
}

/// Threads of our own for blocking native work (libvips, libav, copies, fsync),
/// so Swift's cooperative pool (one thread per core) is never blocked.
enum WorkerThreads {
    /// Starts `count` threads running `body(workerIndex)`; `join` waits for all of them.
    static func start(name: String, count: Int, _ body: @escaping @Sendable (Int) -> Void) -> (@Sendable () -> Void) {
        let group = DispatchGroup()
        for index in 0..<count {
            group.enter()
            let thread = Thread {
                body(index)
                group.leave()
            }
            thread.name = "\(name)-\(index)"
            thread.stackSize = 8 << 20
            thread.start()
        }
        return { group.wait() }
    }
}
