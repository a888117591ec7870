private import Threads

/// Counts the requests the application has seen and whose connection has not yet finished with them, so that a
/// graceful stop can wait for their responses to be sent.
///
/// `@unchecked Sendable`: `count` and `draining` are only read or written while `condition` is locked.
final class InFlightRequests: @unchecked Sendable {
    private let condition = Condition()
    private var count = 0
    private var draining = false

    /// Records a request reaching the application.
    func begin() {
        condition.lock()
        count += 1
        condition.unlock()
    }

    /// Records a request's connection being done with it (response sent, or the connection closed), waking
    /// ``drain(waitingAtMost:)`` when it was the last.
    func end() {
        condition.lock()
        count -= 1
        if count <= 0 {
            condition.broadcast()
        }
        condition.unlock()
    }

    /// Whether the server is shutting down, so responses should close their connections.
    var isDraining: Bool {
        condition.withLock { draining }
    }

    /// Marks the server as shutting down, then waits until no request is in flight or `seconds` have passed;
    /// returns whether it became idle.
    @discardableResult
    func drain(waitingAtMost seconds: Int) -> Bool {
        let deadline = Deadline(after: .seconds(seconds))
        condition.lock()
        defer { condition.unlock() }
        draining = true
        while count > 0 {
            guard condition.wait(until: deadline) else {
                return count <= 0
            }
        }
        return true
    }
}
