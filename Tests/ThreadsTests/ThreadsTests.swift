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
    var allowedCPUs: String?
    var cpu: Int?
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

    @Test("a started thread may run on every CPU its caller may run on")
    func startedThreadTakesBackTheCallersCPUs() throws {
        let callers = try #require(allowedCPUs())
        let condition = Condition()
        let shared = Shared()
        try DetachedThread.start {
            let allowed = allowedCPUs()
            condition.withLock {
                shared.allowedCPUs = allowed ?? "unreadable"
                condition.broadcast()
            }
        }
        let deadline = Deadline(after: .seconds(10))
        let seen = condition.withLock { () -> String? in
            while shared.allowedCPUs == nil {
                guard condition.wait(until: deadline) else { return nil }
            }
            return shared.allowedCPUs
        }
        #expect(seen == callers)
    }

    @Test("a thread started beside a busy caller starts on another CPU, when the caller may use more than one")
    func startedThreadStartsAwayFromTheCaller() throws {
        let callers = try #require(allowedCPUs())
        let condition = Condition()
        let shared = Shared()
        // Busy for a while first, as a caller that starts work beside its own is; the scheduler's load figures for
        // its CPU then say so.
        let busy = Deadline(after: .milliseconds(20))
        while Deadline.now < busy {}
        let callersCPU = try #require(currentCPU())
        try DetachedThread.start {
            let cpu = currentCPU() ?? -1
            condition.withLock { shared.cpu = cpu }
        }
        // The caller stays busy on its CPU until the thread has run: a thread queued behind it would wait here.
        let deadline = Deadline(after: .seconds(10))
        var started: Int?
        while started == nil && Deadline.now < deadline {
            started = condition.withLock { shared.cpu }
        }
        let cpu = try #require(started)
        if callers.contains(where: { $0 == "," || $0 == "-" }) {
            #expect(cpu != callersCPU)
        }
    }

    @Test("the members of a group of threads start each on the next of the caller's CPUs, counting around")
    func groupMembersStartOnSuccessiveCPUs() throws {
        let cpus = try #require(allowedCPUs().flatMap(cpuNumbers))
        for member in 0...cpus.count {
            var checked = false
            // The caller may move to another CPU while it starts the thread; such an attempt tells nothing.
            for _ in 0..<20 where !checked {
                let condition = Condition()
                let shared = Shared()
                let before = try #require(currentCPU())
                try DetachedThread.start(member: member) {
                    let cpu = currentCPU() ?? -1
                    condition.withLock { shared.cpu = cpu }
                }
                let after = currentCPU()
                let deadline = Deadline(after: .seconds(10))
                var started: Int?
                while started == nil && Deadline.now < deadline {
                    started = condition.withLock { shared.cpu }
                }
                guard before == after, let position = cpus.firstIndex(of: before) else { continue }
                #expect(started == cpus[(position + member + 1) % cpus.count], "member \(member) of CPUs \(cpus)")
                checked = true
            }
            #expect(checked)
        }
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

/// The CPUs the calling thread may run on, as Linux lists them (`0-1`); nil when they cannot be read.
func allowedCPUs() -> String? {
    ownThreadFile("status")?.split(separator: "\n").first { $0.hasPrefix("Cpus_allowed_list:") }
        .map { String($0.dropFirst("Cpus_allowed_list:".count).filter { !$0.isWhitespace }) }
}

/// The CPU numbers of a Linux CPU list (`0-3,6`), in order; nil when it is not one.
func cpuNumbers(_ list: String) -> [Int]? {
    var numbers: [Int] = []
    for range in list.split(separator: ",") {
        let bounds = range.split(separator: "-").map { Int($0) }
        guard let first = bounds.first ?? nil, let last = bounds.last ?? nil, first <= last else { return nil }
        numbers += first...last
    }
    return numbers
}

/// The CPU the calling thread last ran on (the 39th field of its stat file), which is the one it runs on.
private func currentCPU() -> Int? {
    guard let stat = ownThreadFile("stat"), let end = stat.lastIndex(of: ")") else { return nil }
    let fields = stat[stat.index(after: end)...].split(separator: " ")
    return fields.count > 36 ? Int(fields[36]) : nil
}

/// The text of the calling thread's file `name` under /proc/thread-self.
private func ownThreadFile(_ name: String) -> String? {
    let descriptor = open("/proc/thread-self/\(name)", O_RDONLY)
    guard descriptor >= 0 else { return nil }
    defer { close(descriptor) }
    var buffer = [UInt8](repeating: 0, count: 8192)
    let count = read(descriptor, &buffer, buffer.count)
    return count > 0 ? String(decoding: buffer[..<count], as: UTF8.self) : nil
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
