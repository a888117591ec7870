import Foundation
import ReceiptModel
import Synchronization
import Testing

@testable import ReceiptLedger

@Suite("Group commit")
struct GroupCommitTests {
    let directory: TemporaryDirectory

    init() throws {
        directory = try TemporaryDirectory()
    }

    @Test("64 threads recording 40 transactions each are all acknowledged as created and all there after reopening")
    func concurrentWritersDurable() throws {
        let ledger = try SQLiteLedger(path: directory.path())
        let writers = Writers<Void>()
        for thread in 0..<64 {
            writers.start("thread \(thread)") { () throws(LedgerError) in
                for index in 0..<40 {
                    let transaction = Sample.minimal(id: "\(thread)-\(index)", customerID: "customer-\(thread)")
                    guard case .created = try ledger.record(transaction) else {
                        throw LedgerError(.storage, "transaction \(thread)-\(index) was not created")
                    }
                }
            }
        }
        #expect(writers.failures() == [:])
        ledger.close()
        let reopened = try SQLiteLedger(path: directory.path())
        #expect(try reopened.count() == 64 * 40)
        for thread in 0..<64 {
            let stored = try reopened.transactions(customerID: "customer-\(thread)", bundleID: Sample.bundleID)
            #expect(Set(stored.map(\.purchase.transactionID)) == Set((0..<40).map { "\(thread)-\($0)" }))
        }
    }

    @Test("64 threads recording 20 transactions each need fewer commits than writes")
    func fewerCommitsThanWrites() throws {
        let ledger = try SQLiteLedger(path: directory.path())
        let before = ledger.groupsCommitted
        let writers = Writers<Void>()
        for thread in 0..<64 {
            writers.start("thread \(thread)") { () throws(LedgerError) in
                for index in 0..<20 {
                    _ = try ledger.record(Sample.minimal(id: "\(thread)-\(index)"))
                }
            }
        }
        #expect(writers.failures() == [:])
        #expect(ledger.groupsCommitted - before < 64 * 20)
    }

