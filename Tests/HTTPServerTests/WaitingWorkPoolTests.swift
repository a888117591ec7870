import Dispatch
import Glibc
import Synchronization
import Testing

@testable import HTTPServer

/// A flag set from any thread.
private final class Flag: Sendable {
    private let value = Mutex(false)

    var isSet: Bool { value.withLock { $0 } }

    func set() {
        value.withLock { $0 = true }
    }
}

/// Something a job holds; sets its flag when it is gone.
private final class Held: Sendable {
    let released: Flag

    init(_ released: Flag) {
        self.released = released
    }

    deinit {
        released.set()
    }
}

@Suite("The waiting handlers' thread pool")
struct WaitingWorkPoolTests {
    @Test("with one thread, 1000 jobs submitted while the first runs all run, in the order they were submitted")
    func jobsRunInOrder() throws {
        let pool = try WaitingWorkPool(threads: 1)
        let order = Mutex<[Int]>([])
        let first = DispatchSemaphore(value: 0)
        pool.submit { first.wait() }
        for index in 0..<1000 {
            pool.submit { order.withLock { $0.append(index) } }
        }
        first.signal()
        pool.finish()
        #expect(order.withLock { $0 } == Array(0..<1000))
    }

    @Test("a job and what it holds are released once it has run, while later jobs still wait")
    func jobReleasedAfterRunning() throws {
        let pool = try WaitingWorkPool(threads: 1)
        let released = Flag()
        let ran = DispatchSemaphore(value: 0)
        let gate = DispatchSemaphore(value: 0)
        do {
            let held = Held(released)
            pool.submit {
                _ = held
                ran.signal()
            }
        }
        pool.submit { gate.wait() }
        pool.submit {}
        ran.wait()
        // The second job blocks the only thread, the third waits in the queue.
        var releasedWhileOthersWait = false
        for _ in 0..<1000 where !releasedWhileOthersWait {
            releasedWhileOthersWait = released.isSet
            if !releasedWhileOthersWait { usleep(1000) }
        }
        #expect(releasedWhileOthersWait)
        gate.signal()
        pool.finish()
    }
}
