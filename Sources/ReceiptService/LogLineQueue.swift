import Dispatch
import Synchronization
import Threads

/// Log lines on their way out, so that logging never blocks serving: ``append(_:)`` only queues a line, and one
/// writer thread hands the lines, in order and in batches, to the blocking `write` given at creation. The writer
/// looks at the queue every ``flushInterval`` (sooner when it fills up or closes), so a busy server wakes it a few
/// hundred times a second rather than once per request. When the writer falls behind (a reader that stopped
/// reading the pipe on standard output) and `capacity` lines are waiting, further lines are dropped and counted in
/// ``droppedLines`` (the service's `receipt_log_lines_dropped_total`).
public final class LogLineQueue: Sendable {
    private struct State {
        var waiting: [String] = []
        var dropped = 0
        var closed = false
    }

    private let capacity: Int
    private let state = Mutex(State())
    private let wakeup = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)

    /// How long a line waits at most before the writer takes it, unless the writer is busy writing.
    public static let flushInterval: DispatchTimeInterval = .milliseconds(10)

    /// Starts the writer thread, which calls `write` with each batch of lines taken from the queue, oldest first.
    ///
    /// - Parameter capacity: how many lines may wait for the writer (at least 1); 4096 lines of a request log are
    ///   about 1 MiB, and at several thousand requests a second they bridge a reader's pause of about a second.
    /// Throws when the system cannot make the writer's thread.
    public init(capacity: Int = 4096, write: @escaping @Sendable (_ lines: [String]) -> Void) throws(ThreadStartError) {
        self.capacity = max(capacity, 1)
        try DetachedThread.start { [self] in drain(into: write) }
    }

    /// Queues `line` for the writer, or drops it when `capacity` lines are already waiting. Never waits for the
    /// writer.
    public func append(_ line: String) {
        let wake = state.withLock { state -> Bool in
            guard !state.closed, state.waiting.count < capacity else {
                state.dropped += 1
                return false
            }
            state.waiting.append(line)
            return state.waiting.count == max(capacity / 2, 1)
        }
        if wake {
            wakeup.signal()
        }
    }

    /// How many lines were dropped so far.
    public var droppedLines: Int {
        state.withLock { $0.dropped }
    }

    /// Stops taking lines (later ones are dropped), and waits up to `seconds` for the writer to write those
    /// already queued; returns whether it finished. Call once.
    @discardableResult
    public func close(waitingAtMost seconds: Double) -> Bool {
        state.withLock { $0.closed = true }
        wakeup.signal()
        return finished.wait(timeout: .now() + seconds) == .success
    }

    private func drain(into write: @Sendable ([String]) -> Void) {
        while true {
            _ = wakeup.wait(timeout: .now() + Self.flushInterval)
            let (lines, closed) = state.withLock { state in
                defer { state.waiting = [] }
                return (state.waiting, state.closed)
            }
            if !lines.isEmpty {
                write(lines)
            }
            if closed {
                let rest = state.withLock { state in
                    defer { state.waiting = [] }
                    return state.waiting
                }
                if !rest.isEmpty {
                    write(rest)
                }
                finished.signal()
                return
            }
        }
    }
}