    @Test("killed with SIGKILL while 64 threads write, the reopened ledger has every write that was acknowledged")
    func killedWhileWriting() async throws {
        let path = directory.path()
        try SQLiteLedger(path: path).close()
        // The child prints each acknowledged id, then dies the moment any thread has had 40 writes acknowledged.
        let child = await #expect(processExitsWith: .signal(SIGKILL), observing: [\.standardOutputContent]) {
            [path = path as String] in
            let ledger = try SQLiteLedger(path: path)
            for thread in 0..<64 {
                Thread.detachNewThread {
                    for index in 0... {
                        let id = "\(thread)-\(index)"
                        guard case .created = try? ledger.record(Sample.minimal(id: id)) else { continue }
                        let line = Array("\(id)\n".utf8)
                        _ = line.withUnsafeBytes { write(STDOUT_FILENO, $0.baseAddress, $0.count) }
                        if index == 40 { kill(getpid(), SIGKILL) }
                    }
                }
            }
            while true { sleep(1) }
        }
        let output = String(decoding: child?.standardOutputContent ?? [], as: UTF8.self)
        let acknowledged = Set(output.split(separator: "\n").map(String.init))
        #expect(acknowledged.count >= 40)
        let reopened = try SQLiteLedger(path: path)
        #expect(try reopened.integrityCheck() == ["ok"])
        let stored = Set(
            try reopened.transactions(customerID: "customer-a", bundleID: Sample.bundleID).map(\.purchase.transactionID)
        )
        #expect(acknowledged.subtracting(stored) == [])
        // At most the write each thread had in flight was stored without being acknowledged.
        #expect(stored.count - acknowledged.count <= 64)
    }

    /// Records `count` new transactions in `ledger`, each from a thread of its own, while another connection holds
    /// the file's lock: the first is being committed (waiting for the lock) when the others start. Releases the
    /// lock once all of them wait, and returns how many group commits they took.
    private func groupsCommitted(recordingBehindLock count: Int, in ledger: SQLiteLedger) throws -> Int {
        let before = ledger.groupsCommitted
        let lock = try WriteLock(path: directory.path())
        let writers = Writers<Void>()
        try writers.startCommitting("write 0", of: ledger) { () throws(LedgerError) in
            _ = try ledger.record(Sample.minimal(id: "0"))
        }
        for index in 1..<count {
            writers.start("write \(index)") { () throws(LedgerError) in
                _ = try ledger.record(Sample.minimal(id: "\(index)"))
            }
        }
        try waitUntil(ledger, hasWaiting: count)
        try lock.release()
        #expect(writers.failures() == [:])
        return ledger.groupsCommitted - before
    }

    @Test("writes that wait while another connection holds the file's lock are committed together, in one commit")
    func waitingWritesCommitTogether() throws {
        let ledger = try SQLiteLedger(path: directory.path())
        // The first write is committed alone, waiting for the lock; the 63 others queued behind it.
        #expect(try groupsCommitted(recordingBehindLock: 64, in: ledger) == 2)
        #expect(try ledger.count() == 64)
    }

    @Test("reads go on while a group waits for the file's lock, and see what was committed before it")
    func readsDoNotWaitForAGroup() throws {
        let ledger = try SQLiteLedger(path: directory.path())
        _ = try ledger.record(Sample.minimal(id: "committed"))
        let lock = try WriteLock(path: directory.path())
        let writers = Writers<LedgerRecordOutcome>()
        writers.start("pending") { () throws(LedgerError) in try ledger.record(Sample.minimal(id: "pending")) }
        try waitUntil(ledger, hasWaiting: 1)

        // The group is waiting for the lock (up to the busy timeout of 5 s) while these run.
        #expect(try ledger.transaction(id: "committed")?.purchase.transactionID == "committed")
        #expect(try ledger.transaction(id: "pending") == nil)
        #expect(try ledger.count() == 1)
        #expect(ledger.waitingWrites == 1)

        try lock.release()
        #expect(writers.failures() == [:])
        #expect(try ledger.transaction(id: "pending")?.purchase.transactionID == "pending")
    }

    @Test("a group holds at most the maximum group size of writes")
    func groupSizeBounded() throws {
        let ledger = try SQLiteLedger(path: directory.path(), maximumGroupSize: 8)
        // The first writer alone, then the 64 others in groups of 8.
        #expect(try groupsCommitted(recordingBehindLock: 65, in: ledger) == 1 + 64 / 8)
        #expect(try ledger.count() == 65)
    }

    @Test("writes that fail inside a group get their own errors, and the writes around them are committed")
    func failingWritesKeepNeighbours() throws {
        let ledger = try SQLiteLedger(path: directory.path())
        let stored = Sample.full(id: "stored")
        _ = try ledger.record(stored)
        let before = ledger.groupsCommitted
        let refund = ReceiptDate(millisecondsSince1970: 1_718_000_000_000)
        let conflicting = Sample.full(id: "stored", customerID: "customer-b")
        let lock = try WriteLock(path: directory.path())
        let writers = Writers<LedgerRecordOutcome>()
        // The first write takes its group alone; the group after it holds the others, in this order.
        try writers.startCommitting("first", of: ledger) { () throws(LedgerError) in
            try ledger.record(Sample.minimal(id: "first"))
        }
        try writers.startInLine("new", of: ledger) { () throws(LedgerError) in
            try ledger.record(Sample.full(id: "new"))
        }
        try writers.startInLine("conflict", of: ledger) { () throws(LedgerError) in
            try ledger.record(conflicting)
        }
        try writers.startInLine("unknown refund", of: ledger) { () throws(LedgerError) in
            try ledger.recordCancellation(transactionID: "unknown", at: refund)
        }
        try writers.startInLine("refund of new", of: ledger) { () throws(LedgerError) in
            try ledger.recordCancellation(transactionID: "new", at: refund)
        }
        try writers.startInLine("replay", of: ledger) { () throws(LedgerError) in
            try ledger.record(stored)
        }
        try lock.release()
        let results = writers.results()
        var refunded = Sample.full(id: "new")
        refunded.purchase.cancellationDate = refund
        #expect(try results["new"]?.get() == .created(Sample.full(id: "new")))
        #expect(results["conflict"]?.failure?.conflictingFields == ["customer_id"])
        #expect(results["unknown refund"]?.failure?.code == .notFound)
        #expect(try results["refund of new"]?.get() == .created(refunded))
        #expect(try results["replay"]?.get() == .alreadyRecorded(stored))
        #expect(ledger.groupsCommitted - before == 2)
        ledger.close()
        let reopened = try SQLiteLedger(path: directory.path())
        #expect(try reopened.transaction(id: "new") == refunded)
        #expect(try reopened.transaction(id: "stored") == stored)
        #expect(try reopened.count() == 3)
    }

    @Test("when a group's commit fails, none of its writes is acknowledged or stored")
    func failedCommitAcknowledgesNothing() async throws {
        let path = directory.path()
        let ledger = try SQLiteLedger(path: path)
        _ = try ledger.record(Sample.minimal(id: "before"))
        ledger.close()
        await #expect(processExitsWith: .success) { [path = path as String] in
            let ledger = try SQLiteLedger(path: path)
            let before = ledger.groupsCommitted
            let lock = try WriteLock(path: path)
            let writers = Writers<Void>()
            try writers.startCommitting("write 0", of: ledger) { () throws(LedgerError) in
                _ = try ledger.record(Sample.minimal(id: "0"))
            }
            for index in 1..<8 {
                writers.start("write \(index)") { () throws(LedgerError) in
                    _ = try ledger.record(Sample.minimal(id: "\(index)"))
                }
            }
            try waitUntil(ledger, hasWaiting: 8)
            // Nothing more can be written to any file: the first COMMIT to write to the WAL fails.
            limitFileSize(to: 0)
            try lock.release()
            let failures = writers.failures()
            #expect(failures.count == 8)
            for (name, error) in failures {
                #expect(error.code == .storage, "\(name)")
                #expect(error.message.contains("(COMMIT)"), "\(name): \(error.message)")
            }
            // The seven writes queued behind the first failed together, as one group.
            #expect(failures.values.filter { $0.message.contains("committing it with 6 other writes") }.count == 7)
            #expect(ledger.groupsCommitted == before)
        }
        let reopened = try SQLiteLedger(path: path)
        #expect(try reopened.count() == 1)
        #expect(try reopened.transaction(withAnyOf: (0..<8).map { "\($0)" }) == nil)
    }

    @Test("a write whose failure ends the group's transaction fails alone; the others are run again and committed")
    func lostTransactionRerun() async throws {
        let path = directory.path()
        try SQLiteLedger(path: path).close()
        await #expect(processExitsWith: .success) { [path = path as String] in
            let ledger = try SQLiteLedger(path: path)
            let lock = try WriteLock(path: path)
            let writers = Writers<LedgerRecordOutcome>()
            // 8 MiB does not fit SQLite's page cache, which spills to the WAL in the middle of the transaction:
            // past the file-size limit that write fails, and SQLite rolls back the whole transaction.
            let huge = Sample.minimal(id: "huge", customerID: String(repeating: "x", count: 8 << 20))
            try writers.startCommitting("first", of: ledger) { () throws(LedgerError) in
                try ledger.record(Sample.minimal(id: "first"))
            }
            try writers.startInLine("before", of: ledger) { () throws(LedgerError) in
                try ledger.record(Sample.full(id: "before"))
            }
            try writers.startInLine("huge", of: ledger) { () throws(LedgerError) in
                try ledger.record(huge)
            }
            try writers.startInLine("after", of: ledger) { () throws(LedgerError) in
                try ledger.record(Sample.full(id: "after"))
            }
            limitFileSize(to: 1 << 20)
            try lock.release()
            let results = writers.results()
            #expect(try results["before"]?.get() == .created(Sample.full(id: "before")))
            #expect(try results["after"]?.get() == .created(Sample.full(id: "after")))
            #expect(results["huge"]?.failure?.code == .storage)
        }
        let reopened = try SQLiteLedger(path: path)
        #expect(try reopened.transaction(id: "before") == Sample.full(id: "before"))
        #expect(try reopened.transaction(id: "after") == Sample.full(id: "after"))
        #expect(try reopened.transaction(id: "huge") == nil)
        #expect(try reopened.count() == 3)
    }
}

