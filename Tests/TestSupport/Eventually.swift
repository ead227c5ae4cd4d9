import Foundation

/// Polls `condition` every 20 ms until it holds or `timeout` passes: the tests
/// wait on observable state, never on a fixed sleep.
public func eventually(timeout: Double = 120, _ condition: () throws -> Bool) rethrows -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        if try condition() { return true }
        usleep(20_000)
    }
    return false
}
