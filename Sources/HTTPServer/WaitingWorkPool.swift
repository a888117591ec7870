internal import Threads

/// Threads of their own for handlers that spend most of their time waiting (a durable write waiting for its
/// commit), so that the daemons' few threads keep serving other connections meanwhile, and so that as many such
/// handlers can wait at once as there are pool threads: writes that wait together can be committed together.
///
/// Jobs run in the order they were submitted, each on one of the pool's threads. The queue is not bounded by the
/// pool: each job belongs to a suspended connection, so there are never more jobs than connections.
///
/// `@unchecked Sendable`: `jobs`, `stopping` and `running` are only read or written while `condition` is locked.
final class WaitingWorkPool: @unchecked Sendable {
    private let condition = Condition()
    /// The jobs submitted, those from `nextJob` on still to run; a job taken is dropped at once (with what it
    /// holds, a request's body), and the taken slots are removed once they are half the array.
    private var jobs: [(@Sendable () -> Void)?] = []
    private var nextJob = 0
    private var stopping = false
    private var running: Int

    /// Starts `threads` threads (at least one), each waiting for jobs. Throws when the system cannot make them all,
    /// having ended the ones it made.
    init(threads: Int) throws(ThreadStartError) {
        running = max(threads, 1)
        for made in 0..<running {
            do {
                try DetachedThread.start(member: made) { [self] in work() }
            } catch {
                condition.withLock { running = made }
                finish()
                throw error
            }
        }
    }

    /// Runs `job` on one of the pool's threads, after the jobs submitted before it have started.
    func submit(_ job: @escaping @Sendable () -> Void) {
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    /// Lets every job submitted so far run to its end, then ends the threads; returns when they have ended. Jobs
    /// must not be submitted after it is called.
    func finish() {
        condition.lock()
        stopping = true
        condition.broadcast()
        while running > 0 {
            condition.wait()
        }
        condition.unlock()
    }

    private func work() {
        condition.lock()
        while true {
            if nextJob < jobs.count, let job = jobs[nextJob] {
                jobs[nextJob] = nil
                nextJob += 1
                if nextJob == jobs.count {
                    jobs.removeAll(keepingCapacity: true)
                    nextJob = 0
                } else if nextJob >= 32 && 2 * nextJob >= jobs.count {
                    jobs.removeFirst(nextJob)
                    nextJob = 0
                }
                condition.unlock()
                job()
                condition.lock()
            } else if stopping {
                break
            } else {
                condition.wait()
            }
        }
        running -= 1
        condition.broadcast()
        condition.unlock()
    }
}