/// Makes every write of this process to a file fail past `bytes` (`EFBIG`, which SQLite reports as a disk I/O
/// error), as a full disk would; the `SIGXFSZ` that comes with it is ignored. For child processes of exit tests
/// only: the limit is the whole process's.
func limitFileSize(to bytes: Int) {
    signal(SIGXFSZ, SIG_IGN)
    var limit = rlimit()
    getrlimit(Int32(RLIMIT_FSIZE.rawValue), &limit)
    limit.rlim_cur = rlim_t(bytes)
    setrlimit(Int32(RLIMIT_FSIZE.rawValue), &limit)
}

/// Writes started on threads of their own, and what each returned.
final class Writers<Value: Sendable>: Sendable {
    private let outcomes = Mutex<[String: Result<Value, LedgerError>]>([:])
    private let running = DispatchGroup()

    /// Starts `write` on a thread of its own; its result is kept under `name`.
    func start(_ name: String, _ write: @escaping @Sendable () throws(LedgerError) -> Value) {
        running.enter()
        Thread.detachNewThread { [self] in
            let result = Result { () throws(LedgerError) in try write() }
            outcomes.withLock { $0[name] = result }
            running.leave()
        }
    }

    /// Starts `write` as ``start(_:_:)`` does, then waits until it is in line in `ledger`, behind the writes that
    /// were waiting already.
    func startInLine(
        _ name: String, of ledger: SQLiteLedger, _ write: @escaping @Sendable () throws(LedgerError) -> Value
    ) throws {
        let waiting = ledger.waitingWrites
        start(name, write)
        try waitUntil(ledger, hasWaiting: waiting + 1)
    }

