internal import Dispatch
internal import Synchronization

/// Writes submitted from many threads, committed in groups (group commit, in its leader/follower form).
///
/// Every writer puts its write at the end of one line and waits. The writer that finds the line empty leads and
/// commits its own write alone, with the function it was given. When a group is done, its leader hands each of its
/// writers their own result and wakes them, and wakes the first writer left in line, who leads the next group:
/// the writes in line at that moment, its own first and at most ``maximumGroupSize`` of them, which arrived while
/// the previous group was committed. So one
/// group is committed at a time, groups are committed in the order their writes arrived, and no writer returns
/// before the group holding its write has been committed or has failed.
final class GroupCommitQueue<Write: Sendable, Outcome: Sendable>: Sendable {
    /// One writer in line: its write, its result once its group is done, and how it is woken.
    ///
    /// `@unchecked Sendable`: `result` is only read or written while the queue's lock is held.
    private final class Waiter: @unchecked Sendable {
        let write: Write
        let wakeup = DispatchSemaphore(value: 0)
        var result: Result<Outcome, LedgerError>?

        init(_ write: Write) {
            self.write = write
        }
    }

    /// The writers in line, in arrival order. The first one leads: it is committing its group, or has been woken
    /// to do so.
    private let line = Mutex<[Waiter]>([])

    /// The most writes one group holds, so that a long line is committed in several groups and no writer waits
    /// for an unbounded commit. At least 1.
    let maximumGroupSize: Int

    /// A queue whose groups hold at most `maximumGroupSize` writes (at least 1).
    init(maximumGroupSize: Int) {
        self.maximumGroupSize = max(maximumGroupSize, 1)
    }

    /// How many writes are in line now, the group being committed included.
    var waitingWrites: Int {
        line.withLock { $0.count }
    }

    /// Puts `write` in line, waits until the group holding it is done and returns its own result.
    ///
    /// When this writer leads, it calls `commit` with the writes of its group in arrival order (its own first), on
    /// its own thread and with no lock of the queue held; `commit` must return exactly one result per write, in the
    /// same order, and return only once the results are final (durable, for a ledger). Every writer's `commit` is
    /// expected to do the same.
    func submit(
        _ write: Write, committingWith commit: ([Write]) -> [Result<Outcome, LedgerError>]
    ) -> Result<Outcome, LedgerError> {
        let waiter = Waiter(write)
        let leads = line.withLock { line in
            line.append(waiter)
            return line.count == 1
        }
        // A writer that found the line empty commits its write alone; one woken first in line, once the previous
        // group is done, commits the writes in line at that moment.
        let group: [Waiter]
        if leads {
            group = [waiter]
        } else {
            waiter.wakeup.wait()
            if let result = line.withLock({ _ in waiter.result }) { return result }
            group = line.withLock { line in Array(line.prefix(maximumGroupSize)) }
        }
        let results = commit(group.map(\.write))
        precondition(results.count == group.count, "a group commit returned \(results.count) results")
        let next = line.withLock { line in
            for (member, result) in zip(group, results) {
                member.result = result
            }
            line.removeFirst(group.count)
            return line.first
        }
        // The next leader first, so that its commit overlaps with the answers of this group.
        next?.wakeup.signal()
        for member in group.dropFirst() {
            member.wakeup.signal()
        }
        return results[0]
    }
}
