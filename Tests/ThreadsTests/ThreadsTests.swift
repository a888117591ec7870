import Dispatch
import Glibc
import Testing
import Threads

/// What the threads of a test look at.
///
/// `@unchecked Sendable`: every property is only read or written while the test's ``Condition`` is locked.
private final class Shared: @unchecked Sendable {
    var waiting = 0
    var go = false
    var woken = 0
    var released = 0
}

/// How long a test waits for what should happen at once before it fails rather than hangs.
private var patience: DispatchTime { .now() + 10 }

@Suite("Threads: a condition over a pthread mutex, and detached threads")
struct ThreadsTests {
    /// Starts `count` threads that each wait on `condition` until `shared.go`, then count themselves woken; returns
    /// once all of them are waiting. `finished` is entered once per thread and left when it has been woken.
    private func startWaiters(_ count: Int, on condition: Condition, _ shared: Shared, _ finished: DispatchGroup) throws
    {
        for _ in 0..<count {
            finished.enter()
            try DetachedThread.start {
                condition.withLock {
                    shared.waiting += 1
                    condition.broadcast()
                    while !shared.go { condition.wait() }
                    shared.woken += 1
                }
                finished.leave()
            }
        }
        condition.withLock {
            while shared.waiting < count { condition.wait() }
        }
    }

    @Test(
        "a thread waiting on the condition wakes when another changes the state and signals; broadcast wakes all",
        arguments: [(1, false), (8, true)])
    func wakeWaiters(count: Int, broadcast: Bool) throws {
        let condition = Condition()
        let shared = Shared()
        let finished = DispatchGroup()
        try startWaiters(count, on: condition, shared, finished)
        condition.withLock {
            shared.go = true
            if broadcast { condition.broadcast() } else { condition.signal() }
        }
        #expect(finished.wait(timeout: patience) == .success)
        #expect(condition.withLock { shared.woken } == count)
    }

    @Test("a timed wait nobody signals returns false after its deadline, and not long after")
    func timedWaitTimesOut() {
        let condition = Condition()
        let deadline = Deadline(after: .milliseconds(150))
        let late = Deadline(after: .seconds(5))
        let timedOut = condition.withLock {
            // A spurious wake-up returns true before the deadline: wait again, as every waiter does.
            while condition.wait(until: deadline) {}
            return Deadline.now
        }
        #expect(timedOut >= deadline)
        #expect(timedOut < late)
    }

    @Test("a timed wait signalled before its deadline returns true without waiting for it")
    func timedWaitWokenEarly() throws {
        let condition = Condition()
        let shared = Shared()
        let deadline = Deadline(after: .seconds(30))
        try DetachedThread.start {
            condition.withLock {
                shared.go = true
                condition.signal()
            }
        }
        let wokenInTime = condition.withLock {
            while !shared.go {
                guard condition.wait(until: deadline) else { return false }
            }
            return true
        }
        #expect(wokenInTime)
        #expect(Deadline.now < deadline)
    }

    @Test("a deadline already past ends a wait at once; one too far to count is the farthest, not a trap")
    func extremeDeadlines() {
        let condition = Condition()
        #expect(condition.withLock { condition.wait(until: Deadline(after: .seconds(-1))) } == false)
        #expect(Deadline(after: .seconds(-1)) < Deadline.now)
        #expect(Deadline(after: .seconds(Int64.max)) > Deadline(after: .seconds(1_000_000_000)))
        #expect(Deadline(after: .seconds(Int64.min)) < Deadline.now)
    }

    @Test("a started thread runs its closure on a thread of its own, then lets go of what the closure captured")
    func startedThreadRunsItsClosure() throws {
        let caller = pthread_self()
        let condition = Condition()
        let shared = Shared()
        do {
            let captured = Captured(condition, shared)
            try DetachedThread.start {
                let onOtherThread = pthread_equal(pthread_self(), caller) == 0
                condition.withLock {
                    _ = captured
                    shared.go = onOtherThread
                    shared.woken += 1
                }
            }
        }
        let deadline = Deadline(after: .seconds(10))
        let released = condition.withLock {
            while shared.released == 0 {
                guard condition.wait(until: deadline) else { return false }
            }
            return true
        }
        #expect(released)
        #expect(condition.withLock { shared.woken == 1 && shared.go })
    }

    @Test("a result computed on a thread of its own is what value gives, value waiting until it is there")
    func threadResultWaitsForItsValue() throws {
        let condition = Condition()
        let shared = Shared()
        let caller = pthread_self()
        let result = ThreadResult<Bool> {
            // Held until another thread lets it go, so that value is most likely asked for before it is there.
            let released = condition.withLock { () -> Bool in
                let deadline = Deadline(after: .seconds(10))
                while !shared.go {
                    guard condition.wait(until: deadline) else { return false }
                }
                return true
            }
            return released && pthread_equal(pthread_self(), caller) == 0
        }
        try DetachedThread.start {
            condition.withLock {
                shared.go = true
                condition.broadcast()
            }
        }
        #expect(result.value)
        #expect(result.value)
    }
}

/// Something a thread's closure holds: counts itself released in `shared`, and signals, when it goes.
private final class Captured: Sendable {
    let condition: Condition
    let shared: Shared

    init(_ condition: Condition, _ shared: Shared) {
        self.condition = condition
        self.shared = shared
    }

    deinit {
        condition.withLock {
            shared.released += 1
            condition.signal()
        }
    }
}