    /// Starts `write` on a thread of its own, the first of `ledger`'s line, and waits until it is being committed
    /// (alone in its group, so waiting for the file's lock when another connection holds it).
    func startCommitting(
        _ name: String, of ledger: SQLiteLedger, _ write: @escaping @Sendable () throws(LedgerError) -> Value
    ) throws {
        start(name, write)
        let deadline = ContinuousClock.now + .seconds(10)
        while ledger.writesBeingCommitted == 0, ContinuousClock.now < deadline {
            usleep(200)
        }
        try #require(ledger.writesBeingCommitted == 1, "\(name) is not being committed alone")
    }

    /// Waits for every write started, then returns their results by name.
    func results() -> [String: Result<Value, LedgerError>] {
        running.wait()
        return outcomes.withLock { $0 }
    }

    /// Waits for every write started, then returns the errors of those that failed, by name.
    func failures() -> [String: LedgerError] {
        results().compactMapValues(\.failure)
    }
}

extension Result {
    /// The error, when this is a failure.
    var failure: Failure? {
        if case .failure(let error) = self { error } else { nil }
    }
}

/// The database file's write lock, held by a connection of its own (as another process would hold it) until
/// released: a ledger's writes queue up behind it.
final class WriteLock {
    private let database: SQLiteDatabase

    init(path: String) throws {
        database = try SQLiteDatabase(path: path)
        try database.execute("BEGIN IMMEDIATE", purpose: "test: taking the write lock")
    }

    func release() throws {
        try database.execute("ROLLBACK", purpose: "test: releasing the write lock")
        database.close()
    }
}

/// Waits until `count` writes of `ledger` are in line; fails the test when they are not within 10 seconds.
func waitUntil(_ ledger: SQLiteLedger, hasWaiting count: Int) throws {
    let deadline = ContinuousClock.now + .seconds(10)
    while ledger.waitingWrites < count, ContinuousClock.now < deadline {
        usleep(200)
    }
    try #require(ledger.waitingWrites >= count, "only \(ledger.waitingWrites) of \(count) writes are waiting")
}
