internal import Dispatch
internal import Synchronization

/// Writes submitted from many threads, committed in groups by one committing thread of the queue's own.
///
/// Every write goes to the end of one line. When the committer is idle, the first write wakes it; it then takes
/// the writes in line, at most ``maximumGroupSize`` of them, commits them together, hands each its own result,
/// and goes on with the writes that arrived meanwhile, until the line is empty. So one group is committed at a
/// time, groups are committed in the order their writes arrived, and no write is answered before the group
/// holding it has been committed or has failed. A writer leaves a completion and goes on, so that a thread serving
/// many clients never waits for a commit; one that must wait waits for its completion (``ResultHandoff``).
final class GroupCommitQueue<Write: Sendable, Outcome: Sendable>: Sendable {
    /// A write in line, how its group is committed, and who gets its result.
    private struct Pending: Sendable {
        let write: Write
        let commit: @Sendable ([Write]) -> [Result<Outcome, LedgerError>]
        let completion: @Sendable (Result<Outcome, LedgerError>) -> Void
    }

    /// The writes in line, in arrival order (the group being committed first), and whether the committer is at
    /// work (it commits them all before it stops).
    private let line = Mutex<(pending: [Pending], committing: Bool)>(([], false))
    /// Where the committer runs: one thread at a time, woken by the first write of an idle queue.
    private let committer = DispatchQueue(label: "receipt.ledger.group-commit")

    /// The most writes one group holds, so that a long line is committed in several groups and no writer waits
    /// for an unbounded commit. At least 1.
    let maximumGroupSize: Int

    /// A queue whose groups hold at most `maximumGroupSize` writes (at least 1).
    init(maximumGroupSize: Int) {
        self.maximumGroupSize = max(maximumGroupSize, 1)
    }

    /// How many writes are in line now, the group being committed included.
    var waitingWrites: Int {
        line.withLock { $0.pending.count }
    }

    /// How many writes the group being committed holds; 0 between groups.
    var writesBeingCommitted: Int {
        beingCommitted.load(ordering: .relaxed)
    }

    private let beingCommitted = Atomic<Int>(0)

    /// Puts `write` in line and returns at once; `completion` gets the write's own result once the group holding
    /// it is done, on the committer's thread.
    ///
    /// The committer calls `commit` with the writes of a group in arrival order, with no lock of the queue held;
    /// `commit` must return exactly one result per write, in the same order, and return only once the results are
    /// final (durable, for a ledger). Every write's `commit` is expected to do the same: a group is committed with
    /// its first write's. `completion` must not wait for another write of this queue, which only the committer it
    /// runs on could commit.
    func submit(
        _ write: Write, committingWith commit: @escaping @Sendable ([Write]) -> [Result<Outcome, LedgerError>],
        completion: @escaping @Sendable (Result<Outcome, LedgerError>) -> Void
    ) {
        let wakes = line.withLock { line in
            line.pending.append(Pending(write: write, commit: commit, completion: completion))
            defer { line.committing = true }
            return !line.committing
        }
        if wakes {
            committer.async { self.commitInLine() }
        }
    }

    /// The committer's work: groups of the writes in line, until there are none. Each group's writers get their
    /// results before the next group is taken, so that the writes their answers bring in join it.
    private func commitInLine() {
        while let group = nextGroup() {
            beingCommitted.store(group.count, ordering: .relaxed)
            let results = group[0].commit(group.map(\.write))
            beingCommitted.store(0, ordering: .relaxed)
            line.withLock { $0.pending.removeFirst(group.count) }
            for (position, member) in group.enumerated() {
                member.completion(
                    position < results.count
                        ? results[position]
                        : .failure(LedgerError(.storage, "a group commit returned \(results.count) results")))
            }
        }
    }

    /// The first writes in line, at most ``maximumGroupSize`` and at least one; nil, with the committer marked
    /// idle, when there are none.
    private func nextGroup() -> [Pending]? {
        line.withLock { line in
            line.committing = !line.pending.isEmpty
            return line.committing ? Array(line.pending.prefix(maximumGroupSize)) : nil
        }
    }
}
